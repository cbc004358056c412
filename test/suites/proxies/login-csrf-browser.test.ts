// Login CSRF through the gate, in a real browser behind real nginx and Caddy: a page on another
// site links to the app with the attacker's own token in `?token=`. The session cookie is
// SameSite=Strict, so Chromium leaves it off that navigation; the app must still never see the
// attacker's name for the victim's browser.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { registerVia, type ProxyUser } from './through-proxy.js';

// Another site: to a browser, localhost and 127.0.0.1 are different sites.
const OTHER_SITE_HOST = 'localhost';

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

/** A site serving one page: a link and a form (GET and POST) to `target`. */
async function startOtherSite(target: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const html = `<!doctype html><title>elsewhere</title>
<a id="link" href="${target}">look</a>
<form id="post" method="post" action="${target}"><input name="x" value="1"></form>`;
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    origin: `http://${OTHER_SITE_HOST}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function submitLogin(page: Page, username: string, password: string): Promise<void> {
  await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
  await page.evaluate(`(() => {
    document.getElementById('username').value = ${JSON.stringify(username)};
    document.getElementById('password').value = ${JSON.stringify(password)};
    document.getElementById('login').requestSubmit();
    return true;
  })()`);
}

async function upstreamEcho(page: Page): Promise<{ url: string; headers: Record<string, string | undefined> }> {
  const text = await page.waitFor<string>(`document.body && document.body.innerText.startsWith('{') ? document.body.innerText : ''`);
  return JSON.parse(text) as { url: string; headers: Record<string, string | undefined> };
}

for (const kind of PROXY_KINDS) {
  describe(`a link with someone else's ?token= from another site, in Chromium through ${kind}`, () => {
    let stack: Stack;
    let victim: ProxyUser;
    let attacker: ProxyUser;
    let other: { origin: string; close: () => Promise<void> };
    let target: string;
    const pages: Page[] = [];
    const openPage = async (): Promise<Page> => {
      assert.ok(browser !== undefined, 'chromium started');
      const page = await browser.newPage();
      pages.push(page);
      return page;
    };

    before(async () => {
      stack = await startStack({ proxy: kind, recipe: 'app' });
      const admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      victim = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
      attacker = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
      target = `${stack.proxy.origin}/settings?token=${encodeURIComponent(attacker.token)}`;
      other = await startOtherSite(target);
    });
    after(async () => {
      for (const page of pages) await page.close();
      await other?.close();
      await stack?.stop();
    });

    const attackerSeen = (): number => stack.upstream.seen.filter((seen) => seen.headers['remote-user'] === attacker.username).length;

    for (const how of ['link', 'post'] as const) {
      it(`keeps a signed-in victim who follows a ${how === 'link' ? 'link' : 'form post'} themselves: the app sees the victim, never the attacker`, async () => {
        const page = await openPage();
        await page.navigate(`${stack.proxy.origin}/login`);
        await submitLogin(page, victim.username, victim.password);
        await page.waitForUrl((url) => url.pathname === '/');
        assert.equal((await upstreamEcho(page)).headers['remote-user'], victim.username);

        await page.navigate(`${other.origin}/`);
        await page.waitForUrl((url) => url.origin === other.origin);
        const before = attackerSeen();
        await page.evaluate(how === 'link' ? `document.getElementById('link').click(), true` : `document.getElementById('post').submit(), true`);
        // The gate ignores the token; the login page finds the victim's session and sends them on.
        await page.waitForUrl((url) => url.origin === stack.proxy.origin && url.pathname === '/settings');
        const echo = await upstreamEcho(page);
        assert.equal(echo.headers['remote-user'], victim.username, `${stack.describe().slice(-1_500)}`);
        assert.equal(attackerSeen(), before, 'the app never received the attacker\'s name for this browser');
      });
    }

    it('sends a visitor without a session who follows the link to the login page, not into the app as the attacker', async () => {
      const page = await openPage();
      await page.navigate(`${other.origin}/`);
      await page.waitForUrl((url) => url.origin === other.origin);
      const before = attackerSeen();
      await page.evaluate(`document.getElementById('link').click(), true`);
      const login = await page.waitForUrl((url) => url.origin === stack.proxy.origin);
      assert.equal(login.pathname, '/login');
      assert.equal(attackerSeen(), before);
    });
  });
}
