// deploy/nginx/flood.conf and deploy/caddy/flood.Caddyfile on the shared snippets, beside
// Gatehouse's own site, run as written (only ports, addresses and the token replaced) by a real
// nginx and a real Caddy, in front of the built Gatehouse and an upstream app standing in for
// Flood started with --auth none: it answers 401 unless its `jwt` cookie is signed with its
// secret, and the proxy gets that cookie from `gatehouse flood-token`. Gatehouse runs as the
// recipe starts it: --public-url on its own site, --flood-url naming Flood's.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { EVENT_STREAM_PATH, PROXY_KINDS, startStack, stopAllProxies, type Stack, type StackPorts } from '../../helpers/proxies.js';
import { API_ACCEPT, BROWSER_ACCEPT, CookieJar, echoOf, readEventStream, registerVia, viaHome, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** --flood-url as the recipe gives it: Flood's site (here 127.0.0.1 on the proxy's port). */
const floodUrl = (ports: StackPorts): string[] => ['--flood-url', `http://127.0.0.1:${ports.site}`];

for (const kind of PROXY_KINDS) {
  describe(`the Flood recipe through ${kind}, with no user yet`, () => {
    let stack: Stack;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'flood', publicUrl: true, gatehouseArgs: floodUrl });
    });
    after(() => stack?.stop());

    it('refuses Flood\'s API with 401 and never reaches Flood, while Flood\'s login screen asks Gatehouse to create the first user', async () => {
      const api = await viaProxy(stack.proxy.port, { path: '/api/client/settings', headers: { accept: API_ACCEPT } });
      assert.equal(api.status, 401, `${api.text}\n${stack.describe()}`);
      // A browser opening an API URL is sent to Gatehouse's sign-in page, which the shared part routes.
      const browser = await viaProxy(stack.proxy.port, { path: '/api/client/settings', headers: { accept: BROWSER_ACCEPT } });
      assert.equal(browser.status, 302, `${browser.text}\n${stack.describe()}`);
      assert.match(String(browser.headers.location), /^\/login\?rd=/);
      const stream = await readEventStream(stack.proxy.port, `${EVENT_STREAM_PATH}?historySnapshot=FIVE_MINUTE`, {}, 500);
      assert.equal(stream.status, 401);
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url.startsWith('/api/')), []);
      const verify = await viaProxy(stack.proxy.port, { path: '/api/auth/verify?1763752800123' });
      assert.equal(verify.status, 200, verify.text);
      assert.deepEqual(verify.json, { initialUser: true, configs: { authMethod: 'default', pollInterval: 2000 } });
    });
  });

  describe(`the Flood recipe through ${kind}`, () => {
    let stack: Stack;
    let admin: ProxyUser;
    let user: ProxyUser;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'flood', publicUrl: true, gatehouseArgs: floodUrl });
      admin = await registerVia(stack.proxy.port, { level: 'ADMINISTRATOR' });
      user = await registerVia(stack.proxy.port, { level: 'USER', adminToken: admin.token });
    });
    after(() => stack?.stop());

    it('sends Flood\'s API on with the Flood token in place of the user\'s cookie, and the user\'s name and level', async () => {
      const res = await viaProxy(stack.proxy.port, { path: '/api/client/settings', headers: { cookie: `other=1; jwt=${user.token}` } });
      const echo = echoOf(res);
      assert.equal(echo.url, '/api/client/settings');
      assert.equal(echo.headers['cookie'], `jwt=${stack.floodToken}`, 'Flood gets its own token and nothing else');
      assert.ok(!JSON.stringify(echo.headers).includes(user.token), 'the user\'s Gatehouse token never reaches Flood');
      assert.equal(echo.headers['remote-user'], user.username);
      assert.equal(echo.headers['remote-level'], 'USER');
    });

    it('passes a 2 MiB upload (a .torrent file) to Flood whole, after the check', async () => {
      const body = randomBytes(2 * 1024 * 1024);
      const echo = echoOf(await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/torrents/add-files', body, headers: { cookie: `jwt=${user.token}`, 'content-type': 'application/octet-stream' } }));
      assert.equal(echo.method, 'POST');
      assert.equal(echo.bodyBytes, body.length);
      assert.equal(echo.bodySha256, createHash('sha256').update(body).digest('hex'));
    });

    it('answers 401 without a cookie, with a wrong one, and with a token signed by someone else, and Flood is not asked', async () => {
      const before = stack.upstream.seen.length;
      const forged = `${user.token.slice(0, user.token.lastIndexOf('.') + 1)}${'A'.repeat(43)}`;
      for (const cookie of [undefined, 'jwt=', 'jwt=not-a-token', `jwt=${forged}`, `jwt=${stack.floodToken}`]) {
        const res = await viaProxy(stack.proxy.port, { path: '/api/torrents', headers: cookie === undefined ? {} : { cookie } });
        assert.equal(res.status, 401, `cookie ${cookie}: ${res.text}`);
      }
      assert.equal(stack.upstream.seen.length, before);
    });

    it('lets a download link through on its ?token= alone (nginx passes it in X-Original-URI, Caddy in X-Forwarded-Uri)', async () => {
      const path = `/api/torrents/ABCDEF/contents/0/data?token=${encodeURIComponent(user.token)}`;
      const echo = echoOf(await viaProxy(stack.proxy.port, { path }));
      assert.equal(echo.url, path);
      assert.equal(echo.headers['cookie'], `jwt=${stack.floodToken}`);
      assert.equal(echo.headers['remote-user'], user.username);
      const refused = await viaProxy(stack.proxy.port, { path: '/api/torrents/ABCDEF/contents/0/data?token=not-a-token' });
      assert.equal(refused.status, 401);
    });

    it('sends /api/auth/* to Gatehouse, never to Flood, and Flood\'s own Set-Cookie never reaches the browser', async () => {
      const verify = await viaProxy(stack.proxy.port, { path: '/api/auth/verify?1763752800123', token: user.token });
      assert.equal(verify.status, 200, verify.text);
      assert.equal((verify.json as { username?: string }).username, user.username);
      const list = await viaProxy(stack.proxy.port, { path: '/api/auth/users', token: admin.token });
      assert.equal(list.status, 200, list.text);
      const overwrite = await viaProxy(stack.proxy.port, { path: '/api/set-cookie', token: user.token });
      assert.equal(overwrite.status, 200, overwrite.text);
      assert.equal(overwrite.headers['set-cookie'], undefined, 'Flood cannot replace the Gatehouse cookie');
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url.startsWith('/api/auth')), []);
    });

    it('never sends /api/auth/* to Flood, in any case', async () => {
      for (const path of ['/api/Auth/verify', '/api/AUTH/logout', '/api/auth/Verify', '/api/aUtH/users']) {
        const res = await viaProxy(stack.proxy.port, { path, token: admin.token });
        assert.ok(res.headers['set-cookie'] === undefined || res.headers['set-cookie'].every((line) => !line.startsWith('jwt=from-upstream')), path);
      }
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url.toLowerCase().startsWith('/api/auth')), []);
    });

    // docs/contract/own-origin.md "Origins": the seven Flood endpoints answer in full on
    // Flood's site; the rest of the account and administration API does not.
    it('answers Flood\'s register and users endpoints on Flood\'s site, and nothing else of the account API', async () => {
      const made = await registerVia(stack.proxy.port, { level: 'USER', adminToken: admin.token });
      const renamed = `${made.username}-renamed`;
      const patched = await viaProxy(stack.proxy.port, { method: 'PATCH', path: `/api/auth/users/${encodeURIComponent(made.username)}`, token: admin.token, body: { username: renamed } });
      assert.equal(patched.status, 200, patched.text);
      const deleted = await viaProxy(stack.proxy.port, { method: 'DELETE', path: `/api/auth/users/${encodeURIComponent(renamed)}`, token: admin.token });
      assert.equal(deleted.status, 200, deleted.text);
      // The proxy answers 404 where it routes nothing; under users/ Gatehouse itself refuses what is not Flood's.
      const admins = `/api/auth/users/${encodeURIComponent(admin.username)}`;
      for (const [method, path, answer] of [
        ['GET', '/api/auth/account', '404'],
        ['POST', '/api/auth/account/logout-everywhere', '404'],
        ['GET', '/api/auth/account/sessions', '404'],
        ['POST', '/api/auth/invites', '404'],
        ['POST', '/api/auth/users', '403 NOT_GATEHOUSE_ORIGIN'],
        ['GET', `${admins}/sessions`, '403 NOT_GATEHOUSE_ORIGIN'],
        ['POST', `${admins}/reset-link`, '403 NOT_GATEHOUSE_ORIGIN'],
      ] as const) {
        const res = await viaProxy(stack.proxy.port, { method, path, token: admin.token, ...(method === 'POST' ? { body: {} } : {}) });
        const code = (res.json as { code?: string } | undefined)?.code;
        assert.equal(code === undefined ? String(res.status) : `${res.status} ${code}`, answer, `${method} ${path} on Flood's site: ${res.text}`);
      }
      const account = await viaHome(stack.home, { path: '/api/auth/account', token: admin.token });
      assert.equal((account.json as { username?: string }).username, admin.username, 'Gatehouse\'s own site answers it');
    });

    it('reads no token from a client\'s own X-Original-URI or X-Forwarded-Uri: only the URI the proxy sets counts', async () => {
      const before = stack.upstream.seen.length;
      for (const header of ['x-original-uri', 'x-forwarded-uri']) {
        const res = await viaProxy(stack.proxy.port, { path: '/api/torrents', headers: { [header]: `/api/torrents?token=${user.token}` } });
        assert.equal(res.status, 401, `${header}: ${res.status} ${res.text}`);
      }
      assert.equal(stack.upstream.seen.length, before);
    });

    it('serves Flood\'s web client without a session, and without the user\'s cookie', async () => {
      for (const path of ['/', '/overview']) {
        const echo = echoOf(await viaProxy(stack.proxy.port, { path, headers: { accept: BROWSER_ACCEPT, cookie: `jwt=${user.token}` } }));
        assert.equal(echo.url, path);
        assert.equal(echo.headers['cookie'], undefined);
      }
    });

    it('serves Gatehouse\'s sign-in page at /login, which also asks for a second factor (Flood\'s own form cannot)', async () => {
      const page = await viaProxy(stack.proxy.port, { path: '/login', headers: { accept: BROWSER_ACCEPT } });
      assert.equal(page.status, 200, page.text);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url.startsWith('/login')), []);
    });

    it('never passes a client\'s own Remote-User or Remote-Level on to Flood', async () => {
      const echo = echoOf(
        await viaProxy(stack.proxy.port, {
          path: '/api/settings',
          headers: { cookie: `jwt=${user.token}`, 'remote-user': admin.username, 'remote-level': 'ADMINISTRATOR', remote_user: admin.username },
        }),
      );
      assert.equal(echo.headers['remote-user'], user.username);
      assert.equal(echo.headers['remote-level'], 'USER');
      assert.equal(echo.headers['remote_user'], undefined);
      const anonymous = await viaProxy(stack.proxy.port, { path: '/api/settings', headers: { 'remote-user': admin.username, 'remote-level': 'ADMINISTRATOR' } });
      assert.equal(anonymous.status, 401);
    });

    it('closes the gate on logout as a browser sees it: the cookie is cleared, so the next request has none and gets 401', async () => {
      const jar = new CookieJar();
      const login = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password } });
      assert.equal(login.status, 200, login.text);
      jar.apply(login);
      const copied = jar.get('jwt');
      assert.ok(copied !== undefined);
      assert.equal((await viaProxy(stack.proxy.port, { path: '/api/torrents', headers: jar.headers() })).status, 200);

      const logout = await viaProxy(stack.proxy.port, { path: '/api/auth/logout', headers: jar.headers() });
      assert.equal(logout.status, 200, logout.text);
      jar.apply(logout);
      assert.equal(jar.get('jwt'), undefined, 'logout clears the cookie through the proxy');
      assert.equal((await viaProxy(stack.proxy.port, { path: '/api/torrents', headers: jar.headers() })).status, 401);
      // Without --revoke-on-logout a copy of the token stays valid (docs/contract/flood-api.md "Tokens and cookies").
      assert.equal((await viaProxy(stack.proxy.port, { path: '/api/torrents', token: copied })).status, 200);
    });

    it('keeps Flood\'s event stream open for more than 2 s, each event arriving as it is sent', async () => {
      const reading = await readEventStream(stack.proxy.port, `${EVENT_STREAM_PATH}?historySnapshot=FIVE_MINUTE`, { cookie: `jwt=${user.token}` }, 2_500);
      assert.equal(reading.status, 200, stack.describe());
      assert.match(reading.contentType ?? '', /^text\/event-stream/);
      assert.ok(reading.wasOpen, 'the stream is still open after 2.5 s');
      const early = reading.eventTimesMs.filter((ms) => ms < 1_500).length;
      const late = reading.eventTimesMs.filter((ms) => ms >= 2_000).length;
      // One event every 100 ms: unbuffered, several arrive in the first 1.5 s and more after 2 s.
      assert.ok(early >= 3 && late >= 1, `events at ${reading.eventTimesMs.join(', ')} ms`);
      const seen = stack.upstream.seen.filter((request) => request.url.startsWith(EVENT_STREAM_PATH)).at(-1);
      assert.equal(seen?.headers['cookie'], `jwt=${stack.floodToken}`);
    });
  });
}
