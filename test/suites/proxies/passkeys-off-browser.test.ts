// The sign-in and account pages in Chromium when passkeys are off (--cookie-domain without
// --public-url or --passkey-origins): nothing on them offers a passkey; an account that already has
// one sees it listed and said to be off. Against Gatehouse itself on http://gatehouse.test (the
// browser's name for 127.0.0.1), the cookie domain.
// Screenshots at desktop and phone width go to GATEHOUSE_SCREENSHOT_DIR, or a temp dir.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js';

let browser: Chromium | undefined;
let screenshotDir = '';
const pages: Page[] = [];

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
  screenshotDir = process.env['GATEHOUSE_SCREENSHOT_DIR'] ?? (await tempDir('gatehouse-screens-'));
});

after(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  await killAllChildren();
  await removeTempDirs();
});

/** A tab whose browser sends `token` as the session cookie to `origin`, as after a sign-in there. */
async function openPage(origin: string, token: string | undefined): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  if (token !== undefined) await page.send('Network.setCookie', { name: 'jwt', value: token, url: origin, httpOnly: true, sameSite: 'Strict' });
  return page;
}

/** The text a person sees on the page (hidden elements left out). */
const visibleText = (page: Page): Promise<string> => page.evaluate<string>('document.body.innerText');

describe('the pages in Chromium with passkeys off', () => {
  let gatehouse: ServeProcess;
  let origin = '';
  let home = '';
  let withPasskey = '';
  let withoutPasskey = '';

  before(async () => {
    const dataDir = await tempDir();
    // First without --cookie-domain, where passkeys work: an account gets one.
    const first = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir]);
    const host = `localhost:${first.port}`;
    const root = await httpCall(first.port, { method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-9q', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(root.status, 200, root.text);
    const other = await httpCall(first.port, { method: 'POST', path: '/api/auth/register?cookie=false', token: root.cookieToken ?? '', body: { username: 'bea', password: 'bea-password-9q', client: CLIENT_SETTINGS, level: 'USER' } });
    assert.equal(other.status, 200, other.text);
    const options = await httpCall(first.port, { method: 'POST', path: '/api/auth/account/passkeys/options', token: root.cookieToken ?? '', headers: { host }, body: {} });
    assert.equal(options.status, 200, options.text);
    const authenticator = new SoftAuthenticator({ origin: `http://${host}` });
    const credential = authenticator.create(options.json as Parameters<SoftAuthenticator['create']>[0]);
    const added = await httpCall(first.port, { method: 'POST', path: '/api/auth/account/passkeys', token: root.cookieToken ?? '', headers: { host }, body: { name: 'Laptop', credential, password: 'root-password-9q' } });
    assert.equal(added.status, 200, added.text);
    await first.stop();

    gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--cookie-domain', 'gatehouse.test']);
    origin = `http://gatehouse.test:${gatehouse.port}`;
    // Without --public-url Gatehouse's own origin, where the account page answers, is loopback's.
    home = `http://localhost:${gatehouse.port}`;
    const signIn = async (username: string, password: string): Promise<string> => {
      const res = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body: { username, password } });
      assert.equal(res.status, 200, res.text);
      return res.cookieToken ?? '';
    };
    withPasskey = await signIn('root', 'root-password-9q');
    withoutPasskey = await signIn('bea', 'bea-password-9q');
  });
  after(async () => {
    await gatehouse?.stop();
  });

  it('says at start-up why passkeys are off', () => {
    assert.match(gatehouse.stdout() + gatehouse.stderr(), /passkeys are off: with --cookie-domain gatehouse\.test, set --public-url/);
  });

  for (const query of ['', '?mfa=setup', '?mfa=code']) {
    it(`offers no passkey on the sign-in page${query === '' ? '' : ` (${query})`}`, async () => {
      const page = await openPage(origin, undefined);
      await page.navigate(`${origin}/login${query}`);
      await page.waitFor(`document.getElementById('login') !== null && document.readyState === 'complete'`);
      assert.equal(await page.evaluate(`document.getElementById('passkey-step').hidden`), true);
      const text = await visibleText(page);
      assert.doesNotMatch(text, /passkey/i, text);
      assert.match(text, /Sign in/);
      assert.equal(await page.evaluate(`document.getElementById('cookie-note').hidden`), true, 'the cookie domain covers this host');
      if (query === '?mfa=setup') assert.match(text, /Set up an authenticator app on your account page/);
      if (query === '') {
        await page.screenshotAt(join(screenshotDir, 'passkeys-off-sign-in-desktop.png'), 1280);
        await page.screenshotAt(join(screenshotDir, 'passkeys-off-sign-in-phone.png'), 390);
      }
      assert.deepEqual(page.problems.filter((problem) => !/status of 401 .*\/api\/auth\/verify$/.test(problem.text)), []);
    });
  }

  it('shows no passkey section on the account page of an account without one', async () => {
    const page = await openPage(home, withoutPasskey);
    await page.navigate(`${home}/gatehouse/account`);
    await page.waitFor(`!document.getElementById('account').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('passkeys-section').hidden`), true);
    const text = await visibleText(page);
    assert.doesNotMatch(text, /passkey/i, text);
    await page.screenshotAt(join(screenshotDir, 'passkeys-off-account-desktop.png'), 1280);
    await page.screenshotAt(join(screenshotDir, 'passkeys-off-account-phone.png'), 390);
    assert.deepEqual(page.problems, []);
  });

  it('offers no passkey on the join page: its link would lead to a section the account page does not show', async () => {
    const made = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/invites', token: withPasskey, body: { username: 'cleo', level: 'USER' } });
    assert.equal(made.status, 200, made.text);
    const secret = String((made.json as { url: string }).url).split('#')[1];
    // The join page answers on Gatehouse's own origin, loopback's here, like the account page.
    const page = await openPage(home, undefined);
    await page.navigate(`${home}/gatehouse/join#${secret}`);
    await page.waitFor(`!document.getElementById('join').hidden`);
    await page.evaluate(`(() => {
      document.getElementById('password').value = 'cleo-password-9q';
      document.getElementById('repeat').value = 'cleo-password-9q';
      document.getElementById('join').requestSubmit();
      return true;
    })()`);
    await page.waitFor(`!document.getElementById('welcome').hidden`);
    const text = await visibleText(page);
    assert.doesNotMatch(text, /passkey/i, text);
    assert.match(text, /Set up an authenticator app/);
    const links = await page.evaluate<string[]>(`[...document.querySelectorAll('#welcome a')].filter((a) => a.offsetParent !== null).map((a) => a.href)`);
    assert.deepEqual(links.map((link) => new URL(link).hash), ['#totp-section', '']);
    assert.equal(new URL(links[0] ?? '').origin, home, 'the link stays on Gatehouse\'s own origin');
    // The cookie the join set names Domain=gatehouse.test, which a browser on localhost refuses:
    // the account page is reached with a session of the new account set for this origin.
    const cleo = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'cleo', password: 'cleo-password-9q' } });
    assert.equal(cleo.status, 200, cleo.text);
    await page.send('Network.setCookie', { name: 'jwt', value: cleo.cookieToken ?? '', url: home, httpOnly: true, sameSite: 'Strict' });
    await page.navigate(links[0] ?? '');
    await page.waitFor(`!document.getElementById('account').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('totp-section').offsetParent !== null`), true, 'the linked section is shown');
    assert.deepEqual(page.problems.filter((problem) => !/status of 401 .*\/api\/auth\/verify$/.test(problem.text)), []);
  });

  it('lists the passkey an account already has, says they are off, and offers none to add', async () => {
    const page = await openPage(home, withPasskey);
    await page.navigate(`${home}/gatehouse/account`);
    await page.waitFor(`!document.getElementById('account').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('passkey-new').hidden`), true);
    assert.equal(await page.evaluate(`document.getElementById('passkeys-off').hidden`), false);
    const text = await visibleText(page);
    assert.match(text, /Passkeys are turned off on this server/);
    assert.match(text, /Laptop/);
    assert.doesNotMatch(text, /Add a passkey/);
    // The password its Remove button asks for is still there to type.
    assert.match(text, /Your password, to remove a passkey/);
    assert.equal(await page.evaluate(`document.getElementById('passkey-password').offsetParent !== null`), true);
    await page.screenshotAt(join(screenshotDir, 'passkeys-off-account-listed-desktop.png'), 1280);
    await page.screenshotAt(join(screenshotDir, 'passkeys-off-account-listed-phone.png'), 390);
    assert.deepEqual(page.problems, []);
  });
});
