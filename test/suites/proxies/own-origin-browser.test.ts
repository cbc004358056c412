// Apps are not Gatehouse (docs/contract/own-origin.md), in Chromium through real nginx and Caddy
// running deploy/'s app recipe as written: Gatehouse's own site and the apps' on one proxy,
// Gatehouse with --public-url naming its own (http://localhost:HOME), the apps reached as
// app.example.com (any name but Gatehouse's is an app's) and, where a passkey needs a secure
// context, as localhost on the apps' port.
// - A page of an app, signed in as an administrator and as a user (on the app's own site, and on
//   Gatehouse's site in the same browser), runs script that tries to make an account, change a
//   password, TOTP, passkeys or tokens, read the account and the users, log out everywhere, and
//   mint tokens, invitations and reset links, on its own origin and on Gatehouse's: every attempt
//   fails (the proxy's 404 on the app's site; the browser or Gatehouse refuses on Gatehouse's),
//   and Gatehouse's own site shows afterwards that nothing changed.
// - On the same app's site signing in still works: the password step, the TOTP code step, a
//   passkey (on localhost, where the origin allows one), the 403 page, and signing out; the
//   account link of the sign-in page leads to Gatehouse's own site.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { totpCode } from '../../../src/totp/codes.js';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { click, runInPage, submitForm } from './page-actions.js';
import { answeredSince, loggedSoFar, registerVia, sortedAnswers, uniqueName, viaHome, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

const APP_HOST = 'app.example.com';

/** A registration response of the right shape (it would fail verification): what a page can make up. */
const MADE_UP_CREDENTIAL = {
  id: 'AAAAAAAAAAAAAAAAAAAAAA',
  rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
  type: 'public-key',
  response: { clientDataJSON: 'e30', attestationObject: 'oA' },
};

/**
 * Every power over accounts a script might try, as [label, expression] for runInPage, against
 * `target` (empty: the page's own origin). `victim` is another account's name.
 */
function powers(target: string, victim: string): Array<readonly [string, string]> {
  const url = (path: string): string => JSON.stringify(`${target}${path}`);
  const json = (method: string, path: string, body: unknown): string =>
    `fetch(${url(path)}, { method: '${method}', credentials: 'include', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(JSON.stringify(body))} })`;
  const get = (path: string): string => `fetch(${url(path)}, { credentials: 'include' })`;
  const bare = (method: string, path: string): string => `fetch(${url(path)}, { method: '${method}', credentials: 'include' })`;
  const user = encodeURIComponent(victim);
  const made = uniqueName('made-by-app');
  return [
    ['make an account', json('POST', '/api/auth/users', { username: made, password: 'made-by-app-9q', level: 'ADMINISTRATOR' })],
    ['register an account', json('POST', '/api/auth/register', { username: `${made}-r`, password: 'made-by-app-9q', level: 'ADMINISTRATOR', client: CLIENT_SETTINGS })],
    ['change the password', json('POST', '/api/auth/account/password', { password: 'a guess', newPassword: 'taken-over-9q' })],
    ['set another account\'s password', json('PATCH', `/api/auth/users/${user}`, { password: 'taken-over-9q' })],
    ['turn off another account\'s TOTP', json('PATCH', `/api/auth/users/${user}`, { totp: false })],
    ['take another account\'s passkeys and tokens', json('PATCH', `/api/auth/users/${user}`, { passkeys: false, tokens: false })],
    ['start TOTP', json('POST', '/api/auth/account/totp', { password: 'a guess' })],
    ['turn off TOTP', json('POST', '/api/auth/account/totp/disable', { password: 'a guess' })],
    ['passkey options', json('POST', '/api/auth/account/passkeys/options', {})],
    ['add a passkey', json('POST', '/api/auth/account/passkeys', { name: 'app', credential: MADE_UP_CREDENTIAL, password: 'a guess' })],
    ['remove a passkey', json('DELETE', '/api/auth/account/passkeys/AAAAAAAAAAAAAAAAAAAAAA', { password: 'a guess' })],
    ['make a machine token', json('POST', '/api/auth/account/tokens', { name: 'app', password: 'a guess' })],
    ['revoke a machine token', bare('DELETE', '/api/auth/account/tokens/AAAAAAAAAAAAAAAAAAAAAA')],
    ['read the account', get('/api/auth/account')],
    ['list the sessions', get('/api/auth/account/sessions')],
    ['list the users', get('/api/auth/users')],
    ['read another account', get(`/api/auth/users/${user}`)],
    ['log out everywhere', json('POST', '/api/auth/account/logout-everywhere', {})],
    ['end another account\'s sessions', bare('DELETE', `/api/auth/users/${user}/sessions`)],
    ['make an invitation', json('POST', '/api/auth/invites', { level: 'ADMINISTRATOR' })],
    ['make a reset link', json('POST', `/api/auth/users/${user}/reset-link`, {})],
  ];
}

/** The ways a page posts to another origin without a CORS preflight, to Gatehouse's own site. */
function quietPosts(home: string): Array<readonly [string, string]> {
  const noCors = (path: string, body: unknown): string =>
    `fetch(${JSON.stringify(home + path)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(JSON.stringify(body))} })`;
  return [
    ['home: make an account, no-cors', noCors('/api/auth/users', { username: uniqueName('made-by-app'), password: 'made-by-app-9q', level: 'ADMINISTRATOR' })],
    ['home: log out everywhere, no-cors', noCors('/api/auth/account/logout-everywhere', {})],
    ['home: make a machine token, form', `form(${JSON.stringify(`${home}/api/auth/account/tokens`)}, { name: 'app', password: 'a guess' })`],
    ['home: make an invitation, form', `form(${JSON.stringify(`${home}/api/auth/invites`)}, { level: 'ADMINISTRATOR' })`],
    ['home: sign out, image', `image(${JSON.stringify(`${home}/api/auth/logout`)})`],
  ];
}

/**
 * What Gatehouse answered the attempts on its own site that reached it: the browser sent the reads
 * without the SameSite cookie, stopped the JSON ones at their preflight, and Gatehouse refused the
 * rest as coming from another site.
 */
const homeRefusals = (victim: string): string[] => [
  'GET /api/auth/account 401',
  'GET /api/auth/logout 403',
  'OPTIONS /api/auth/users 405',
  `OPTIONS /api/auth/users/${encodeURIComponent(victim)} 405`,
  'POST /api/auth/account/logout-everywhere 403',
  'POST /api/auth/account/tokens 403',
  'POST /api/auth/invites 403',
  'POST /api/auth/users 403',
].sort();

for (const kind of PROXY_KINDS) {
  describe(`an app's page through ${kind}: no power over accounts; signing in still works`, () => {
    let stack: Stack;
    let browser: Chromium;
    let admin: ProxyUser;
    let user: ProxyUser;
    let appOrigin: string;

    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app', publicUrl: true });
      appOrigin = `http://${APP_HOST}:${stack.proxy.port}`;
      // The first account anywhere (none exists yet), then as Gatehouse's own site's administrator.
      admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      user = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
      browser = await Chromium.launch({ hostsToLoopback: ['*.example.com'] });
    });
    after(async () => {
      await browser?.close();
      await stack?.stop();
    });

    /** Signs in on the sign-in page at `origin` (the password step), asked for by the gate from `origin/notes`. */
    async function signInThroughGate(page: Page, origin: string, who: { username: string; password: string }): Promise<void> {
      await page.navigate(`${origin}/notes`);
      await page.waitForUrl((url) => url.origin === origin && url.pathname === '/login');
      await submitForm(page, 'login', { username: who.username, password: who.password });
      await page.waitForUrl((url) => url.origin === origin && url.pathname === '/notes');
    }

    /** What Gatehouse's own site says of the accounts: who exists, each account's ways in, its sessions, open links. */
    async function accounts(): Promise<unknown> {
      const asAdmin = async (path: string): Promise<unknown> => {
        const res = await viaHome(stack.home, { path, token: admin.token });
        assert.equal(res.status, 200, `${path} on Gatehouse's own site: ${res.text}`);
        return res.json;
      };
      const names = ((await asAdmin('/api/auth/users')) as Array<{ username: string }>).map((each) => each.username).sort();
      const each = [];
      for (const name of names) {
        const path = `/api/auth/users/${encodeURIComponent(name)}`;
        each.push({ account: await asAdmin(path), sessions: ((await asAdmin(`${path}/sessions`)) as unknown[]).length });
      }
      return { names, each, invites: await asAdmin('/api/auth/invites') };
    }

    for (const role of ['ADMINISTRATOR', 'USER'] as const) {
      it(`a page of the app signed in as ${role === 'ADMINISTRATOR' ? 'an administrator' : 'a user'} makes, changes, reads, ends and mints nothing, on its own origin or on Gatehouse's`, async () => {
        const person = role === 'ADMINISTRATOR' ? admin : user;
        const victim = role === 'ADMINISTRATOR' ? user : admin;
        const page = await browser.newPage();
        try {
          // Signed in on Gatehouse's own site too, in the same browser, as a person who manages accounts is.
          await signInThroughGate(page, appOrigin, person);
          await page.navigate(`${stack.home.origin}/login`);
          await submitForm(page, 'login', { username: person.username, password: person.password });
          await page.waitForUrl((url) => url.origin === stack.home.origin && url.pathname !== '/login');
          await page.navigate(`${appOrigin}/an-app-page`);
          await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/an-app-page');
          const appCookie = (await page.cookies(`${appOrigin}/`)).find((cookie) => cookie.name === 'jwt');
          const homeCookie = (await page.cookies(`${stack.home.origin}/`)).find((cookie) => cookie.name === 'jwt');
          assert.ok(appCookie !== undefined && homeCookie !== undefined, 'signed in on both sites');

          const before = await accounts();
          const from = await loggedSoFar(stack.gatehouse, stack.home);
          const own = await runInPage(page, powers('', victim.username));
          const crossOrigin = await runInPage(page, [
            ['home: read the account', `fetch(${JSON.stringify(`${stack.home.origin}/api/auth/account`)}, { credentials: 'include' })`],
            ...powers(stack.home.origin, victim.username).filter(([label]) => label === 'make an account' || label === 'set another account\'s password').map(([label, expression]) => [`home: ${label}, JSON`, expression] as const),
            ...quietPosts(stack.home.origin),
          ]);

          // On the app's own origin the proxy answers 404 and Gatehouse is never asked.
          for (const [label, outcome] of own) {
            assert.match(outcome, /^404 /, `${label}: ${outcome.slice(0, 200)}`);
            assert.doesNotMatch(outcome, /"code"/, `${label} is not Gatehouse's answer: ${outcome.slice(0, 200)}`);
          }
          assert.deepEqual(stack.upstream.seen.filter((seen) => /^\/api\/auth\//i.test(seen.url)), [], 'nor the app');
          // On Gatehouse's origin the browser reads nothing back, and Gatehouse refuses what reaches it.
          for (const [label, outcome] of crossOrigin) {
            assert.match(outcome, /^(blocked: |opaque$|loaded ?$)/, `${label}: ${outcome.slice(0, 200)}`);
          }
          const answered = answeredSince(stack.gatehouse, from, await loggedSoFar(stack.gatehouse, stack.home));
          assert.deepEqual(sortedAnswers(answered), homeRefusals(victim.username), JSON.stringify(crossOrigin));

          // Nothing changed, as Gatehouse's own site shows, and both sessions still work.
          assert.deepEqual(await accounts(), before);
          for (const [origin, cookie] of [[appOrigin, appCookie], [stack.home.origin, homeCookie]] as const) {
            const verify = origin === appOrigin
              ? await viaProxy(stack.proxy.port, { path: '/api/auth/verify', token: cookie.value, headers: { host: `${APP_HOST}:${stack.proxy.port}` } })
              : await viaHome(stack.home, { path: '/api/auth/verify', token: cookie.value });
            assert.equal((verify.json as { username?: string }).username, person.username, `the session on ${origin} still works`);
          }
          for (const who of [person, victim]) {
            const signIn = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: who.username, password: who.password } });
            assert.equal(signIn.status, 200, `${who.username}'s password is unchanged: ${signIn.text}`);
          }
        } finally {
          await page.close();
        }
      });
    }

    it('signs in on the app\'s site with the password and then the TOTP code', async () => {
      const coder = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
      const begun = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/totp', token: coder.token, body: { password: coder.password } });
      assert.equal(begun.status, 200, begun.text);
      const seed = decodeBase32((begun.json as { secret: string }).secret);
      assert.ok(seed !== undefined);
      const confirmed = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/totp/confirm', token: coder.token, body: { code: totpCode(seed, Date.now()) } });
      assert.equal(confirmed.status, 200, confirmed.text);
      const page = await browser.newPage();
      try {
        await page.navigate(`${appOrigin}/notes`);
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/login');
        await submitForm(page, 'login', { username: coder.username, password: coder.password });
        // The next step's code: confirming spent this one's.
        await submitForm(page, 'code-step', { code: totpCode(seed, Date.now() + 30_000) });
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/notes');
        const seen = await page.evaluate<{ headers: Record<string, string> }>('JSON.parse(document.body.innerText)');
        assert.equal(seen.headers['remote-user'], coder.username, 'the app is reached as the account');
      } finally {
        await page.close();
      }
    });

    it('signs in on the app\'s site with a passkey made on Gatehouse\'s own site, where the origin allows one (localhost)', async () => {
      const keyholder = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
      const page = await browser.newPage();
      try {
        await page.addVirtualAuthenticator();
        // The account page on Gatehouse's own site makes the passkey.
        await page.navigate(`${stack.home.origin}/gatehouse/account`);
        await page.waitForUrl((url) => url.origin === stack.home.origin && url.pathname === '/login');
        await submitForm(page, 'login', { username: keyholder.username, password: keyholder.password });
        await page.waitForUrl((url) => url.origin === stack.home.origin && url.pathname === '/gatehouse/account');
        await submitForm(page, 'passkey-add', { 'passkey-name': 'Laptop', 'passkey-password': keyholder.password });
        await page.waitFor(`document.querySelectorAll('#passkey-list li').length === 1`, 20_000);
        await page.navigate(`${stack.home.origin}/logout`);
        await page.waitForUrl((url) => url.origin === stack.home.origin && url.pathname === '/login');
        // The app's site by a loopback name: an app's origin (another port), a secure context.
        const appOnLoopback = `http://localhost:${stack.proxy.port}`;
        await page.navigate(`${appOnLoopback}/notes`);
        await page.waitForUrl((url) => url.origin === appOnLoopback && url.pathname === '/login');
        await page.waitFor(`document.getElementById('passkey') !== null && !document.getElementById('passkey').disabled && !document.getElementById('passkey-step').hidden`);
        await click(page, 'passkey');
        await page.waitForUrl((url) => url.origin === appOnLoopback && url.pathname === '/notes', 20_000);
        const seen = await page.evaluate<{ headers: Record<string, string> }>('JSON.parse(document.body.innerText)');
        assert.equal(seen.headers['remote-user'], keyholder.username);
      } finally {
        await page.close();
      }
    });

    it('shows the 403 page on the app\'s site, and signs out there through its link', async () => {
      const page = await browser.newPage();
      try {
        await signInThroughGate(page, appOrigin, user);
        await page.navigate(`${appOrigin}/admin/settings`);
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/admin/settings');
        assert.equal(await page.waitFor<string>(`document.getElementById('username')?.textContent ?? ''`), user.username);
        await click(page, 'switch');
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/login');
        assert.deepEqual((await page.cookies(`${appOrigin}/`)).filter((cookie) => cookie.name === 'jwt'), [], 'signed out of the app\'s site');
        await page.navigate(`${appOrigin}/notes`);
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/login');
      } finally {
        await page.close();
      }
    });

    it('signs out on the app\'s site at /logout', async () => {
      const page = await browser.newPage();
      try {
        await signInThroughGate(page, appOrigin, user);
        const cookie = (await page.cookies(`${appOrigin}/`)).find((each) => each.name === 'jwt');
        assert.ok(cookie !== undefined);
        await page.navigate(`${appOrigin}/logout`);
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/login');
        assert.deepEqual((await page.cookies(`${appOrigin}/`)).filter((each) => each.name === 'jwt'), []);
        assert.equal((await viaProxy(stack.proxy.port, { path: '/notes', headers: { accept: 'application/json' } })).status, 401);
      } finally {
        await page.close();
      }
    });

    it('leads the sign-in page\'s account link to Gatehouse\'s own site, and sends the app\'s /gatehouse/ there too', async () => {
      const page = await browser.newPage();
      try {
        await page.navigate(`${appOrigin}/login`);
        await page.waitFor(`document.readyState === 'complete' && document.getElementById('account-link') !== null`);
        assert.equal(await page.evaluate<string>(`document.getElementById('account-link').href`), `${stack.home.origin}/gatehouse/account`);
        await click(page, 'account-link');
        await page.waitForUrl((url) => url.origin === stack.home.origin);
        assert.ok(page.navigations.includes(`${stack.home.origin}/gatehouse/account`), page.navigations.join(' -> '));
        // An old link, or one typed, to the account surface on the app's site: the recipe sends it to Gatehouse, which sends it home.
        await page.navigate(`${appOrigin}/gatehouse/users?from=app`);
        await page.waitForUrl((url) => url.origin === stack.home.origin);
        assert.ok(page.navigations.includes(`${stack.home.origin}/gatehouse/users?from=app`), page.navigations.join(' -> '));
      } finally {
        await page.close();
      }
    });
  });
}
