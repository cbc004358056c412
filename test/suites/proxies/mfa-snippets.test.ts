// Two factors through the shared snippets: the per-app lines of docs/deploy.md's table,
// `set $gatehouse_require "mfa=1";` (nginx) and `import gatehouse_require mfa=1 …` (Caddy), and
// `mfa=1&tokens=1` for a location machine tokens may also open. A password-only session counts as
// none there (401 for an API client, the sign-in page for a browser); a session made with a TOTP
// code passes; a machine token passes only where tokens=1 is said.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/auth/base32.js';
import { totpCode } from '../../../src/auth/totp.js';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { API_ACCEPT, BROWSER_ACCEPT, echoOf, registerVia, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

const SITES = {
  nginx: `server {
    listen 80;
    server_name app.example.com;
    include gatehouse/site.conf;

    location / {
        set $gatehouse_require "mfa=1";
        include gatehouse/protect.conf;
        proxy_pass http://127.0.0.1:8080;
    }
    location /sync/ {
        set $gatehouse_require "mfa=1&tokens=1";
        include gatehouse/protect.conf;
        proxy_pass http://127.0.0.1:8080;
    }
}
`,
  caddy: `import /etc/caddy/gatehouse.caddy

app.example.com {
	import gatehouse_site

	handle /sync/* {
		import gatehouse_require mfa=1&tokens=1 127.0.0.1:8080
	}
	handle {
		import gatehouse_require mfa=1 127.0.0.1:8080
	}
}
`,
};

for (const kind of PROXY_KINDS) {
  describe(`an app asking for two factors through the snippets on ${kind}`, () => {
    let stack: Stack;
    let user: ProxyUser;
    let plain: ProxyUser;
    let twoFactorToken: string;
    let machineToken: string;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app', siteText: SITES });
      user = await registerVia(stack.proxy.port, { level: 'ADMINISTRATOR' });
      const begun = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
      assert.equal(begun.status, 200, begun.text);
      const seed = decodeBase32((begun.json as { secret: string }).secret);
      assert.ok(seed !== undefined);
      // Confirming signs the session in again with both factors (amr pwd + otp).
      const confirmed = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/account/totp/confirm', token: user.token, body: { code: totpCode(seed, Date.now()) } });
      assert.equal(confirmed.status, 200, confirmed.text);
      twoFactorToken = confirmed.cookieToken ?? '';
      const made = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/account/tokens', token: twoFactorToken, body: { name: 'sync' } });
      assert.equal(made.status, 200, made.text);
      machineToken = (made.json as { token: string }).token;
      plain = await registerVia(stack.proxy.port, { level: 'USER', adminToken: twoFactorToken });
    });
    after(() => stack?.stop());

    it('treats a password-only session as none: 401 for an API client, the sign-in page for a browser', async () => {
      const verified = await viaProxy(stack.proxy.port, { path: '/api/auth/verify', token: plain.token });
      assert.equal((verified.json as { username?: string }).username, plain.username, 'the session itself is valid');
      const api = await viaProxy(stack.proxy.port, { path: '/notes', token: plain.token, headers: { accept: API_ACCEPT } });
      assert.equal(api.status, 401, api.text);
      const browser = await viaProxy(stack.proxy.port, { path: '/notes', token: plain.token, headers: { accept: BROWSER_ACCEPT } });
      assert.equal(browser.status, 302, browser.text);
      assert.match(String(browser.headers.location), /^\/login\?/);
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url === '/notes'), []);
    });

    it('lets a session made with a TOTP code through', async () => {
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/notes', token: twoFactorToken }));
      assert.equal(echo.headers['remote-user'], user.username);
    });

    it('lets a machine token through only where tokens=1 is said', async () => {
      const refused = await viaProxy(stack.proxy.port, { path: '/notes', headers: { authorization: `Bearer ${machineToken}`, accept: API_ACCEPT } });
      assert.equal(refused.status, 401, refused.text);
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/sync/a', headers: { authorization: `Bearer ${machineToken}`, accept: API_ACCEPT } }));
      assert.equal(echo.headers['remote-user'], user.username);
      assert.ok(!(echo.headers['authorization'] ?? '').includes('gh_'));
      const passwordOnly = await viaProxy(stack.proxy.port, { path: '/sync/a', token: plain.token, headers: { accept: API_ACCEPT } });
      assert.equal(passwordOnly.status, 401, passwordOnly.text);
    });
  });
}
