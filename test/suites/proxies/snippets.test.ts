// The shared snippets (deploy/nginx/conf.d + deploy/nginx/gatehouse/, deploy/caddy/gatehouse.caddy)
// with the per-app lines of deploy/nginx/apps.conf and deploy/caddy/apps.Caddyfile, exactly as
// docs/deploy.md shows them: two apps on one proxy (app.example.com for any user with an
// administrators' /admin; photos.example.com for the group "family"), the sign-in surface on
// both, Gatehouse's own site beside them, the probe for `gatehouse doctor`, and the doctor itself passing every check (the doctor is
// pointed at the first site only: the second one's name resolves nowhere outside the proxy).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, REPO_ROOT, removeTempDirs, runCli } from '../../helpers/process.js';
import { PROXY_KINDS, SECOND_APP_HOST, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { API_ACCEPT, BROWSER_ACCEPT, echoOf, registerVia, viaHome, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

interface Account {
  readonly username: string;
  readonly password: string;
  readonly token: string;
}

for (const kind of PROXY_KINDS) {
  describe(`the shared snippets with two apps on one ${kind}`, () => {
    let stack: Stack;
    let admin: ProxyUser;
    let family: Account;
    let stranger: Account;
    const photos = (): Record<string, string> => ({ host: `${SECOND_APP_HOST}:${stack.proxy.port}` });

    /** An account made by the administrator with these groups, signed in through the proxy. */
    async function account(prefix: string, groups: readonly string[]): Promise<Account> {
      const username = `${prefix}-${process.pid}`;
      const password = `${username}-password-9q`;
      const made = await viaHome(stack.home, { method: 'POST', path: '/api/auth/users', token: admin.token, body: { username, password, level: 'USER', groups } });
      assert.equal(made.status, 200, made.text);
      const login = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username, password } });
      assert.equal(login.status, 200, login.text);
      return { username, password, token: login.cookieToken ?? '' };
    }

    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app' });
      admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      family = await account('family', ['family']);
      stranger = await account('stranger', ['work']);
    });
    after(() => stack?.stop());

    it('sends the group app\'s members to the second app with their groups, and nobody else', async () => {
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/album/1?x=2', token: family.token, headers: photos() }));
      assert.equal(echo.url, '/album/1?x=2');
      assert.equal(echo.headers['remote-user'], family.username);
      assert.equal(echo.headers['remote-groups'], 'family');
      assert.ok(!(echo.headers['cookie'] ?? '').includes(family.token), 'the second app never sees the jwt cookie either');
      assert.equal(stack.secondUpstream.seen.length, 1);
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url === '/album/1?x=2'), [], 'not the first app');

      const refused = await viaProxy(stack.proxy.port, { path: '/album/1', token: stranger.token, headers: { ...photos(), accept: API_ACCEPT } });
      assert.equal(refused.status, 403, refused.text);
      const anonymous = await viaProxy(stack.proxy.port, { path: '/album/1', headers: { ...photos(), accept: API_ACCEPT } });
      assert.equal(anonymous.status, 401, anonymous.text);
      const browser = await viaProxy(stack.proxy.port, { path: '/album/1', headers: { ...photos(), accept: BROWSER_ACCEPT } });
      assert.equal(browser.status, 302, browser.text);
      assert.equal(browser.headers.location, `/login?rd=${encodeURIComponent(`http://${SECOND_APP_HOST}:${stack.proxy.port}/album/1`)}`);
      assert.equal(stack.secondUpstream.seen.length, 1, 'the refused requests never reached the app');
    });

    it('lets anyone signed in into the first app, whatever their groups, and keeps them out of /admin', async () => {
      for (const someone of [family, stranger]) {
        const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/page', token: someone.token }));
        assert.equal(echo.headers['remote-user'], someone.username);
        assert.equal((await viaProxy(stack.proxy.port, { path: '/admin/x', token: someone.token })).status, 403);
      }
    });

    it('routes /login, /logout, /gatehouse/ and the sign-in paths of /api/auth/ to Gatehouse on both sites, never to an app', async () => {
      for (const headers of [{}, photos()]) {
        const login = await viaProxy(stack.proxy.port, { path: '/login', headers: { ...headers, accept: BROWSER_ACCEPT } });
        assert.equal(login.status, 200, login.text);
        assert.match(String(login.headers['content-type']), /^text\/html/);
        const verify = await viaProxy(stack.proxy.port, { path: '/api/auth/verify', token: family.token, headers });
        assert.equal((verify.json as { username?: string }).username, family.username);
        for (const path of ['/logout', '/gatehouse/account', '/gatehouse/', '/api/Auth/verify']) {
          const res = await viaProxy(stack.proxy.port, { path, headers: { ...headers, accept: BROWSER_ACCEPT } });
          assert.ok(res.status !== 502 && res.status !== 504, `${path}: ${res.status}`);
        }
      }
      const reachedApp = [...stack.upstream.seen, ...stack.secondUpstream.seen].filter((seen) => /^\/(login|logout|gatehouse\/|api\/auth\/)/i.test(seen.url));
      assert.deepEqual(reachedApp, []);
    });

    it('answers the probe with what an app receives: the gate\'s identity only, no jwt cookie, no forged URI headers', async () => {
      const forged = { 'remote-user': 'root', 'remote-level': 'ADMINISTRATOR', 'remote-groups': 'admins', remote_user: 'root', 'x-original-uri': '/forged', 'x-forwarded-uri': '/forged' };
      for (const headers of [{}, photos()]) {
        const res = await viaProxy(stack.proxy.port, { path: '/.well-known/gatehouse/probe', headers: { ...headers, ...forged, cookie: `a=1; jwt=${stranger.token}` } });
        assert.equal(res.status, 200, res.text);
        const report = res.json as { probe: string; jwtCookie: boolean; remoteUser: string[]; remoteLevel: string[]; remoteGroups: string[]; xOriginalUri: string[]; xForwardedUri: string[] };
        assert.equal(report.probe, 'gatehouse');
        assert.deepEqual(report.remoteUser, [stranger.username]);
        assert.deepEqual(report.remoteLevel, ['USER']);
        assert.deepEqual(report.remoteGroups, ['work']);
        assert.equal(report.jwtCookie, false);
        assert.deepEqual(report.xOriginalUri, []);
        assert.deepEqual(report.xForwardedUri, []);
        const anonymous = await viaProxy(stack.proxy.port, { path: '/.well-known/gatehouse/probe', headers: { ...headers, accept: API_ACCEPT } });
        assert.equal(anonymous.status, 401, anonymous.text);
      }
    });

    it('lets a machine token in as its account and never passes it on to the app, while an app\'s own Authorization passes', async () => {
      const made = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/tokens', token: family.token, body: { name: 'backup script', password: family.password } });
      assert.equal(made.status, 200, made.text);
      const machineToken = (made.json as { token: string }).token;
      for (const headers of [{}, photos()]) {
        const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/sync', headers: { ...headers, authorization: `Bearer ${machineToken}`, accept: API_ACCEPT } }));
        assert.equal(echo.headers['remote-user'], family.username);
        assert.ok(!(echo.headers['authorization'] ?? '').includes('gh_'), `the app saw ${echo.headers['authorization']}`);
      }
      const own = echoOf(await viaProxy(stack.proxy.port, { path: '/sync', token: family.token, headers: { authorization: 'Basic dXNlcjphcHAtcGFzc3dvcmQ=' } }));
      assert.equal(own.headers['authorization'], 'Basic dXNlcjphcHAtcGFzc3dvcmQ=');
      assert.equal(own.headers['remote-user'], family.username);
    });

    it('passes every check of gatehouse doctor on the first site', async () => {
      const run = await runCli(['doctor', `${stack.proxy.origin}/`, '--timeout', '10'], { stdin: `${stranger.username}\n${stranger.password}\n`, timeoutMs: 90_000 });
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n${stack.describe().slice(-2_000)}`);
      assert.doesNotMatch(run.stdout, /^(FAIL|skip) /m, run.stdout);
    });
  });
}

describe('docs/deploy.md', () => {
  const docs = readFileSync(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
  // Each per-app file is shown whole in the docs, less its opening comment: the test runs what a reader copies.
  for (const file of ['deploy/nginx/auth.conf', 'deploy/nginx/apps.conf', 'deploy/caddy/apps.Caddyfile', 'deploy/traefik/apps.yml']) {
    it(`shows ${file} as the tests run it`, () => {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      const body = text.replace(/^(#[^\n]*\n)+\n?/, '');
      assert.ok(body.length > 100 && docs.includes(body), `docs/deploy.md holds ${file} after its opening comment, verbatim`);
    });
  }
});
