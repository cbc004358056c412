// A second real relying party: Flask with Authlib (Debian's python3-flask and python3-authlib), the
// app in flask_app.py, started by this test in the foreground on a free loopback port with a temp
// dir of its own. In Chromium, through Caddy in front of Gatehouse: the app's "Sign in" goes to
// Gatehouse (code flow, PKCE S256, a client secret), the person signs in with a password and a TOTP
// code, Authlib checks the id_token and reads userinfo; then the app's "Sign out" goes to Gatehouse's
// end-session endpoint with the id_token and comes back to the app, signed out of both.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { totpCode } from '../../../src/totp/codes.js';
import type { Page } from '../../helpers/chromium.js';
import { freePort, tempDir } from '../../helpers/process.js';
import { startStand, type Stand } from './behind-caddy.js';
import { unexpectedProblems } from './screens.js';

/** Debian's Python, where python3-flask and python3-authlib are installed (not whatever python3 is first on PATH). */
const PYTHON = process.env['GATEHOUSE_TEST_PYTHON'] ?? '/usr/bin/python3';
const APP_FILE = fileURLToPath(new URL('./flask_app.py', import.meta.url));
const USER = 'dora';
const PASSWORD = 'dora-password-4m';

interface FlaskApp {
  readonly origin: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts flask_app.py on `port` and waits until it accepts connections; throws (never skips) when it cannot. */
async function startFlask(port: number, env: Record<string, string>): Promise<FlaskApp> {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: install the Debian packages python3-flask and python3-authlib`);
  const home = await tempDir('gatehouse-flask-');
  let output = '';
  const child: ChildProcess = spawn(PYTHON, [APP_FILE], {
    cwd: home,
    env: { ...env, PATH: '/usr/bin:/bin', HOME: home, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) stream?.setEncoding('utf8').on('data', (text: string) => { output = (output + text).slice(-20_000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Flask app exited (${child.exitCode}):\n${output}`);
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (isOpen) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Flask app did not listen on ${port}:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { origin: `http://127.0.0.1:${port}`, output: () => output, stop };
}

describe('Flask with Authlib signs in through Gatehouse, in Chromium through Caddy', () => {
  let stand: Stand;
  let flask: FlaskApp | undefined;
  let seed: Buffer;
  let page: Page;

  before(async () => {
    stand = await startStand();
    assert.equal((await stand.api('POST', '/api/auth/users', { username: USER, password: PASSWORD, level: 'USER', groups: ['staff'] })).status, 200);
    // dora sets up TOTP through the API, as she would on the account page.
    const session = (await stand.api('POST', '/api/auth/authenticate', { username: USER, password: PASSWORD }, { token: null })).cookieToken ?? '';
    const begun = await stand.api('POST', '/api/auth/account/totp', { password: PASSWORD }, { token: session });
    assert.equal(begun.status, 200, begun.text);
    seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
    assert.equal((await stand.api('POST', '/api/auth/account/totp/confirm', { code: totpCode(seed, Date.now()) }, { token: session })).status, 200);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const client = await stand.api('POST', '/api/auth/clients', {
      name: 'Flask', redirectUris: [`${origin}/callback`], postLogoutRedirectUris: [`${origin}/signed-out`], mfa: true,
    });
    assert.equal(client.status, 200, client.text);
    const { clientId, clientSecret } = client.json as { clientId: string; clientSecret: string };
    // The redirect URIs name the port, so the app is started on exactly it.
    flask = await startFlask(port, { GATEHOUSE_ISSUER: stand.issuer, CLIENT_ID: clientId, CLIENT_SECRET: clientSecret });
  });
  after(async () => {
    await flask?.stop();
    await stand?.close();
  });

  it('signs in with a password and a TOTP code; Authlib checks the id_token and reads userinfo', async () => {
    assert.ok(flask !== undefined);
    const app = flask;
    page = await stand.newPage();
    await page.navigate(`${app.origin}/`);
    await page.waitFor(`document.getElementById('sign-in') !== null`);
    await page.evaluate(`(document.getElementById('sign-in').click(), true)`);
    await page.waitForUrl((url) => url.origin === stand.issuer && url.pathname === '/login');
    await page.waitFor(`document.getElementById('login') !== null && !document.getElementById('login').hidden`);
    await page.evaluate(`(() => {
      document.getElementById('username').value = ${JSON.stringify(USER)};
      document.getElementById('password').value = ${JSON.stringify(PASSWORD)};
      document.getElementById('login').requestSubmit();
      return true;
    })()`);
    await page.waitFor(`!document.getElementById('code-step').hidden`);
    // The next step's code (one step of skew is allowed): the set-up spent the current one.
    await page.evaluate(`(() => {
      document.getElementById('code').value = ${JSON.stringify(totpCode(seed, Date.now() + 30_000))};
      document.getElementById('code-step').requestSubmit();
      return true;
    })()`);
    await page.waitForUrl((url) => url.origin === app.origin && url.pathname === '/', 20_000);
    const text = await page.waitFor<string>(`(document.getElementById('claims') || {}).textContent`, 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${app.output()}`);
    });
    const claims = JSON.parse(text) as Record<string, unknown>;
    assert.equal(claims['iss'], stand.issuer);
    assert.equal(claims['preferred_username'], USER);
    assert.deepEqual(claims['groups'], ['staff']);
    assert.deepEqual(claims['amr'], ['pwd', 'otp']);
    assert.deepEqual((claims['userinfo_endpoint'] as Record<string, unknown>)['sub'], claims['sub']);
    // The callback answers with a redirect, so it is no document of its own: its request is in the app's log.
    assert.match(app.output(), /"GET \/callback\?code=[A-Za-z0-9_-]{43}&state=[^ ]*&iss=[^ ]* HTTP\/1\.1" 302/);
    assert.deepEqual(unexpectedProblems(page, [401]).filter((problem) => !problem.text.includes('favicon.ico')), []);
  });

  it('signs out through Gatehouse\'s end-session endpoint and comes back to the app, signed out of both', async () => {
    assert.ok(flask !== undefined);
    const app = flask;
    // The same page (its own browser context): the app's and Gatehouse's cookies from the sign-in are here.
    await page.navigate(`${app.origin}/`);
    await page.waitFor(`document.getElementById('sign-out') !== null`);
    assert.ok((await page.cookies(stand.issuer)).some((cookie) => cookie.name === 'jwt'), 'signed in to Gatehouse before');
    await page.evaluate(`(document.getElementById('sign-out').click(), true)`);
    // The app is on another site (127.0.0.1 beside localhost): the browser brings Gatehouse no
    // SameSite=Strict cookie, so the hint names no signed-in account and signs nothing out at once;
    // Gatehouse's page asks, and its button signs out and returns to the app
    // (docs/contract/links-and-sessions.md "RP logout").
    await page.waitForUrl((url) => url.origin === stand.issuer && url.pathname === '/oidc/logout');
    await page.waitFor(`document.querySelector('h1') !== null && document.querySelector('h1').textContent === 'Sign out'`);
    await page.evaluate(`(document.getElementById('sign-out').click(), true)`);
    await page.waitForUrl((url) => url.origin === app.origin && url.pathname === '/signed-out');
    assert.equal(await page.waitFor<string>(`(document.getElementById('state') || {}).textContent`), 'state matches');
    await stand.gatehouse.waitForLine((line) => line.includes('"path":"/oidc/logout"') && line.includes('"status":200'));
    await stand.gatehouse.waitForLine((line) => line.includes('"path":"/api/auth/logout"') && line.includes('"status":200'));
    assert.equal((await page.cookies(stand.issuer)).some((cookie) => cookie.name === 'jwt'), false, 'signed out of Gatehouse');
    // Signing in again asks for the password: no session came back.
    await page.navigate(`${app.origin}/login`);
    await page.waitForUrl((url) => url.origin === stand.issuer && url.pathname === '/login');
    await page.waitFor(`document.getElementById('login') !== null && !document.getElementById('login').hidden`);
    assert.deepEqual(unexpectedProblems(page, [401]).filter((problem) => !problem.text.includes('favicon.ico')), []);
  });
});
