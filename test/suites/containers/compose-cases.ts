// deploy/compose.yml brought up by a compose program as a user would, with only the image names
// (local stand-ins: this machine cannot pull), the published ports (free ones, and the public URL
// naming Gatehouse's) and, on Docker, the build's network replaced. The Gatehouse image is built from the repository's Dockerfile by
// compose. Then, through Caddy: the sign-in redirect, the HOST_NOT_ALLOWED command run as printed
// in a new container, the app reached signed in with the gate's headers only, the client's
// address believed from Caddy on the compose network (and a forged X-Forwarded-For not), and
// `gatehouse doctor` passing every check.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CLI_PATH, childEnv, freePort, httpCall, REPO_ROOT, type CallResult } from '../../helpers/process.js';
import type { Engine } from './engines.js';

const run = promisify(execFile);
const DEPLOY = join(REPO_ROOT, 'deploy');
const PASSWORD = 'compose-admin-password-1';

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} within ${timeoutMs} ms`);
}

/**
 * The compose cases on `engine()` (known once the file's before() has started it; `composeName`
 * titles them), with the stand-in images `standIn` names. `project` names the compose project.
 * Returns the image compose builds, for the file's after() to remove.
 */
export function describeCompose(composeName: string, engine: () => Engine, standIn: string, project: string): string {
  const gatehouseImage = `localhost/${project}-gatehouse:latest`;
  /** The rendered copy sits beside compose.yml: its relative paths (build: .., ./compose.Caddyfile) must mean the same. */
  const rendered = join(DEPLOY, `.${project}.yml`);
  let port = 0;
  /** Gatehouse's own site (compose.Caddyfile's :81, its GATEHOUSE_PUBLIC_URL). */
  let homePort = 0;

  async function compose(args: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
    const { compose: program, env } = engine();
    const command = ['-p', project, '-f', rendered, ...args];
    if (options.input !== undefined) {
      const result = spawnSync(program, command, { cwd: DEPLOY, env, input: options.input, encoding: 'utf8', timeout: options.timeoutMs ?? 120_000 });
      if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
      return { stdout: result.stdout, stderr: result.stderr };
    }
    try {
      return await run(program, command, { cwd: DEPLOY, env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${program} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
    }
  }

  const call = (options: Parameters<typeof httpCall>[1]): Promise<CallResult> => httpCall(port, options);
  /** A request to Gatehouse's own site, by the name its public URL gives. */
  const callHome = (options: Parameters<typeof httpCall>[1]): Promise<CallResult> =>
    httpCall(homePort, { ...options, headers: { host: `localhost:${homePort}`, ...options.headers } });

  // podman-compose 1.0.3 and docker-compose 1.29 both name a service's container PROJECT_SERVICE_1.
  const serviceLog = async (service: string): Promise<string> => {
    const { stdout, stderr } = await run(engine().cli, ['logs', `${project}_${service}_1`], { env: engine().env, maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  };
  const gatehouseLog = (): Promise<string> => serviceLog('gatehouse');

  describe(`deploy/compose.yml under ${composeName}`, () => {
    before(async () => {
      // compose.yml as a user runs it; only the image names, the published port and (Docker) the build's network differ.
      port = await freePort();
      homePort = await freePort();
      const original = readFileSync(join(DEPLOY, 'compose.yml'), 'utf8');
      const replacements: Array<[string, string]> = [
        ['image: gatehouse\n', `image: ${gatehouseImage}\n`],
        ['image: caddy:2-alpine', `image: ${standIn}-caddy`],
        ['image: traefik/whoami', `image: ${standIn}-whoami`],
        ['"8080:80"', `"${port}:80"`],
        ['"8081:81"', `"${homePort}:81"`],
        ['GATEHOUSE_PUBLIC_URL: http://localhost:8081', `GATEHOUSE_PUBLIC_URL: http://localhost:${homePort}`],
      ];
      // The Docker daemon started here gives containers no way out (docker-daemon.ts): the
      // build's npm ci downloads through the host's network.
      if (engine().name === 'docker') replacements.push(['build: .. ', 'build: { context: .., network: host } ']);
      let text = original;
      for (const [from, to] of replacements) {
        assert.ok(text.includes(from), `deploy/compose.yml no longer contains ${JSON.stringify(from)}: update this test`);
        text = text.split(from).join(to);
      }
      await writeFile(rendered, text);
      // The Dockerfile's base image is a build argument for this alone.
      await compose(['build', '--build-arg', `NODE_IMAGE=${standIn}-node`], { timeoutMs: 600_000 });
    });

    after(async () => {
      if (existsSync(rendered)) {
        await compose(['down', '-v'], { timeoutMs: 120_000 }).catch((error: unknown) => console.error(String(error)));
        await rm(rendered, { force: true });
      }
      // podman-compose 1.0.3 `down` leaves the networks it made (docker-compose removes them).
      if (engine().name === 'podman') spawnSync('podman', ['network', 'rm', '-f', `${project}_gatehouse`, `${project}_apps`], { env: engine().env });
    });

    it('comes up as written: Caddy answers, a browser without a session is sent to the sign-in page, an API client gets 401', async () => {
      await compose(['up', '-d'], { timeoutMs: 180_000 });
      // As docs/compose.md tells users of podman with netavark before 1.9 (Debian 12 has 1.4):
      // there a bridge takes the lowest MAC address of the links on it, so Gatehouse's restart
      // below can change it, and Caddy then sends its look-ups of `gatehouse` to the bridge's
      // old address, unanswered for up to a minute (the kernel's neighbour timeouts), 502 meanwhile.
      await engine().fixBridgeAddresses([`${project}_gatehouse`, `${project}_apps`]);
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
      const refused = await callHome({ method: 'POST', path: '/api/auth/register', headers: { host: 'gatehouse.example.org' }, body: { username: 'someone', password: PASSWORD, level: 'ADMINISTRATOR' } });
      assert.equal(refused.status, 403, refused.text);
      const message = String((refused.json as { message?: unknown }).message);
      const match = /e\.g\. docker compose run --rm SERVICE (.+)\)$/.exec(message);
      assert.ok(match?.[1] !== undefined, `the message says how to run it in a new container: ${message}`);
      const line = match[1];
      assert.equal(line, '/usr/local/bin/node /app/dist/cli.js users add admin --level ADMINISTRATOR --data-dir /data');

      await compose(['stop', 'gatehouse']);
      // -T: the password comes on standard input, not a terminal. podman-compose 1.0.3 `run`
      // would start the stopped service itself again without --no-deps; docker-compose runs as
      // docs/compose.md writes it.
      const noDeps = engine().name === 'podman' ? ['--no-deps'] : [];
      await compose(['run', '--rm', '-T', ...noDeps, 'gatehouse', ...line.split(' ')], { input: `${PASSWORD}\n` });
      await compose(['start', 'gatehouse']);
      try {
        await waitFor('Gatehouse did not come back', async () => (await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } })).status === 200);
      } catch (error) {
        // What the restarted container said tells a slow start from a refused one, and Caddy's
        // log an unreachable Gatehouse (a failed look-up or dial) from one that did not answer.
        const logs = await Promise.all(['gatehouse', 'caddy'].map(async (service) => `${service} container log:\n${(await serviceLog(service).catch((failed: unknown) => `(no log: ${String(failed)})`)).slice(-4000)}`));
        throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs.join('\n')}`);
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

    it('answers the account API on Gatehouse\'s own site only, never on the app\'s', async () => {
      const token = (await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } })).cookieToken ?? '';
      const onApp = await call({ path: '/api/auth/users', token });
      assert.equal(onApp.status, 404, onApp.text);
      const onHome = await callHome({ path: '/api/auth/users', token });
      assert.equal(onHome.status, 200, onHome.text);
      const account = await call({ path: '/gatehouse/account', headers: { accept: 'text/html' } });
      assert.equal(account.status, 303, account.text);
      assert.equal(account.headers.location, `http://localhost:${homePort}/gatehouse/account`);
    });

    it('trust-proxy works on the compose network: Gatehouse logs the client address Caddy saw, not Caddy\'s, and not a forged X-Forwarded-For', async () => {
      const app = await call({ path: '/whoami-address', token: (await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } })).cookieToken ?? '' });
      const clientAddress = /^X-Forwarded-For: (\S+)$/m.exec(app.text)?.[1];
      assert.ok(clientAddress !== undefined, `the app saw X-Forwarded-For: ${app.text}`);
      const caddyAddresses = (await engine().cliRun(['inspect', `${project}_caddy_1`, '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}'])).trim().split(/\s+/);
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
  return gatehouseImage;
}
