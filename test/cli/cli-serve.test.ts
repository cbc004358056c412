// `gatehouse serve` as a process: its logs, its flags, its signals and its data directory.
// Each test starts the built dist/cli.js on port 0 and parses the listening line.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, CLI_SECRET, CLIENT_SETTINGS, freePort, httpCall, jsonLines, killAllChildren, removeTempDirs, runCli, runToExit, startServe, tempDir, type ServeProcess } from '../helpers/process.js';

const PASSWORD = 'frank-password-Zq8';
const WRONG_PASSWORD = 'wrong-password-Xy7';

async function register(server: ServeProcess, options: { prefix?: string; headers?: Record<string, string> } = {}): Promise<{ token: string; setCookie: string }> {
  const res = await httpCall(server.port, {
    method: 'POST',
    path: `${options.prefix ?? ''}/api/auth/register`,
    body: { username: 'frank', password: PASSWORD, client: CLIENT_SETTINGS, level: 10 },
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  });
  assert.equal(res.status, 200, res.text);
  assert.ok(res.setCookie !== undefined && res.cookieToken !== undefined && res.cookieToken !== '', 'register sets the jwt cookie');
  return { token: res.cookieToken, setCookie: res.setCookie };
}

function failLogin(server: ServeProcess, headers: Record<string, string> = {}): Promise<unknown> {
  return httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'frank', password: WRONG_PASSWORD }, headers }).then((res) => {
    assert.equal(res.status, 401, res.text);
  });
}

function allOutput(server: ServeProcess): string {
  return `${server.stdout()}\n${server.stderr()}`;
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('gatehouse serve', { concurrency: 2 }, () => {
  before(() => assertBuilt());
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('writes one JSON object per line, request lines carrying time, method, path without the query, status, durationMs and address', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    const { token } = await register(server);
    const verify = await httpCall(server.port, { path: `/api/auth/verify?token=${token}&x=QUERYSECRET123` });
    assert.equal(verify.status, 200, verify.text);
    assert.equal((await httpCall(server.port, { path: '/api/auth/verify?token=QUERYSECRET456' })).status, 401);
    assert.equal((await server.stop()).code, 0);

    const lines = jsonLines(server.stdout());
    for (const line of lines) {
      assert.equal(typeof line['time'], 'string');
      assert.ok(!Number.isNaN(Date.parse(String(line['time']))), `time is a date: ${String(line['time'])}`);
      assert.equal(typeof line['level'], 'string');
      assert.equal(typeof line['msg'], 'string');
    }
    const requests = lines.filter((line) => line['msg'] === 'request');
    assert.ok(requests.length >= 3, `expected a request line per request, got ${requests.length}`);
    for (const line of requests) {
      assert.equal(typeof line['method'], 'string');
      assert.equal(typeof line['path'], 'string');
      assert.ok(!String(line['path']).includes('?'), `path carries no query: ${String(line['path'])}`);
      assert.equal(typeof line['status'], 'number');
      assert.equal(typeof line['durationMs'], 'number');
      assert.ok(Number(line['durationMs']) >= 0);
      assert.equal(line['address'], '127.0.0.1');
    }
    const verifyLines = requests.filter((line) => line['path'] === '/api/auth/verify');
    assert.deepEqual(verifyLines.map((line) => [line['method'], line['status']]), [['GET', 200], ['GET', 401]]);
    const registerLine = requests.find((line) => line['path'] === '/api/auth/register');
    assert.equal(registerLine?.['method'], 'POST');
    assert.equal(registerLine['status'], 200);
    const output = allOutput(server);
    for (const secret of [token, 'QUERYSECRET123', 'QUERYSECRET456', PASSWORD]) assert.ok(!output.includes(secret), `${secret.slice(0, 12)}… must not appear in the output`);
  });

  it('logs a failed login with event login_failed, address and username (address first), and never a password, hash, token or secret', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    const { token } = await register(server);
    await failLogin(server);
    const ok = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'frank', password: PASSWORD } });
    assert.equal(ok.status, 200);
    assert.equal((await httpCall(server.port, { path: '/api/auth/verify', token: ok.cookieToken ?? '' })).status, 200);
    assert.equal((await server.stop()).code, 0);

    const rawFailure = server.stdoutLines.concat(server.stderr().split('\n')).find((line) => line.includes('login_failed'));
    assert.ok(rawFailure !== undefined, `a login_failed line is logged:\n${allOutput(server)}`);
    const failure = JSON.parse(rawFailure) as Record<string, unknown>;
    assert.equal(failure['msg'], 'login failed');
    assert.equal(failure['event'], 'login_failed');
    assert.equal(failure['address'], '127.0.0.1');
    assert.equal(failure['username'], 'frank');
    assert.equal(failure['level'], 'warn');
    assert.ok(rawFailure.indexOf('"address"') < rawFailure.indexOf('"username"'), `address comes before username: ${rawFailure}`);

    const output = allOutput(server);
    for (const secret of [PASSWORD, WRONG_PASSWORD, token, ok.cookieToken ?? '-', '$scrypt$', CLI_SECRET]) {
      assert.ok(!output.includes(secret), `${secret.slice(0, 12)}… must not appear in the output`);
    }
  });

  it('--log-format pretty writes human lines, not JSON', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir, '--log-format', 'pretty']);
    assert.equal((await httpCall(server.port, { path: '/api/auth/verify?token=PRETTYSECRET' })).status, 200);
    const line = await server.waitForLine((text) => text.includes('/api/auth/verify'));
    assert.equal((await server.stop()).code, 0);
    assert.match(line, /request/);
    assert.match(line, /GET/);
    assert.match(line, /200/);
    assert.ok(!line.includes('PRETTYSECRET'));
    const lines = server.stdoutLines.filter((text) => text !== '');
    assert.ok(lines.length >= 2);
    for (const text of lines) {
      assert.throws(() => JSON.parse(text) as unknown, `a pretty line is not JSON: ${text}`);
      assert.match(text, /^\d{4}-\d\d-\d\dT\S+ +(DEBUG|INFO|WARN|ERROR) /, `a pretty line starts with a time and a level: ${text}`);
    }
    assert.ok(lines.some((text) => /stopped/.test(text)));
  });

  it('--log-level warn drops request lines but keeps failed logins', async () => {
    const dataDir = await tempDir();
    // At warn only the one listening line is info; a known port keeps the helper independent of it.
    const port = await freePort();
    const server = await startServe(['--port', String(port), '--data-dir', dataDir, '--log-level', 'warn'], { knownPort: port });
    await register(server);
    await failLogin(server);
    await server.waitForLine((text) => text.includes('login_failed'));
    assert.equal((await httpCall(server.port, { path: '/api/auth/verify' })).status, 401);
    assert.equal((await server.stop()).code, 0);
    const lines = jsonLines(server.stdout());
    assert.ok(lines.some((line) => line['event'] === 'login_failed'));
    assert.deepEqual(lines.filter((line) => line['msg'] === 'request'), [], 'no request lines at warn');
    const infoLines = lines.filter((line) => !['warn', 'error'].includes(String(line['level'])));
    assert.deepEqual(infoLines.map((line) => line['msg']), [`listening on http://127.0.0.1:${port}`], 'only the listening line below warn');
  });

  it('--base-uri /flood serves the API under /flood only, with the cookie Path /flood, and /healthz stays at the root', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir, '--base-uri', '/flood']);
    try {
      assert.equal((await httpCall(server.port, { method: 'POST', path: '/api/auth/register', body: { username: 'x', password: 'y', client: CLIENT_SETTINGS, level: 10 } })).status, 404);
      const { token, setCookie } = await register(server, { prefix: '/flood' });
      assert.match(setCookie, /;\s*Path=\/flood(;|$)/);
      const verify = await httpCall(server.port, { path: '/flood/api/auth/verify', token });
      assert.equal(verify.status, 200, verify.text);
      assert.equal((verify.json as { username?: unknown }).username, 'frank');
      assert.equal((await httpCall(server.port, { path: '/api/auth/verify', token })).status, 404);
      const login = await httpCall(server.port, { method: 'POST', path: '/flood/api/auth/authenticate', body: { username: 'frank', password: PASSWORD } });
      assert.equal(login.status, 200);
      assert.match(login.setCookie ?? '', /;\s*Path=\/flood(;|$)/);
      const health = await httpCall(server.port, { path: '/healthz' });
      assert.equal(health.status, 200);
      assert.deepEqual(health.json, { status: 'ok' });
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  it('GET /healthz answers 200 {"status":"ok"} without credentials once users exist', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    try {
      await register(server);
      assert.equal((await httpCall(server.port, { path: '/api/auth/verify' })).status, 401, 'the API does need credentials');
      const health = await httpCall(server.port, { path: '/healthz' });
      assert.equal(health.status, 200);
      assert.deepEqual(health.json, { status: 'ok' });
      assert.match(String(health.headers['content-type']), /application\/json/);
    } finally {
      await server.stop();
    }
  });

  it('--auth none answers verify as the built-in _config administrator, and register and /users are 404', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir, '--auth', 'none']);
    try {
      const verify = await httpCall(server.port, { path: '/api/auth/verify' });
      assert.equal(verify.status, 200);
      assert.deepEqual(verify.json, { initialUser: false, username: '_config', level: 10, configs: { authMethod: 'none', pollInterval: 2000 } });
      assert.equal((await httpCall(server.port, { method: 'POST', path: '/api/auth/register', body: { username: 'x', password: 'y', client: CLIENT_SETTINGS, level: 10 } })).status, 404);
      assert.equal((await httpCall(server.port, { path: '/api/auth/users' })).status, 404);
      assert.equal((await httpCall(server.port, { method: 'PATCH', path: '/api/auth/users/x', body: { level: 5 } })).status, 404);
      assert.equal((await httpCall(server.port, { method: 'DELETE', path: '/api/auth/users/x' })).status, 404);
    } finally {
      await server.stop();
    }
  });

  it('--auth none on 0.0.0.0 without --trust-proxy exits 1 saying why', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--auth', 'none', '--host', '0.0.0.0'], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assert.equal(result.code, 1, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    assert.match(result.stderr, /--trust-proxy/);
    assert.match(result.stderr, /none/);
    assert.doesNotMatch(result.stdout, /listening on/);
  });

  it('--auth none on 0.0.0.0 with --trust-proxy 127.0.0.1 starts', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir, '--auth', 'none', '--host', '0.0.0.0', '--trust-proxy', '127.0.0.1']);
    try {
      assert.match(server.url, /^http:\/\/0\.0\.0\.0:\d+$/);
      const verify = await httpCall(server.port, { path: '/api/auth/verify' });
      assert.equal(verify.status, 200);
      assert.equal((verify.json as { username?: unknown }).username, '_config');
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  it('--trust-proxy 127.0.0.1 believes X-Forwarded-For for the logged address and X-Forwarded-Proto: https for Secure', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir, '--trust-proxy', '127.0.0.1']);
    const { setCookie } = await register(server, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.9' } });
    assert.match(setCookie, /;\s*Secure(;|$)/);
    await failLogin(server, { 'x-forwarded-for': '203.0.113.7' });
    const plain = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'frank', password: PASSWORD } });
    assert.doesNotMatch(plain.setCookie ?? '', /Secure/, 'no Secure without X-Forwarded-Proto: https');
    assert.equal((await server.stop()).code, 0);
    const lines = jsonLines(server.stdout());
    const failure = lines.find((line) => line['event'] === 'login_failed');
    assert.equal(failure?.['address'], '203.0.113.7');
    const requests = lines.filter((line) => line['msg'] === 'request');
    assert.deepEqual(requests.map((line) => line['address']), ['198.51.100.9', '203.0.113.7', '127.0.0.1']);
  });

  it('without --trust-proxy, X-Forwarded-For and X-Forwarded-Proto are ignored', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    const { setCookie } = await register(server, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.9' } });
    assert.doesNotMatch(setCookie, /Secure/);
    await failLogin(server, { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' });
    assert.equal((await server.stop()).code, 0);
    const lines = jsonLines(server.stdout());
    assert.equal(lines.find((line) => line['event'] === 'login_failed')?.['address'], '127.0.0.1');
    for (const line of lines.filter((entry) => entry['msg'] === 'request')) assert.equal(line['address'], '127.0.0.1');
    assert.ok(!allOutput(server).includes('203.0.113.7') && !allOutput(server).includes('198.51.100.9'));
  });

  it('--secure-cookie adds Secure to the session cookie', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir, '--secure-cookie']);
    try {
      const { setCookie } = await register(server);
      assert.match(setCookie, /;\s*Secure(;|$)/);
      const login = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'frank', password: PASSWORD } });
      assert.match(login.setCookie ?? '', /;\s*Secure(;|$)/);
    } finally {
      await server.stop();
    }
  });

  it('SIGTERM stops the service with exit 0, a "stopped" log line and the lock released', async () => {
    const dataDir = await tempDir();
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    assert.ok(existsSync(join(dataDir, 'gatehouse.lock')), 'the lock is held while running');
    assert.equal((await httpCall(server.port, { path: '/healthz' })).status, 200);
    const exit = await server.stop('SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(jsonLines(server.stdout()).some((line) => line['msg'] === 'stopped'), `a stopped line:\n${server.stdout()}`);
    assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), false, 'the lock is released');
    assert.equal(server.stderr(), '');
  });

  it('SIGTERM sent the moment the listening line appears still stops the service cleanly with exit 0', async () => {
    // A supervisor may stop the service as soon as it announces itself: by then the signal
    // handlers must be in place, or the process dies by the signal (no "stopped", lock left).
    for (let attempt = 1; attempt <= 8; attempt++) {
      const dataDir = await tempDir();
      const server = await startServe(['--port', '0', '--data-dir', dataDir]);
      const exit = await server.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, `attempt ${attempt}: serve died by SIGTERM instead of stopping: its handlers were not installed when it printed the listening line`);
      assert.ok(server.stdoutLines.some((line) => line.includes('"stopped"')), `attempt ${attempt}: a stopped line`);
      assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), false, `attempt ${attempt}: the lock is released`);
    }
  });

  it('tightens an existing data directory with mode 0755 to 0700, logs a warning, and creates its files 0600', async () => {
    const dataDir = await tempDir();
    chmodSync(dataDir, 0o755);
    const server = await startServe(['--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: undefined } });
    try {
      assert.equal(modeOf(dataDir), 0o700);
      const warning = jsonLines(server.stdout()).find((line) => /tightened/i.test(String(line['msg'])));
      assert.ok(warning !== undefined, `a warning about tightening:\n${server.stdout()}`);
      assert.equal(warning['level'], 'warn');
      await register(server);
      const names = readdirSync(dataDir).sort();
      for (const expected of ['gatehouse.lock', 'secret', 'users.json']) assert.ok(names.includes(expected), `${expected} in ${names.join(', ')}`);
      for (const name of names) assert.equal(modeOf(join(dataDir, name)), 0o600, `${name} should be 0600`);
    } finally {
      await server.stop();
    }
  });

  it('creates a data directory that does not exist with mode 0700 and no warning', async () => {
    const dataDir = join(await tempDir(), 'fresh', 'data');
    const server = await startServe(['--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: undefined } });
    try {
      assert.equal(modeOf(dataDir), 0o700);
      assert.equal(modeOf(join(dataDir, 'secret')), 0o600);
    } finally {
      await server.stop();
    }
    assert.ok(!jsonLines(server.stdout()).some((line) => line['level'] === 'warn'), server.stdout());
  });
});

describe('gatehouse serve on a port that is taken', () => {
  after(removeTempDirs);
  it('exits 1 saying the port is in use and how to pick another', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    assert.ok(address !== null && typeof address === 'object');
    try {
      const dir = await tempDir();
      const result = await runToExit({ args: ['serve', '--host', '127.0.0.1', '--port', String(address.port), '--data-dir', dir] });
      assert.equal(result.didListen, false);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`127\\.0\\.0\\.1 port ${address.port} is already in use .*--port or GATEHOUSE_PORT`));
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
