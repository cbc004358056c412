// gatehouse doctor against servers that answer badly or with hostile intent: every wait is bounded,
// redirects are followed by hand up to a cap, bodies are read only up to a cap, and nothing from
// the network reaches the terminal unescaped. (Against real proxies: test/suites/proxies/doctor.test.ts.)
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, runCli } from '../helpers/process.js';

const servers: Server[] = [];
const rawServers: NetServer[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

after(async () => {
  for (const server of rawServers) await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

describe('gatehouse doctor against hostile or broken servers', () => {
  before(() => assertBuilt());

  it('gives up on a server that never answers after the timeout, and exits 1', async () => {
    const url = await serve(() => undefined);
    const started = Date.now();
    const run = await runCli(['doctor', `${url}/`, '--timeout', '1'], { stdin: '', timeoutMs: 30_000 });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /^FAIL +gate: .*no whole answer within 1 s/m);
    assert.ok(Date.now() - started < 15_000, 'bounded by the timeout');
  });

  it('says the proxy cannot be reached when nothing listens', async () => {
    const url = await serve(() => undefined);
    const server = servers.pop();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    const run = await runCli(['doctor', `${url}/`], { stdin: '' });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL +gate: .*ECONNREFUSED.*Fix: /m);
    assert.match(run.stdout, /^skip +api: /m);
  });

  it('stops following redirects at the cap and calls it a loop, even when every Location is new', async () => {
    let requests = 0;
    const url = await serve((req, res) => {
      requests += 1;
      res.writeHead(302, { location: `/hop${requests}?from=${encodeURIComponent(req.url ?? '')}`.slice(0, 1000) });
      res.end();
    });
    const run = await runCli(['doctor', `${url}/`], { stdin: '' });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL +sign-in page: more than 10 redirects/m);
    assert.ok(requests < 40, `${requests} requests`);
  });

  it('calls a redirect back to a place already visited, or a Location that keeps growing, a loop', async () => {
    const back = await serve((req, res) => {
      res.writeHead(302, { location: req.url?.startsWith('/login') === true ? `/login?rd=${encodeURIComponent(req.url)}` : '/login' });
      res.end();
    });
    assert.match((await runCli(['doctor', `${back}/`], { stdin: '' })).stdout, /^FAIL +sign-in page: a redirect loop through http:\/\/127\.0\.0\.1:\d+\/login/m);
    const growing = await serve((req, res) => {
      res.writeHead(302, { location: `/x${(req.url ?? '').length}?rd=${encodeURIComponent(req.url ?? '')}${'a'.repeat(3000)}` });
      res.end();
    });
    assert.match((await runCli(['doctor', `${growing}/`], { stdin: '' })).stdout, /^FAIL +sign-in page: a redirect loop: .*-character Location/m);
  });

  it('reads a huge or endless answer only up to its cap', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const write = (): void => {
        while (res.write(chunk)) {
          if (res.destroyed) return;
        }
        res.once('drain', write);
      };
      write();
    });
    const run = await runCli(['doctor', `${url}/`], { stdin: '', timeoutMs: 30_000 });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL +api: an API request without a session reached the app \(200\)/m);
  });

  it('never prints a terminal escape or a control character it was sent', async () => {
    // node:http will not write such headers: a raw socket does. node's parser refuses C0 controls
    // in a header (the request fails); bytes 0x80-0xFF (0x9B is CSI) pass it and must be escaped.
    for (const [location, check] of [
      ['/\x1b[2J\x1b]0;pwned\x07/x', 'gate'],
      ['/\x9b2J\xe9/x', 'sign-in page'],
    ] as const) {
      const raw = createNetServer((socket) => {
        socket.on('error', () => undefined);
        socket.once('data', () => socket.end(`HTTP/1.1 302 Found\r\nLocation: ${location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, 'latin1'));
      });
      rawServers.push(raw);
      await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
      const run = await runCli(['doctor', `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`], { stdin: '' });
      assert.equal(run.code, 1);
      assert.match(run.stdout, new RegExp(`^FAIL +${check}: `, 'm'), run.stdout);
      assert.doesNotMatch(run.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    }
  });

  it('refuses a bad URL, timeout, --connect or credential input as a usage error (exit 2)', async () => {
    for (const [args, stdin] of [
      [['doctor'], ''],
      [['doctor', 'app.example'], ''],
      [['doctor', 'ftp://app.example/'], ''],
      [['doctor', 'http://user:pw@app.example/'], ''],
      [['doctor', 'http://app.example/', '--timeout', '0'], ''],
      [['doctor', 'http://app.example/', '--connect', 'nope'], ''],
      [['doctor', 'http://app.example/'], 'only-a-username\n'],
      [['doctor', 'http://app.example/'], 'alice\npw\nnot-a-code\n'],
      [['doctor', 'http://app.example/'], 'alice\npw\n123456\nextra\n'],
    ] as const) {
      const run = await runCli([...args], { stdin });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
    }
  });

  it('refuses a bad further URL, --paths line or --token-file before any request, naming it (exit 2)', async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests += 1;
      res.writeHead(401);
      res.end();
    });
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-doctor-'));
    try {
      await writeFile(join(dir, 'paths.txt'), '# others\n/ok\nnot-a-path\n');
      await writeFile(join(dir, 'token.txt'), 'gh_not-a-whole-token\n');
      await writeFile(join(dir, 'token-ok.txt'), `gh_${'a'.repeat(43)}\n`);
      await writeFile(join(dir, 'many.txt'), '/x\n'.repeat(100));
      for (const [args, stdin, message] of [
        [['doctor', `${url}/`, 'ws'], '', /URL 2: "ws" is neither a path starting with \/ nor an http or https URL/],
        [['doctor', `${url}/`, '/ok', '//elsewhere.example/'], '', /URL 3: "\/\/elsewhere\.example\/"/],
        [['doctor', `${url}/`, '--paths', join(dir, 'paths.txt')], '', /--paths line 3: "not-a-path"/],
        [['doctor', `${url}/`, '--paths', join(dir, 'missing.txt')], '', /--paths ".*missing\.txt"/],
        [['doctor', `${url}/`, '--paths', join(dir, 'many.txt')], '', /at most 100 URLs in all \(got 101\)/],
        [['doctor', `${url}/`, '--token-file', join(dir, 'token.txt')], '', /--token-file ".*token\.txt" must hold one machine token/],
        [['doctor', `${url}/`, '--token-file', join(dir, 'token-ok.txt')], 'alice\npw\n', /either a sign-in on standard input or --token-file, not both/],
      ] as const) {
        const run = await runCli([...args], { stdin });
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
        assert.match(run.stderr, message);
        assert.doesNotMatch(run.stderr, /not-a-whole-token/, 'a token file\'s content is never shown');
        assert.equal(run.stdout, '');
      }
      assert.equal(requests, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ends every report with the summary and the line on what the probe cannot see, and counts skipped checks as skipped', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const run = await runCli(['doctor', `${url}/`], { stdin: '' });
    assert.equal(run.code, 1);
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines.at(-2) ?? '', /^\d+ of 15 checks passed; \d+ failed, \d+ skipped \(not made: each line says why\)\.$/);
    assert.match(lines.at(-1) ?? '', /^Not seen: the probe shows only what reaches its own location\. /);
    assert.doesNotMatch(run.stdout, /did not pass/);
  });

  it('prints its help with every check named', async () => {
    const run = await runCli(['doctor', '--help']);
    assert.equal(run.code, 0);
    for (const check of ['gate', 'api', 'sign-in page', 'return URL', 'client address', 'cookie', 'signed in', 'probe', 'forged headers', 'jwt cookie', 'forged URI', 'public URL', 'account API', 'long URL', 'sign-out', 'behind the gate']) assert.match(run.stdout, new RegExp(`^  ${check} `, 'm'));
  });
});
