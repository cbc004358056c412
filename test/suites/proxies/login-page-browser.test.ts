// Gatehouse's login page in a real browser (headless Chromium over --remote-debugging-pipe), behind
// the app recipe run by a real nginx and a real Caddy, so cookies and redirects are real.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page, type PageProblem } from '../../helpers/chromium.js';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { registerVia, viaProxy, type ProxyUser } from './through-proxy.js';

const HOSTILE_REDIRECTS = ['https://evil.example/', '//evil.example', 'javascript:alert(1)', '/\\evil.example', 'http://evil.example@127.0.0.1/'];

let browser: Chromium | undefined;

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
});

after(async () => {
  await browser?.close();
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** Types into the login form and submits it the way a person does (the page's own submit handler runs). */
async function submitLogin(page: Page, username: string, password: string): Promise<void> {
  await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
  await page.evaluate(`(() => {
    document.getElementById('username').value = ${JSON.stringify(username)};
    document.getElementById('password').value = ${JSON.stringify(password)};
    document.getElementById('login').requestSubmit();
    return true;
  })()`);
}

/**
 * What the page reported, less the 401s the login page expects: its verify call while logged out
 * and a wrong password's authenticate, which Chromium logs as failed resources. Anything else (a
 * CSP violation, an exception, a console error, another failed load) is a problem.
 */
function unexpectedProblems(page: Page): PageProblem[] {
  return page.problems.filter((problem) => !(problem.source === 'log:network' && /status of 401 .*\/api\/auth\/(verify|authenticate)$/.test(problem.text)));
}

/** What the echoing app received, read from the JSON page Chromium shows. */
async function upstreamEcho(page: Page): Promise<{ url: string; headers: Record<string, string | undefined> }> {
  const text = await page.waitFor<string>(`document.body && document.body.innerText.startsWith('{') ? document.body.innerText : ''`);
  return JSON.parse(text) as { url: string; headers: Record<string, string | undefined> };
}

for (const kind of PROXY_KINDS) {
  describe(`the login page in Chromium, through ${kind}`, () => {
    let stack: Stack;
    let user: ProxyUser;
    const pages: Page[] = [];
    const openPage = async (): Promise<Page> => {
      assert.ok(browser !== undefined, 'chromium started');
      const page = await browser.newPage();
      pages.push(page);
      return page;
    };
    /** A fresh browser context logged in through the login page, now on the upstream's `/`. */
    const loggedInPage = async (): Promise<Page> => {
      const page = await openPage();
      await page.navigate(`${stack.proxy.origin}/login`);
      await submitLogin(page, user.username, user.password);
      await page.waitForUrl((url) => url.pathname === '/');
      return page;
    };

    before(async () => {
      stack = await startStack({ proxy: kind, recipe: 'app' });
      const admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      user = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
    });
    after(async () => {
      for (const page of pages) await page.close();
      await stack?.stop();
    });

    it('takes a logged-out visit to a protected page to the login page, then back to that page once the right password is given', async () => {
      const page = await openPage();
      const wanted = `${stack.proxy.origin}/reports/2026?x=1&y=a%20b`;
      await page.navigate(wanted);
      const login = await page.waitForUrl((url) => url.pathname === '/login');
      assert.equal(login.searchParams.get('rd'), wanted);
      assert.equal(await page.evaluate(`document.getElementById('username') !== null && document.getElementById('password').type`), 'password');

      await submitLogin(page, user.username, user.password);
      const back = await page.waitForUrl((url) => url.pathname !== '/login');
      assert.equal(back.href, wanted);
      const echo = await upstreamEcho(page);
      assert.equal(echo.url, '/reports/2026?x=1&y=a%20b');
      assert.equal(echo.headers['remote-user'], user.username);
      assert.deepEqual(unexpectedProblems(page), [], 'no error, exception or CSP violation on the way');
    });

    it('shows the server\'s message on a wrong password and stays on the login page', async () => {
      const expected = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: 'wrong-password' } });
      assert.equal(expected.status, 401);
      const message = (expected.json as { message: string }).message;
      assert.ok(message.length > 0);

      const page = await openPage();
      await page.navigate(`${stack.proxy.origin}/login?rd=%2Freports`);
      await submitLogin(page, user.username, 'wrong-password');
      const shown = await page.waitFor<string>(`(() => { const m = document.getElementById('message'); return m && !m.hidden ? m.textContent : ''; })()`);
      assert.equal(shown, message);
      assert.equal(await page.evaluate('location.pathname'), '/login');
      assert.equal((await page.evaluate<boolean>(`document.getElementById('password').disabled`)), false, 'the form can be used again');
      assert.deepEqual(unexpectedProblems(page), []);
    });

    for (const hostile of HOSTILE_REDIRECTS) {
      it(`goes to / instead of rd=${hostile} after logging in`, async () => {
        const page = await openPage();
        await page.navigate(`${stack.proxy.origin}/login?rd=${encodeURIComponent(hostile)}`);
        await submitLogin(page, user.username, user.password);
        const landed = await page.waitForUrl((url) => url.pathname !== '/login' || url.origin !== stack.proxy.origin);
        assert.equal(landed.href, `${stack.proxy.origin}/`);
        assert.equal((await upstreamEcho(page)).headers['remote-user'], user.username);
        assert.deepEqual(unexpectedProblems(page), []);
      });
    }

    it('sends a user who already has a session on at once from /login?rd=…, and to / for a hostile rd', async () => {
      const page = await loggedInPage();
      await page.navigate(`${stack.proxy.origin}/login?rd=${encodeURIComponent(`${stack.proxy.origin}/elsewhere?z=1`)}`);
      const onward = await page.waitForUrl((url) => url.pathname !== '/login');
      assert.equal(onward.href, `${stack.proxy.origin}/elsewhere?z=1`);
      await page.navigate(`${stack.proxy.origin}/login?rd=${encodeURIComponent('https://evil.example/')}`);
      const home = await page.waitForUrl((url) => url.pathname !== '/login');
      assert.equal(home.href, `${stack.proxy.origin}/`);
      assert.deepEqual(unexpectedProblems(page), []);
    });

    it('closes the gate after logout: the next visit to a protected page lands on the login page again', async () => {
      const page = await loggedInPage();
      const status = await page.evaluate<number>(`fetch('/api/auth/logout', { credentials: 'same-origin' }).then((res) => res.status)`);
      assert.equal(status, 200);
      await page.navigate(`${stack.proxy.origin}/reports`);
      const login = await page.waitForUrl((url) => url.pathname === '/login');
      assert.equal(login.searchParams.get('rd'), `${stack.proxy.origin}/reports`);
    });

    it('notices a CSP violation when there is one (the control for the checks above)', async () => {
      const page = await loggedInPage();
      await page.navigate(`${stack.proxy.origin}/csp-violation`);
      await page.waitForUrl((url) => url.pathname === '/csp-violation');
      await page.waitFor(`document.getElementById('control') !== null`);
      const deadline = Date.now() + 5_000;
      while (page.problems.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(page.problems.some((problem) => /Content Security Policy|ContentSecurityPolicy|violatedDirective/i.test(problem.text)), JSON.stringify(page.problems));
      assert.equal(await page.evaluate('document.title'), 'control', 'the inline script was blocked');
    });
  });
}

for (const kind of PROXY_KINDS) {
  describe(`the login page in Chromium, through ${kind}, with --allowed-redirect-hosts localhost`, () => {
    let stack: Stack;
    let user: ProxyUser;
    let page: Page | undefined;
    before(async () => {
      stack = await startStack({ proxy: kind, recipe: 'app', gatehouseArgs: ['--allowed-redirect-hosts', 'localhost'] });
      user = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
    });
    after(async () => {
      await page?.close();
      await stack?.stop();
    });

    it('returns to a listed host after logging in, and still not to an unlisted one', async () => {
      assert.ok(browser !== undefined, 'chromium started');
      page = await browser.newPage();
      const listed = `http://localhost:${stack.proxy.port}/elsewhere?z=1`;
      await page.navigate(`${stack.proxy.origin}/login?rd=${encodeURIComponent(listed)}`);
      await submitLogin(page, user.username, user.password);
      // The session cookie is host-only (127.0.0.1), so the gate on localhost sends the browser
      // to localhost's own login page, rd pointing back where it was going.
      const landed = await page.waitForUrl((url) => url.hostname === 'localhost');
      assert.equal(landed.pathname, '/login');
      assert.equal(landed.searchParams.get('rd'), listed);

      await page.navigate(`${stack.proxy.origin}/login?rd=${encodeURIComponent(`http://127.0.0.2:${stack.proxy.port}/`)}`);
      const home = await page.waitForUrl((url) => url.pathname !== '/login');
      assert.equal(home.href, `${stack.proxy.origin}/`);
      assert.deepEqual(unexpectedProblems(page), []);
    });
  });
}
