// deploy/compose.yml brought up by podman-compose as a user would, with only the image names
// (local stand-ins: this machine cannot pull) and the published port (a free one) replaced. The
// Gatehouse image is built from the repository's Dockerfile by compose. Then, through Caddy: the
// sign-in redirect, the HOST_NOT_ALLOWED command run as printed in a new container, the app
// reached signed in with the gate's headers only, the client's address believed from Caddy on the
// compose network (and a forged X-Forwarded-For not), and `gatehouse doctor` passing every check.
// Needs root, podman and podman-compose; it fails (never skips) without them: CI installs them.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { assertBuilt, CLI_PATH, childEnv, freePort, httpCall, removeTempDirs, REPO_ROOT, tempDir, type CallResult } from '../../helpers/process.js';

const run = promisify(execFile);
const DEPLOY = join(REPO_ROOT, 'deploy');
const PROJECT = `gatehouse-compose-test-${process.pid}`;
const STAND_IN = `localhost/${PROJECT}-standin`;
const GATEHOUSE_IMAGE = `localhost/${PROJECT}-gatehouse:latest`;
/** The rendered copy sits beside compose.yml: its relative paths (build: .., ./compose.Caddyfile) must mean the same. */
const RENDERED = join(DEPLOY, `.${PROJECT}.yml`);
const PASSWORD = 'compose-admin-password-1';

let port = 0;
let env: NodeJS.ProcessEnv = {};

async function compose(args: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  const command = ['-p', PROJECT, '-f', RENDERED, ...args];
  if (options.input !== undefined) {
    const result = spawnSync('podman-compose', command, { cwd: DEPLOY, env, input: options.input, encoding: 'utf8', timeout: options.timeoutMs ?? 120_000 });
    if (result.status !== 0) throw new Error(`podman-compose ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
    return { stdout: result.stdout, stderr: result.stderr };
  }
  try {
    return await run('podman-compose', command, { cwd: DEPLOY, env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`podman-compose ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
  }
}

async function podman(args: readonly string[]): Promise<string> {
  return (await run('podman', args, { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
}

const call = (options: Parameters<typeof httpCall>[1]): Promise<CallResult> => httpCall(port, options);

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} within ${timeoutMs} ms`);
}

const gatehouseLog = async (): Promise<string> => {
  const { stdout, stderr } = await run('podman', ['logs', `${PROJECT}_gatehouse_1`], { env, maxBuffer: 16 * 1024 * 1024 });
  return stdout + stderr;
};

describe('deploy/compose.yml under podman-compose', () => {
  before(async () => {
    if (process.getuid?.() !== 0) throw new Error('the containers suite needs root (rootful podman): run it as root, as CI does');
    for (const program of ['podman', 'podman-compose']) {
      if (spawnSync(program, ['--version']).status !== 0) throw new Error(`${program} is not installed: .ci/run installs it (apt-get install podman podman-compose)`);
    }
    assertBuilt();
    // This sandbox has no CAP_SYS_RESOURCE, so podman's default RLIMIT_NOFILE (above the hard
    // limit here) cannot be set in a container: ask for the limits this process already has.
    const limits = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
    const dir = await tempDir('gatehouse-containers-');
    const containersConf = join(dir, 'containers.conf');
    await writeFile(containersConf, `[containers]\ndefault_ulimits = ["nofile=${limits}:${limits}", "nproc=4096:4096"]\n`);
    env = { ...process.env, CONTAINERS_CONF: containersConf };

    const built = spawnSync('sh', [join(REPO_ROOT, 'test/suites/containers/stand-in-images.sh'), STAND_IN], { env, encoding: 'utf8', timeout: 120_000 });
    if (built.status !== 0) throw new Error(`building the stand-in images failed:\n${built.stdout}\n${built.stderr}`);
    const probe = spawnSync('podman', ['run', '--rm', `${STAND_IN}-node`, 'node', '-e', 'console.log("ok")'], { env, encoding: 'utf8', timeout: 60_000 });
    if (probe.stdout.trim() !== 'ok') {
      throw new Error(`podman cannot run a container here: ${probe.stderr.trim()}\n(for "cgroups in hybrid mode not supported", run test/suites/containers/prepare-host.sh as root first, as .ci/run does)`);
    }

    // compose.yml as a user runs it; only the image names and the published port differ.
    port = await freePort();
    const original = readFileSync(join(DEPLOY, 'compose.yml'), 'utf8');
    const replacements: Array<[string, string]> = [
      ['image: gatehouse\n', `image: ${GATEHOUSE_IMAGE}\n`],
      ['image: caddy:2-alpine', `image: ${STAND_IN}-caddy`],
      ['image: traefik/whoami', `image: ${STAND_IN}-whoami`],
      ['"8080:80"', `"${port}:80"`],
    ];
    let rendered = original;
    for (const [from, to] of replacements) {
      assert.ok(rendered.includes(from), `deploy/compose.yml no longer contains ${JSON.stringify(from)}: update this test`);
      rendered = rendered.split(from).join(to);
    }
    await writeFile(RENDERED, rendered);
    // The Dockerfile's base image is a build argument for this alone.
    await compose(['build', '--build-arg', `NODE_IMAGE=${STAND_IN}-node`], { timeoutMs: 600_000 });
  });

  after(async () => {
    if (existsSync(RENDERED)) {
      await compose(['down', '-v'], { timeoutMs: 120_000 }).catch((error: unknown) => console.error(String(error)));
      await rm(RENDERED, { force: true });
    }
    for (const image of [GATEHOUSE_IMAGE, `${STAND_IN}-node`, `${STAND_IN}-caddy`, `${STAND_IN}-whoami`]) {
      spawnSync('podman', ['rmi', '-f', image], { env });
    }
    spawnSync('podman', ['image', 'prune', '-f'], { env });
    // podman-compose 1.0.3 `down` leaves the networks it made.
    spawnSync('podman', ['network', 'rm', '-f', `${PROJECT}_gatehouse`, `${PROJECT}_apps`], { env });
    await removeTempDirs();
  });

  it('comes up as written: Caddy answers, a browser without a session is sent to the sign-in page, an API client gets 401', async () => {
    await compose(['up', '-d'], { timeoutMs: 180_000 });
    await waitFor('Caddy and Gatehouse did not answer', async () => (await call({ path: '/' })).status === 401);
    const page = await call({ path: '/some/page', headers: { accept: 'text/html' } });
    assert.equal(page.status, 302, page.text);
    assert.match(String(page.headers.location), /^\/login\?/);
    const login = await call({ path: String(page.headers.location), headers: { accept: 'text/html' } });
    assert.equal(login.status, 200);
    assert.match(String(login.headers['content-type']), /^text\/html/);
    assert.match(login.text, /Gatehouse|Sign in/i);
  });

  it('the HOST_NOT_ALLOWED command, run as printed in a new container on the same volume, makes the first administrator', async () => {
    const refused = await call({ method: 'POST', path: '/api/auth/register', headers: { host: 'gatehouse.example.org' }, body: { username: 'someone', password: PASSWORD, level: 'ADMINISTRATOR' } });
    assert.equal(refused.status, 403, refused.text);
    const message = String((refused.json as { message?: unknown }).message);
    const match = /e\.g\. docker compose run --rm SERVICE (.+)\)$/.exec(message);
    assert.ok(match?.[1] !== undefined, `the message says how to run it in a new container: ${message}`);
    const line = match[1];
    assert.equal(line, '/usr/local/bin/node /app/dist/cli.js users add admin --level ADMINISTRATOR --data-dir /data');

    await compose(['stop', 'gatehouse']);
    // podman-compose 1.0.3 `run` would start the service itself again without --no-deps (docker compose does not).
    await compose(['run', '--rm', '-T', '--no-deps', 'gatehouse', ...line.split(' ')], { input: `${PASSWORD}\n` });
    await compose(['start', 'gatehouse']);
    try {
      await waitFor('Gatehouse did not come back', async () => (await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } })).status === 200);
    } catch (error) {
      // What the restarted container said is the only way to tell a slow start from a refused one.
      const log = await gatehouseLog().catch((failed: unknown) => `(no log: ${String(failed)})`);
      throw new Error(`${error instanceof Error ? error.message : String(error)}\ngatehouse container log:\n${log.slice(-4000)}`);
    }
  });

  it('signed in, the app gets the gate\'s Remote-User and neither the jwt cookie nor forged headers', async () => {
    const login = await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } });
    assert.equal(login.status, 200, login.text);
    const token = login.cookieToken ?? '';
    const app = await call({ path: '/hello', token, headers: { 'remote-user': 'mallory', 'remote-level': 'ADMINISTRATOR' } });
    assert.equal(app.status, 200, app.text);
    assert.match(app.text, /^GET \/hello HTTP\/1\.1$/m, 'whoami answered');
    assert.match(app.text, /^Remote-User: admin$/m);
    assert.doesNotMatch(app.text, /mallory/);
    assert.ok(!app.text.includes(token), 'the app never sees the session token');
  });

  it('trust-proxy works on the compose network: Gatehouse logs the client address Caddy saw, not Caddy\'s, and not a forged X-Forwarded-For', async () => {
    const app = await call({ path: '/whoami-address', token: (await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } })).cookieToken ?? '' });
    const clientAddress = /^X-Forwarded-For: (\S+)$/m.exec(app.text)?.[1];
    assert.ok(clientAddress !== undefined, `the app saw X-Forwarded-For: ${app.text}`);
    const caddyAddresses = (await podman(['inspect', `${PROJECT}_caddy_1`, '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}'])).trim().split(/\s+/);
    assert.ok(!caddyAddresses.includes(clientAddress), `${clientAddress} is the client, not Caddy (${caddyAddresses.join(', ')})`);

    const wrong = await call({ method: 'POST', path: '/api/auth/authenticate', headers: { 'x-forwarded-for': '203.0.113.9' }, body: { username: 'admin', password: 'not the password' } });
    assert.equal(wrong.status, 401);
    let failed: Record<string, unknown> | undefined;
    await waitFor('no login_failed line in the Gatehouse log', async () => {
      const lines = (await gatehouseLog()).split('\n').filter((text) => text.includes('"login_failed"'));
      failed = lines.length > 0 ? (JSON.parse(lines[lines.length - 1] ?? '') as Record<string, unknown>) : undefined;
      return failed !== undefined;
    });
    assert.equal(failed?.['address'], clientAddress, 'Gatehouse believes Caddy, and Caddy does not pass on what the client claims');
  });

  it('gatehouse doctor passes every check through Caddy', async () => {
    const result = spawnSync(process.execPath, [CLI_PATH, 'doctor', `http://127.0.0.1:${port}/`], { env: childEnv(), input: `admin\n${PASSWORD}\n`, encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /Every check passed/);
  });
});
