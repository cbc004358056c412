// Two factors through the shared snippets, with the per-app lines docs/two-step.md shows (nginx:
// `set $gatehouse_require "mfa=1";` in a case-insensitive regular-expression location; Caddy:
// `import gatehouse_require mfa=1 …` under a `path_regexp (?i)` matcher), and `mfa=1&tokens=1`
// for a location machine tokens may also open. A password-only session counts as none there (401
// for an API client, the sign-in page for a browser) under every spelling an app may route as
// that path (nginx compares prefix locations case-sensitively: `location /vault/` would let
// /VAULT/x through with the site's `/` rule only); a session made with a TOTP code passes; a
// machine token passes only where tokens=1 is said.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { totpCode } from '../../../src/totp/codes.js';
import { assertBuilt, killAllChildren, REPO_ROOT, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { API_ACCEPT, BROWSER_ACCEPT, echoOf, registerVia, viaHome, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

// The locations docs/two-step.md shows (the test below checks it holds them verbatim).
const LOCATIONS = {
  nginx: `    # Two factors, under every spelling an app may route as /vault (any case, /vault;x,
    # /vault.json, no trailing slash).
    location ~* ^/vault(?:[^a-z0-9_-]|$) {
        set $gatehouse_require "mfa=1";
        include gatehouse/protect.conf;
        proxy_pass http://127.0.0.1:8080;
    }
`,
  caddy: `	# Two factors, under every spelling an app may route as /vault (any case, /vault;x,
	# /vault.json, no trailing slash).
	@vault path_regexp (?i)^/vault(?:[^a-z0-9_-]|$)
	handle @vault {
		import gatehouse_require mfa=1 127.0.0.1:8080
	}
`,
};

const SITES = {
  nginx: `server {
    listen 80;
    server_name app.example.com;
    include gatehouse/site.conf;

    location / {
        include gatehouse/protect.conf;
        proxy_pass http://127.0.0.1:8080;
    }

${LOCATIONS.nginx}
    location ~* ^/sync(?:[^a-z0-9_-]|$) {
        set $gatehouse_require "mfa=1&tokens=1";
        include gatehouse/protect.conf;
        proxy_pass http://127.0.0.1:8080;
    }
}
`,
  caddy: `import /etc/caddy/gatehouse.caddy

auth.example.com {
	import gatehouse_home
}

app.example.com {
	import gatehouse_site

${LOCATIONS.caddy}
	@sync path_regexp (?i)^/sync(?:[^a-z0-9_-]|$)
	handle @sync {
		import gatehouse_require mfa=1&tokens=1 127.0.0.1:8080
	}
	handle {
		import gatehouse_protect 127.0.0.1:8080
	}
}
`,
};

describe('docs/two-step.md', () => {
  const docs = readFileSync(join(REPO_ROOT, 'docs/two-step.md'), 'utf8');
  for (const kind of PROXY_KINDS) {
    it(`shows the ${kind} location for two factors as the tests run it`, () => {
      assert.ok(docs.includes(LOCATIONS[kind]), `docs/two-step.md holds the ${kind} lines verbatim:\n${LOCATIONS[kind]}`);
    });
  }
});

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
      user = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      const begun = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
      assert.equal(begun.status, 200, begun.text);
      const seed = decodeBase32((begun.json as { secret: string }).secret);
      assert.ok(seed !== undefined);
      // Confirming signs the session in again with both factors (amr pwd + otp).
      const confirmed = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/totp/confirm', token: user.token, body: { code: totpCode(seed, Date.now()) } });
      assert.equal(confirmed.status, 200, confirmed.text);
      twoFactorToken = confirmed.cookieToken ?? '';
      const made = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/tokens', token: twoFactorToken, body: { name: 'sync', password: user.password } });
      assert.equal(made.status, 200, made.text);
      machineToken = (made.json as { token: string }).token;
      plain = await registerVia(stack.home, { level: 'USER', adminToken: twoFactorToken });
    });
    after(() => stack?.stop());

    it('treats a password-only session as none: 401 for an API client, the sign-in page for a browser', async () => {
      const verified = await viaProxy(stack.proxy.port, { path: '/api/auth/verify', token: plain.token });
      assert.equal((verified.json as { username?: string }).username, plain.username, 'the session itself is valid');
      const api = await viaProxy(stack.proxy.port, { path: '/vault/notes', token: plain.token, headers: { accept: API_ACCEPT } });
      assert.equal(api.status, 401, api.text);
      const browser = await viaProxy(stack.proxy.port, { path: '/vault/notes', token: plain.token, headers: { accept: BROWSER_ACCEPT } });
      assert.equal(browser.status, 302, browser.text);
      assert.match(String(browser.headers.location), /^\/login\?/);
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url === '/vault/notes'), []);
      assert.equal(echoOf(await viaProxy(stack.proxy.port, { path: '/notes', token: plain.token })).headers['remote-user'], plain.username, 'the rest of the site takes any session');
    });

    // Other spellings an app may route as /vault: case, no trailing slash, a path parameter, a
    // suffix, an escape, a doubled slash (a backslash is refused: backslash-paths.test.ts).
    for (const path of ['/vault', '/Vault/x', '/VAULT/', '/vAuLt', '/vault;/x', '/vault;jsessionid=1', '/vault./x', '/vault.json', '/%76ault/x', '/%56AULT/x', '//vault/x']) {
      it(`asks two factors for ${path} too: 401 for a password-only session, the app reached only with two`, async () => {
        const refused = await viaProxy(stack.proxy.port, { path, token: plain.token, headers: { accept: API_ACCEPT } });
        assert.equal(refused.status, 401, `${path} with one factor: ${refused.status} ${refused.text}`);
        const echo = echoOf(await viaProxy(stack.proxy.port, { path, token: twoFactorToken, headers: { accept: API_ACCEPT } }));
        assert.equal(echo.url, path);
        assert.equal(echo.headers['remote-user'], user.username);
        assert.equal(stack.upstream.seen.filter((seen) => seen.url === path).length, 1, 'the refused request never reached the app');
      });
    }

    it('leaves paths that only start with the letters vault to the rest of the site', async () => {
      for (const path of ['/vaults', '/vault_x', '/vault-2', '/vaultx/y']) {
        assert.equal(echoOf(await viaProxy(stack.proxy.port, { path, token: plain.token })).headers['remote-user'], plain.username, path);
      }
    });

    it('lets a session made with a TOTP code through', async () => {
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/vault/notes', token: twoFactorToken }));
      assert.equal(echo.headers['remote-user'], user.username);
    });

    it('lets a machine token through only where tokens=1 is said', async () => {
      const refused = await viaProxy(stack.proxy.port, { path: '/vault/notes', headers: { authorization: `Bearer ${machineToken}`, accept: API_ACCEPT } });
      assert.equal(refused.status, 401, refused.text);
      for (const path of ['/sync/a', '/SYNC/a']) {
        const echo = echoOf(await viaProxy(stack.proxy.port, { path, headers: { authorization: `Bearer ${machineToken}`, accept: API_ACCEPT } }));
        assert.equal(echo.headers['remote-user'], user.username);
        assert.ok(!(echo.headers['authorization'] ?? '').includes('gh_'));
        const passwordOnly = await viaProxy(stack.proxy.port, { path, token: plain.token, headers: { accept: API_ACCEPT } });
        assert.equal(passwordOnly.status, 401, `${path}: ${passwordOnly.text}`);
      }
    });
  });
}
