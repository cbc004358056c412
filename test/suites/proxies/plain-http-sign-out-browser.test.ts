// Signing out in Chromium over plain http (docs/contract/links-and-sessions.md "Signing out"):
// a browser sends Sec-Fetch-Site only to a potentially trustworthy origin (https, localhost), so
// on http://gatehouse.test a page's GET /api/auth/logout, as Flood's web client sends it, is a
// script's to Gatehouse: the cookie is cleared and the session's record stays. The same fetch on
// http://localhost ends the record, as does a navigation to {base}/logout on either (the page
// route does not ask for the header). Against Gatehouse itself; gatehouse.test is the browser's
// name for 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';

let browser: Chromium | undefined;
const pages: Page[] = [];

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
});

after(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  await killAllChildren();
  await removeTempDirs();
});

/** A tab whose browser holds `token` as the session cookie of `origin`, showing a page of it (the sign-in page would move a signed-in browser on). */
async function signedInPage(origin: string, token: string): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  await page.send('Network.setCookie', { name: 'jwt', value: token, url: origin, httpOnly: true, sameSite: 'Strict' });
  await page.navigate(`${origin}/healthz`);
  await page.waitFor(`document.readyState === 'complete' && location.pathname === '/healthz'`);
  return page;
}

/** What a page's GET /api/auth/logout answered, sent as Flood's web client sends it. */
const FETCH_LOGOUT = `fetch('/api/auth/logout', { credentials: 'same-origin', headers: { accept: 'application/json' } }).then((res) => res.status)`;

describe('signing out in Chromium over plain http', () => {
  let gatehouse: ServeProcess;
  const signIn = async (): Promise<string> => {
    const res = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'root', password: 'root-password-9q' } });
    assert.equal(res.status, 200, res.text);
    return res.cookieToken ?? '';
  };
  /** The status a copy of `token` gets from verify: 200 while its session's record lives. */
  const copyStatus = async (token: string): Promise<number> => (await httpCall(gatehouse.port, { path: '/api/auth/verify', token })).status;

  before(async () => {
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir()]);
    const root = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-9q', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(root.status, 200, root.text);
  });
  after(async () => {
    await gatehouse?.stop();
  });

  it('a page\'s GET /api/auth/logout on http://gatehouse.test clears the cookie and leaves a copy of the token good', async () => {
    const origin = `http://gatehouse.test:${gatehouse.port}`;
    const token = await signIn();
    const page = await signedInPage(origin, token);
    assert.equal(await page.evaluate<number>(FETCH_LOGOUT), 200);
    assert.deepEqual((await page.cookies(`${origin}/`)).map((cookie) => cookie.name), [], 'the cookie is cleared');
    assert.equal(await copyStatus(token), 200, 'no Sec-Fetch-Site over plain http: the record stays');
  });

  it('the same fetch on http://localhost ends the session', async () => {
    const token = await signIn();
    const page = await signedInPage(`http://localhost:${gatehouse.port}`, token);
    assert.equal(await page.evaluate<number>(FETCH_LOGOUT), 200);
    assert.equal(await copyStatus(token), 401);
  });

  for (const host of ['gatehouse.test', 'localhost']) {
    it(`{base}/logout ends the session on http://${host} too`, async () => {
      const origin = `http://${host}:${gatehouse.port}`;
      const token = await signIn();
      const page = await signedInPage(origin, token);
      await page.navigate(`${origin}/logout`);
      await page.waitForUrl((url) => url.pathname === '/login' && url.searchParams.get('signed_out') === '1');
      assert.equal(await copyStatus(token), 401);
    });
  }
});
