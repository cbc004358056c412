// The sign-in page in a real browser (headless Chromium) when the browser cannot keep the session
// cookie because of --cookie-domain: the page names that cause (not http, not Secure), and does not
// offer a passkey there. The control: where the Domain covers the host, signing in works.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page, type PageProblem } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, httpCall, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';

const USERNAME = 'root';
const PASSWORD = 'root-password-9q';

let browser: Chromium | undefined;
let screenshotDir = '';
const servers: ServeProcess[] = [];
const pages: Page[] = [];

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
  screenshotDir = process.env['GATEHOUSE_SCREENSHOT_DIR'] ?? (await tempDir('gatehouse-screens-'));
});

after(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  for (const server of servers) await server.stop();
  await removeTempDirs();
});

/** A Gatehouse on loopback with `args`, and its first administrator. */
async function gatehouseWith(args: readonly string[]): Promise<ServeProcess> {
  const server = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir(), ...args]);
  servers.push(server);
  const admin = await httpCall(server.port, { method: 'POST', path: '/api/auth/register', body: { username: USERNAME, password: PASSWORD, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
  assert.equal(admin.status, 200, admin.text);
  return server;
}

async function openLogin(url: string): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  await page.navigate(url);
  await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
  return page;
}

async function signIn(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    document.getElementById('username').value = ${JSON.stringify(USERNAME)};
    document.getElementById('password').value = ${JSON.stringify(PASSWORD)};
    document.getElementById('login').requestSubmit();
    return true;
  })()`);
}

const shownText = (page: Page, id: string): Promise<string> =>
  page.waitFor<string>(`(() => { const m = document.getElementById(${JSON.stringify(id)}); return m && !m.hidden && m.textContent !== '' ? m.textContent : ''; })()`);

/**
 * Problems less the 401s the page meets by design (verify while signed out, and the account check
 * after a dropped cookie), and the favicon a browser asks of a JSON answer it shows.
 */
function unexpectedProblems(page: Page): PageProblem[] {
  const expected = [/status of 401 .*\/api\/auth\/(verify|account)$/, /status of 404 .*\/favicon\.ico$/];
  return page.problems.filter((problem) => !(problem.source === 'log:network' && expected.some((pattern) => pattern.test(problem.text))));
}

describe('the sign-in page in Chromium with a --cookie-domain that does not cover its host', () => {
  it('over plain http to a name: names the cookie domain, not http or Secure, and keeps the passkey button off after the failed sign-in', async () => {
    const gatehouse = await gatehouseWith(['--cookie-domain', 'example.org']);
    // gatehouse.test resolves to 127.0.0.1 in the test browser; plain http to a name is not a secure context.
    const origin = `http://gatehouse.test:${gatehouse.port}`;
    const page = await openLogin(`${origin}/login?rd=%2Fsomewhere`);
    const note = await shownText(page, 'cookie-note');
    assert.match(note, /This page is at gatehouse\.test/);
    assert.match(note, /set for example\.org \(--cookie-domain\), which does not cover gatehouse\.test/);
    assert.doesNotMatch(note, /Secure|over http/);
    assert.equal(await page.evaluate('document.getElementById(\'passkey\').disabled'), true);

    await signIn(page);
    const message = await shownText(page, 'message');
    assert.match(message, /did not keep the session cookie/);
    assert.doesNotMatch(message, /Secure|opened over http/);
    assert.equal(await page.evaluate('location.pathname'), '/login');
    assert.equal(await page.evaluate('document.getElementById(\'password\').disabled'), false);
    assert.equal(await page.evaluate('document.getElementById(\'passkey\').disabled'), true, 'no passkey offered where it cannot work');
    assert.deepEqual(await page.cookies(`${origin}/`), [], 'the browser really dropped it');
    await page.screenshotAt(join(screenshotDir, 'sign-in-cookie-domain-phone.png'), 390);
    await page.screenshotAt(join(screenshotDir, 'sign-in-cookie-domain-desktop.png'), 1280);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('on 127.0.0.1 (a secure context with WebAuthn) under --cookie-domain gatehouse.test: an IP address is never covered, and the passkey button is off; on gatehouse.test itself signing in works', async () => {
    const gatehouse = await gatehouseWith(['--cookie-domain', 'gatehouse.test']);
    const onIp = await openLogin(`http://127.0.0.1:${gatehouse.port}/login`);
    assert.equal(await onIp.evaluate('window.isSecureContext && typeof window.PublicKeyCredential === \'function\''), true);
    assert.match(await shownText(onIp, 'cookie-note'), /does not cover 127\.0\.0\.1/);
    assert.equal(await onIp.evaluate('document.getElementById(\'passkey\').disabled'), true);
    assert.match(await shownText(onIp, 'passkey-message'), /see above/i);
    await signIn(onIp);
    assert.match(await shownText(onIp, 'message'), /did not keep the session cookie/);
    assert.equal(await onIp.evaluate('document.getElementById(\'passkey\').disabled'), true);
    assert.deepEqual(unexpectedProblems(onIp), []);

    const origin = `http://gatehouse.test:${gatehouse.port}`;
    // gatehouse.test is an app's origin to Gatehouse without --public-url: signing in works there, the account page does not.
    const covered = await openLogin(`${origin}/login?rd=${encodeURIComponent(`${origin}/api/auth/verify`)}`);
    assert.equal(await covered.evaluate('document.getElementById(\'cookie-note\').hidden'), true);
    await signIn(covered);
    await covered.waitForUrl((url) => url.pathname === '/api/auth/verify');
    assert.equal(await covered.waitFor<string>(`(() => { try { return JSON.parse(document.body.innerText).username; } catch { return ''; } })()`), USERNAME);
    const kept = await covered.cookies(`${origin}/`);
    assert.deepEqual(kept.map((cookie) => cookie.name), ['jwt']);
    assert.deepEqual(unexpectedProblems(covered), []);
  });
});
