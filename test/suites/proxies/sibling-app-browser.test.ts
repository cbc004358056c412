// Apps beside Gatehouse, in Chromium through real nginx and Caddy running deploy/'s app recipe
// (app.example.com and photos.example.com on one port, each carrying Gatehouse's sign-in surface
// only) with --cookie-domain example.com, so the session cookie reaches both
// (docs/contract/access.md "Cross-site rule").
// - A sibling app's page (photos.example.com: same site, another origin) cannot sign the user out
//   at app.example.com: a fetch or an image to its /api/auth/logout is refused with 403
//   CROSS_SITE_REQUEST, and its link to /logout gets a page with a button. Its attempts at the
//   account API there (log out everywhere, a machine token, a passkey: by fetch, form or a JSON
//   fetch with its preflight) never reach Gatehouse: the app's site answers 404 for them. First as
//   over https (Fetch Metadata sent), then over plain http, where the browser sends no
//   Sec-Fetch-Site.
// - Over plain http a GET carries neither Sec-Fetch-Site nor Origin, so a sibling's link or image
//   to a sign-out address is not told apart from the user's own (a known gap): only changes are tried there.
// The session the user signed in with is checked to be still valid after each. What an app's own
// page can do on its own site: own-origin-browser.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, SECOND_APP_HOST, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { runInPage } from './page-actions.js';
import { answeredSince, loggedSoFar, registerVia, sortedAnswers, viaHome, viaProxy, waitForAnswers, type ProxyUser } from './through-proxy.js';

const APP_HOST = 'app.example.com';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** Signs in on the sign-in page at `origin` and waits to land on the app. */
async function signIn(page: Page, origin: string, user: ProxyUser): Promise<void> {
  await page.navigate(`${origin}/login`);
  await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
  await page.evaluate(`(() => {
    document.getElementById('username').value = ${JSON.stringify(user.username)};
    document.getElementById('password').value = ${JSON.stringify(user.password)};
    document.getElementById('login').requestSubmit();
    return true;
  })()`);
  await page.waitForUrl((url) => url.origin === origin && url.pathname === '/');
}

const TEXT = "{ 'content-type': 'text/plain' }";
/** A registration response of the right shape (it would fail verification): what a page can make up. */
const MADE_UP_CREDENTIAL = {
  id: 'AAAAAAAAAAAAAAAAAAAAAA',
  rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
  type: 'public-key',
  response: { clientDataJSON: 'e30', attestationObject: 'oA' },
};

/** Every way a sibling's page posts a change to Gatehouse at `target` without a CORS preflight, and one with. */
function postAttempts(target: string): Array<readonly [string, string]> {
  const noCors = (path: string, body: unknown): string =>
    `fetch(${JSON.stringify(target + path)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: ${TEXT}, body: ${JSON.stringify(JSON.stringify(body))} })`;
  const form = (path: string, fields: Record<string, string>): string => `form(${JSON.stringify(target + path)}, ${JSON.stringify(fields)})`;
  return [
    ['log out everywhere, fetch', noCors('/api/auth/account/logout-everywhere', {})],
    ['log out everywhere, form', form('/api/auth/account/logout-everywhere', { x: '1' })],
    ['machine token, fetch', noCors('/api/auth/account/tokens', { name: 'sibling', password: 'a guess' })],
    ['machine token, form', form('/api/auth/account/tokens', { name: 'sibling', password: 'a guess' })],
    ['machine token, JSON', `fetch(${JSON.stringify(`${target}/api/auth/account/tokens`)}, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"name":"sibling"}' })`],
    ['passkey options, fetch', noCors('/api/auth/account/passkeys/options', {})],
    ['passkey, fetch', noCors('/api/auth/account/passkeys', { name: 'sibling', credential: MADE_UP_CREDENTIAL, password: 'a guess' })],
    ['passkey, form', form('/api/auth/account/passkeys', { name: 'sibling', password: 'a guess' })],
  ];
}

/** Every outcome of postAttempts: nothing readable (404s the sibling may not read), the JSON fetch stopped at its preflight. */
function assertNoneReadable(outcomes: ReadonlyArray<[string, string]>): void {
  for (const [label, outcome] of outcomes) assert.match(outcome, /^(opaque$|loaded ?$|blocked: )/, `${label}: ${outcome.slice(0, 200)}`);
  assert.match(outcomes.find(([label]) => label === 'machine token, JSON')?.[1] ?? '', /^blocked: /, 'the browser stops the JSON fetch at its preflight');
}

for (const kind of PROXY_KINDS) {
  describe(`a sibling app's page, in Chromium through ${kind} with --cookie-domain`, () => {
    let stack: Stack;
    let admin: ProxyUser;
    let appOrigin: string;
    let siblingOrigin: string;

    before(async () => {
      assertBuilt();
      stack = await startStack({
        proxy: kind,
        recipe: 'app',
        // Passkeys on (rp.id example.com), so adding one is refused by the rules, not because they are off.
        gatehouseArgs: ['--cookie-domain', 'example.com', '--passkey-origins', `https://${APP_HOST}`, '--revoke-on-logout'],
      });
      appOrigin = `http://${APP_HOST}:${stack.proxy.port}`;
      siblingOrigin = `http://${SECOND_APP_HOST}:${stack.proxy.port}`;
      admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
    });
    after(async () => {
      await stack?.stop();
    });

    /** A new account in the group the sibling app is open to. */
    async function newUser(): Promise<ProxyUser> {
      const user = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
      const grouped = await viaHome(stack.home, { method: 'PATCH', path: `/api/auth/users/${encodeURIComponent(user.username)}`, token: admin.token, body: { groups: ['family'] } });
      assert.equal(grouped.status, 200, grouped.text);
      return user;
    }

    /** The session this browser signed in with still opens the app, and its account (on Gatehouse's own site) has no token or passkey. */
    async function assertStillSignedIn(page: Page): Promise<void> {
      await page.navigate(`${appOrigin}/`);
      await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/');
      const cookie = (await page.cookies(`${appOrigin}/`)).find((each) => each.name === 'jwt');
      assert.ok(cookie !== undefined, 'the browser still holds the session cookie');
      assert.equal((await viaProxy(stack.proxy.port, { path: '/api/auth/verify', token: cookie.value })).status, 200, 'the session is not revoked');
      const account = await viaHome(stack.home, { path: '/api/auth/account', token: cookie.value });
      assert.equal(account.status, 200, `the session ended: ${account.text}`);
      const body = account.json as { tokens?: unknown[]; passkeys?: unknown[] };
      assert.deepEqual([body.tokens, body.passkeys], [[], []]);
    }

    /** Signs `user` in at app.example.com in a fresh browser context and opens the sibling app's page. */
    async function siblingPage(browser: Chromium, user: ProxyUser): Promise<Page> {
      const page = await browser.newPage();
      await signIn(page, appOrigin, user);
      const cookies = await page.cookies(`${siblingOrigin}/`);
      assert.ok(cookies.some((cookie) => cookie.name === 'jwt'), 'the session cookie reaches the sibling (--cookie-domain)');
      await page.navigate(`${siblingOrigin}/gallery`);
      await page.waitForUrl((url) => url.origin === siblingOrigin);
      return page;
    }

    describe('as over https: the browser sends Sec-Fetch-Site', () => {
      let browser: Chromium;
      before(async () => {
        browser = await Chromium.launch({ hostsToLoopback: ['*.example.com'], secureOrigins: [appOrigin, siblingOrigin] });
      });
      after(async () => {
        await browser?.close();
      });

      it('a sibling app\'s page cannot sign the user out, log out everywhere, make a machine token or add a passkey', async () => {
        const user = await newUser();
        const page = await siblingPage(browser, user);
        const from = await loggedSoFar(stack.gatehouse, stack.home);
        const logout = `${appOrigin}/api/auth/logout`;
        const outcomes = await runInPage(page, [
          ['sign out, fetch', `fetch(${JSON.stringify(logout)}, { mode: 'no-cors', credentials: 'include' })`],
          ['sign out, image', `image(${JSON.stringify(`${logout}?as-image`)})`],
          ...postAttempts(appOrigin),
        ]);
        assertNoneReadable(outcomes.filter(([label]) => !label.startsWith('sign out')));
        // Only the sign-out reached Gatehouse, refused; the rest the app's site answered 404.
        const answered = answeredSince(stack.gatehouse, from, await loggedSoFar(stack.gatehouse, stack.home));
        assert.deepEqual(sortedAnswers(answered), ['GET /api/auth/logout 403', 'GET /api/auth/logout 403'], JSON.stringify(outcomes));
        await assertStillSignedIn(page);
        await page.close();
      });

      it('a sibling app\'s link to {base}/logout shows a page with a Sign out button and signs nothing out', async () => {
        const user = await newUser();
        const page = await siblingPage(browser, user);
        const from = await loggedSoFar(stack.gatehouse, stack.home);
        await page.evaluate(`(() => {
          const link = document.createElement('a');
          link.href = ${JSON.stringify(`${appOrigin}/logout`)};
          document.body.append(link);
          link.click();
          return true;
        })()`);
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/logout');
        assert.equal(await page.waitFor<boolean>(`document.getElementById('sign-out') !== null`), true);
        assert.deepEqual(sortedAnswers(await waitForAnswers(stack.gatehouse, from, 1)), ['GET /logout 200']);
        await assertStillSignedIn(page);
        await page.close();
      });
    });

    describe('over plain http: no Sec-Fetch-Site', () => {
      let browser: Chromium;
      before(async () => {
        browser = await Chromium.launch({ hostsToLoopback: ['*.example.com'] });
      });
      after(async () => {
        await browser?.close();
      });

      it('a sibling app\'s page cannot log out everywhere, make a machine token or add a passkey', async () => {
        const user = await newUser();
        const page = await siblingPage(browser, user);
        const from = await loggedSoFar(stack.gatehouse, stack.home);
        assertNoneReadable(await runInPage(page, postAttempts(appOrigin)));
        assert.deepEqual(answeredSince(stack.gatehouse, from, await loggedSoFar(stack.gatehouse, stack.home)), [], 'none reached Gatehouse');
        await assertStillSignedIn(page);
        await page.close();
      });
    });
  });
}
