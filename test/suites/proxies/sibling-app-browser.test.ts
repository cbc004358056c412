// Apps beside Gatehouse, in Chromium through real nginx and Caddy running deploy/'s app recipe
// (app.example.com and photos.example.com on one port, Gatehouse's routes on both) with
// --cookie-domain example.com, so the session cookie reaches both (docs/contract/access.md "Cross-site rule").
// - A sibling app's page (photos.example.com: same site, another origin) cannot sign the user out,
//   log out everywhere, make a machine token or add a passkey at app.example.com: each attempt, by
//   fetch, image or form, is refused with 403 CROSS_SITE_REQUEST, or stopped by the browser's CORS
//   preflight. First as over https (Fetch Metadata sent), then over plain http, where the browser
//   sends no Sec-Fetch-Site and a change is judged by its Origin.
// - An app's own page on the origin where the snippets route /api/auth/ (app.example.com/…) is
//   Gatehouse's own origin to the browser: without the password it makes no token, passkey or
//   password change (400, 403 WRONG_PASSWORD, 415 for a form). It can take access away (sign out,
//   log out everywhere), which any session of the account may do: a known gap, pinned below.
// - Over plain http a GET carries neither Sec-Fetch-Site nor Origin, so a sibling's link or image
//   to a sign-out address is not told apart from the user's own (a known gap): only changes are tried there.
// The session the user signed in with is checked to be still valid after each.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, SECOND_APP_HOST, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { registerVia, viaProxy, type ProxyUser } from './through-proxy.js';

const APP_HOST = 'app.example.com';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

interface Answered {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** Gatehouse's request log from line `from` on, for paths under /api/auth/ and /logout (not the gate's checks). */
function answeredSince(stack: Stack, from: number): Answered[] {
  return stack.gatehouse.stdoutLines.slice(from).flatMap((line) => {
    let record: { msg?: unknown; method?: unknown; path?: unknown; status?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      return [];
    }
    if (record.msg !== 'request' || typeof record.path !== 'string' || typeof record.method !== 'string' || typeof record.status !== 'number') return [];
    const isGate = record.path === '/api/auth/forward' || record.path === '/api/auth/verify';
    return (record.path.startsWith('/api/auth/') || record.path === '/logout') && !isGate
      ? [{ method: record.method, path: record.path, status: record.status }]
      : [];
  });
}

/** Waits until Gatehouse has logged `count` such answers since `from` (its log is written in batches). */
async function waitForAnswers(stack: Stack, from: number, count: number): Promise<Answered[]> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const answered = answeredSince(stack, from);
    if (answered.length >= count) return answered;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`Gatehouse logged ${JSON.stringify(answeredSince(stack, from))}, expected ${count} answers\n${stack.describe().slice(-2_000)}`);
}

const sorted = (answers: readonly Answered[]): string[] => answers.map((answer) => `${answer.method} ${answer.path} ${answer.status}`).sort();

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

/**
 * What the page's own script can do, run in the page (Runtime.evaluate: the page's origin, its
 * cookies, no user gesture): `tries` is a list of [label, expression giving a Promise].
 * Answers [label, outcome] where outcome is the status when the page may read it, `opaque` for a
 * no-cors answer, `loaded` for an image or a form in a frame, or `blocked: …` when the browser refused.
 */
async function runInPage(page: Page, tries: ReadonlyArray<readonly [string, string]>): Promise<Array<[string, string]>> {
  const body = tries.map(([label, expression]) => `await attempt(${JSON.stringify(label)}, () => ${expression});`).join('\n');
  return page.evaluate<Array<[string, string]>>(`(async () => {
    const outcomes = [];
    const attempt = async (label, run) => {
      try {
        const answer = await run();
        outcomes.push([label, answer instanceof Response ? (answer.type === 'opaque' ? 'opaque' : String(answer.status) + ' ' + (await answer.text())) : String(answer)]);
      } catch (error) {
        outcomes.push([label, 'blocked: ' + error.message]);
      }
    };
    const image = (url) => new Promise((resolve) => {
      const img = new Image();
      img.onload = img.onerror = () => resolve('loaded');
      img.src = url;
    });
    // A form posted into a frame of its own, as a page posts one without script.
    const form = (url, fields) => new Promise((resolve) => {
      const name = 'sink' + Math.random().toString(36).slice(2);
      const frame = document.createElement('iframe');
      frame.name = name;
      document.body.append(frame);
      // What the frame shows, when the page may read it (its own origin's answer).
      frame.onload = () => resolve('loaded ' + (frame.contentDocument?.body?.innerText ?? ''));
      const element = document.createElement('form');
      element.method = 'post';
      element.action = url;
      element.target = name;
      for (const [key, value] of Object.entries(fields)) {
        const input = document.createElement('input');
        input.name = key;
        input.value = value;
        element.append(input);
      }
      document.body.append(element);
      element.submit();
    });
    ${body}
    return outcomes;
  })()`);
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

/** What Gatehouse answered to postAttempts: 403 to each POST that reached it, 405 to the JSON fetch's preflight. */
const POST_REFUSALS = [
  'POST /api/auth/account/logout-everywhere 403',
  'POST /api/auth/account/logout-everywhere 403',
  'POST /api/auth/account/tokens 403',
  'POST /api/auth/account/tokens 403',
  'OPTIONS /api/auth/account/tokens 405',
  'POST /api/auth/account/passkeys/options 403',
  'POST /api/auth/account/passkeys 403',
  'POST /api/auth/account/passkeys 403',
].sort();

for (const kind of PROXY_KINDS) {
  describe(`a sibling app's page and an app's own page, in Chromium through ${kind} with --cookie-domain`, () => {
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
      admin = await registerVia(stack.proxy.port, { level: 'ADMINISTRATOR' });
    });
    after(async () => {
      await stack?.stop();
    });

    /** A new account in the group the sibling app is open to. */
    async function newUser(): Promise<ProxyUser> {
      const user = await registerVia(stack.proxy.port, { level: 'USER', adminToken: admin.token });
      const grouped = await viaProxy(stack.proxy.port, { method: 'PATCH', path: `/api/auth/users/${encodeURIComponent(user.username)}`, token: admin.token, body: { groups: ['family'] } });
      assert.equal(grouped.status, 200, grouped.text);
      return user;
    }

    /** The session this browser signed in with still opens the account, and the account has no token or passkey. */
    async function assertStillSignedIn(page: Page): Promise<void> {
      await page.navigate(`${appOrigin}/`);
      await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/');
      const account = await page.evaluate<{ status: number; body: { tokens?: unknown[]; passkeys?: unknown[] } }>(
        `fetch('/api/auth/account').then(async (answer) => ({ status: answer.status, body: await answer.json() }))`,
      );
      assert.equal(account.status, 200, `the session ended: ${JSON.stringify(account.body)}`);
      assert.deepEqual([account.body.tokens, account.body.passkeys], [[], []]);
      const cookie = (await page.cookies(`${appOrigin}/`)).find((each) => each.name === 'jwt');
      assert.ok(cookie !== undefined, 'the browser still holds the session cookie');
      assert.equal((await viaProxy(stack.proxy.port, { path: '/api/auth/verify', token: cookie.value })).status, 200, 'the session is not revoked');
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
        const from = stack.gatehouse.stdoutLines.length;
        const logout = `${appOrigin}/api/auth/logout`;
        const outcomes = await runInPage(page, [
          ['sign out, fetch', `fetch(${JSON.stringify(logout)}, { mode: 'no-cors', credentials: 'include' })`],
          ['sign out, image', `image(${JSON.stringify(`${logout}?as-image`)})`],
          ...postAttempts(appOrigin),
        ]);
        const jsonFetch = outcomes.find(([label]) => label === 'machine token, JSON');
        assert.match(jsonFetch?.[1] ?? '', /^blocked: /, 'the browser stops the JSON fetch at its preflight');
        const answered = await waitForAnswers(stack, from, POST_REFUSALS.length + 2);
        assert.deepEqual(sorted(answered), [...POST_REFUSALS, 'GET /api/auth/logout 403', 'GET /api/auth/logout 403'].sort(), JSON.stringify(outcomes));
        await assertStillSignedIn(page);
        await page.close();
      });

      it('a sibling app\'s link to {base}/logout shows a page with a Sign out button and signs nothing out', async () => {
        const user = await newUser();
        const page = await siblingPage(browser, user);
        const from = stack.gatehouse.stdoutLines.length;
        await page.evaluate(`(() => {
          const link = document.createElement('a');
          link.href = ${JSON.stringify(`${appOrigin}/logout`)};
          document.body.append(link);
          link.click();
          return true;
        })()`);
        await page.waitForUrl((url) => url.origin === appOrigin && url.pathname === '/logout');
        assert.equal(await page.waitFor<boolean>(`document.getElementById('sign-out') !== null`), true);
        assert.deepEqual(sorted(await waitForAnswers(stack, from, 1)), ['GET /logout 200']);
        await assertStillSignedIn(page);
        await page.close();
      });

      it('an app\'s own page on Gatehouse\'s origin makes no token, passkey or password change without the password', async () => {
        const user = await newUser();
        const page = await browser.newPage();
        await signIn(page, appOrigin, user);
        await page.navigate(`${appOrigin}/an-app-page`);
        await page.waitForUrl((url) => url.pathname === '/an-app-page');
        const from = stack.gatehouse.stdoutLines.length;
        const json = (path: string, body: unknown): string =>
          `fetch(${JSON.stringify(path)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(JSON.stringify(body))} })`;
        const outcomes = await runInPage(page, [
          ['machine token, no password', json('/api/auth/account/tokens', { name: 'app' })],
          ['machine token, a guess', json('/api/auth/account/tokens', { name: 'app', password: 'a guess' })],
          ['machine token, text', `fetch('/api/auth/account/tokens', { method: 'POST', headers: ${TEXT}, body: '{"name":"app"}' })`],
          ['machine token, form', `form('/api/auth/account/tokens', { name: 'app', password: 'a guess' })`],
          ['passkey, no password', json('/api/auth/account/passkeys', { name: 'app', credential: MADE_UP_CREDENTIAL })],
          ['passkey, a guess', json('/api/auth/account/passkeys', { name: 'app', credential: MADE_UP_CREDENTIAL, password: 'a guess' })],
          ['password, a guess', json('/api/auth/account/password', { password: 'a guess', newPassword: 'the app\'s now' })],
        ]);
        const codes = outcomes.map(([label, outcome]) => [label, /^(\d{3}|loaded)/.exec(outcome)?.[1], /"code":"([A-Z_]+)"/.exec(outcome)?.[1]]);
        assert.deepEqual(codes, [
          ['machine token, no password', '400', 'VALIDATION_FAILED'],
          ['machine token, a guess', '403', 'WRONG_PASSWORD'],
          ['machine token, text', '415', 'UNSUPPORTED_MEDIA_TYPE'],
          ['machine token, form', 'loaded', 'UNSUPPORTED_MEDIA_TYPE'],
          ['passkey, no password', '400', 'VALIDATION_FAILED'],
          ['passkey, a guess', '403', 'WRONG_PASSWORD'],
          ['password, a guess', '403', 'WRONG_PASSWORD'],
        ]);
        assert.equal((await waitForAnswers(stack, from, 7)).filter((answer) => answer.status === 200).length, 0);
        await assertStillSignedIn(page);
        await page.close();
      });

      // A known gap (SECURITY.md "Known gaps"), pinned so that closing it shows here: the snippets
      // route /api/auth/ on every app's site, so an app's page, or a sibling app's page on its own
      // site, is Gatehouse's own origin to the browser, and taking access away needs any session.
      it('an app\'s page on a site where the snippets route /api/auth/ can read the account and log out everywhere there', async () => {
        const user = await newUser();
        const page = await siblingPage(browser, user);
        const from = stack.gatehouse.stdoutLines.length;
        const outcomes = await runInPage(page, [
          ['account', `fetch('/api/auth/account')`],
          ['log out everywhere', `fetch('/api/auth/account/logout-everywhere', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })`],
        ]);
        assert.deepEqual(outcomes.map(([label, outcome]) => [label, outcome.slice(0, 3)]), [['account', '200'], ['log out everywhere', '200']]);
        assert.deepEqual(sorted(await waitForAnswers(stack, from, 2)), ['GET /api/auth/account 200', 'POST /api/auth/account/logout-everywhere 200']);
        await page.close();
      });
    });

    describe('over plain http: no Sec-Fetch-Site, a change is judged by its Origin', () => {
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
        const from = stack.gatehouse.stdoutLines.length;
        await runInPage(page, postAttempts(appOrigin));
        assert.deepEqual(sorted(await waitForAnswers(stack, from, POST_REFUSALS.length)), POST_REFUSALS);
        await assertStillSignedIn(page);
        await page.close();
      });
    });
  });
}
