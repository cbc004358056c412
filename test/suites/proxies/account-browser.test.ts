// The account page and the sign-in page in a real browser (headless Chromium over
// --remote-debugging-pipe), against Gatehouse itself on http://localhost (a secure context, so
// WebAuthn works, and a valid RP ID, which 127.0.0.1 is not): change the password, make and revoke
// a machine token, set up TOTP from the QR page and sign in with a code computed here from the seed
// the page shows, register a passkey with the DevTools virtual authenticator and sign in with it
// (discoverable, no username), with no CSP violation on any page. Screenshots at desktop and phone
// width go to GATEHOUSE_SCREENSHOT_DIR, or a temp dir named in the test output.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page, type PageProblem } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';

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

async function openPage(): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  return page;
}

/** RFC 4648 base32 (the seed as the account page shows it, spaces ignored) to bytes. */
function base32Bytes(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const character of text.replace(/[\s=]/g, '').toUpperCase()) {
    const index = alphabet.indexOf(character);
    assert.ok(index >= 0, `base32 character ${character}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) for the step `offset` steps from now. */
function totpCode(seed: Buffer, offset = 0): string {
  const step = Math.floor(Date.now() / 30_000) + offset;
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', seed).update(counter).digest();
  const at = (mac[mac.length - 1] ?? 0) & 0x0f;
  return String((mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/**
 * Refusals the tests provoke or the pages expect, which Chromium logs as failed resources: the
 * session checks while signed out, a wrong password or code, a wrong current password, a wrong
 * confirmation code, a passkey that was removed.
 */
const EXPECTED_REFUSALS = [
  /status of 401 .*\/api\/auth\/(verify|authenticate|account|passkey)$/,
  /status of 403 .*\/api\/auth\/account\/password$/,
  /status of (400|401|403) .*\/api\/auth\/account\/totp\/confirm$/,
];

/** What the pages reported, less EXPECTED_REFUSALS: a CSP violation, an exception, a console error, any other failed load. */
function unexpectedProblems(page: Page): PageProblem[] {
  return page.problems.filter((problem) => !(problem.source === 'log:network' && EXPECTED_REFUSALS.some((pattern) => pattern.test(problem.text))));
}

/** Sets form fields by id and submits the form as a person does (its own submit handler runs). */
async function submitForm(page: Page, formId: string, values: Record<string, string>): Promise<void> {
  await page.waitFor(`(() => { const form = document.getElementById(${JSON.stringify(formId)}); return form !== null && !form.hidden && form.offsetParent !== null; })()`);
  await page.evaluate(`(() => {
    const values = ${JSON.stringify(values)};
    for (const id of Object.keys(values)) document.getElementById(id).value = values[id];
    document.getElementById(${JSON.stringify(formId)}).requestSubmit();
    return true;
  })()`);
}

const click = (page: Page, id: string): Promise<unknown> => page.evaluate(`(document.getElementById(${JSON.stringify(id)}).click(), true)`);

/** The text of a message element once it is shown. */
const shownText = (page: Page, id: string): Promise<string> =>
  page.waitFor<string>(`(() => { const m = document.getElementById(${JSON.stringify(id)}); return m && !m.hidden && m.textContent !== '' ? m.textContent : ''; })()`);

describe('the account page and sign-in in Chromium', () => {
  let gatehouse: ServeProcess;
  let origin = '';
  let adminToken = '';
  const username = 'ada';
  let password = 'first-password-9q';

  before(async () => {
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir()]);
    origin = `http://localhost:${gatehouse.port}`;
    const admin = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-9q', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(admin.status, 200, admin.text);
    adminToken = admin.cookieToken ?? '';
    const user = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username, password, client: CLIENT_SETTINGS, level: 'USER' } });
    assert.equal(user.status, 200, user.text);
  });
  after(async () => {
    await gatehouse?.stop();
  });

  const accountUrl = (): string => `${origin}/gatehouse/account`;
  const authenticate = (body: Record<string, string>) => httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body });

  // One tab for the whole story, as one person would: its virtual authenticator keeps the passkey.
  let page: Page;
  let seed: Buffer;
  let recoveryCodes: string[] = [];

  it('sends a signed-out visitor of the account page to sign in, and back to the account page after', async () => {
    page = await openPage();
    await page.navigate(accountUrl());
    const login = await page.waitForUrl((url) => url.pathname === '/login');
    assert.equal(login.searchParams.get('rd'), accountUrl());
    await page.screenshotAt(join(screenshotDir, 'sign-in-desktop.png'), 1280);
    await page.screenshotAt(join(screenshotDir, 'sign-in-phone.png'), 390);
    await page.setViewport(1280, 800);
    await submitForm(page, 'login', { username, password });
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    assert.equal(await page.waitFor<string>(`(() => { const who = document.getElementById('who'); return who && !document.getElementById('account').hidden ? who.textContent : ''; })()`), username);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('changes the password: the old one stops working, the new one works, and this tab stays signed in', async () => {
    const newPassword = 'second-password-9q';
    await submitForm(page, 'password-form', { 'current-password': 'not-the-password', 'new-password': newPassword, 'repeat-password': newPassword });
    assert.ok((await shownText(page, 'password-message')).length > 0);
    assert.match(await page.evaluate<string>(`document.getElementById('password-message').className`), /^message$/);
    await submitForm(page, 'password-form', { 'current-password': password, 'new-password': newPassword, 'repeat-password': newPassword });
    await page.waitFor(`document.getElementById('password-message').className === 'message done'`);
    assert.equal((await authenticate({ username, password })).status, 401);
    password = newPassword;
    assert.equal((await authenticate({ username, password })).status, 200);
    assert.equal(await page.evaluate<number>(`fetch('../api/auth/account', { credentials: 'same-origin' }).then((res) => res.status)`), 200);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('makes a machine token shown once, lists it, and revokes it with a second click', async () => {
    await submitForm(page, 'token-add', { 'token-name': 'backup script', 'token-days': '30', 'token-password': password });
    const token = await page.waitFor<string>(`!document.getElementById('new-token').hidden && document.getElementById('token-value').textContent`);
    assert.match(token, /^gh_[A-Za-z0-9_-]{43}$/);
    await page.waitFor(`document.querySelectorAll('#token-list li').length === 1 && document.querySelector('#token-list li strong').textContent === 'backup script'`);
    await page.evaluate(`(document.querySelector('#token-list li button').click(), true)`);
    assert.equal(await page.evaluate(`document.querySelectorAll('#token-list li').length`), 1, 'one click only arms the button');
    await page.evaluate(`(document.querySelector('#token-list li button').click(), true)`);
    await page.waitFor(`document.querySelectorAll('#token-list li').length === 0 && !document.getElementById('no-tokens').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('new-token').hidden`), true, 'a revoked token is no longer shown');
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('sets up TOTP: the QR image shows, the seed is given as text, a code confirms, and ten recovery codes are shown once', async () => {
    await submitForm(page, 'totp-start', { 'totp-password': password });
    await page.waitFor(`!document.getElementById('totp-pending').hidden`);
    const qr = await page.waitFor<{ width: number; src: string }>(`(() => { const img = document.getElementById('totp-qr'); return img.complete && img.naturalWidth > 0 ? { width: img.getBoundingClientRect().width, src: img.src.slice(0, 32) } : null; })()`);
    assert.ok(qr.width > 100, `the QR code is drawn at a readable size (${qr.width}px)`);
    assert.equal(qr.src, 'data:image/svg+xml;charset=utf-8');
    await page.screenshotAt(join(screenshotDir, 'account-totp-setup-desktop.png'), 1280);
    await page.screenshotAt(join(screenshotDir, 'account-totp-setup-phone.png'), 390);
    await page.setViewport(1280, 800);
    seed = base32Bytes(await page.evaluate<string>(`document.getElementById('totp-secret').textContent`));
    assert.equal(seed.length, 20);
    await submitForm(page, 'totp-confirm', { 'totp-code': '000000' === totpCode(seed) ? '111111' : '000000' });
    assert.ok((await shownText(page, 'totp-message')).length > 0, 'a wrong code is refused and said so');
    await submitForm(page, 'totp-confirm', { 'totp-code': totpCode(seed) });
    await page.waitFor(`!document.getElementById('totp-codes').hidden`);
    const codes = await page.evaluate<string[]>(`[...document.querySelectorAll('#recovery-codes li')].map((li) => li.textContent)`);
    await page.screenshotAt(join(screenshotDir, 'account-recovery-codes-phone.png'), 390);
    await page.setViewport(1280, 800);
    assert.equal(codes.length, 10);
    recoveryCodes = codes;
    assert.equal(new Set(codes).size, 10);
    assert.equal((await authenticate({ username, password })).status, 401, 'a password alone no longer signs in');
    await click(page, 'codes-saved');
    await page.waitFor(`!document.getElementById('totp-on').hidden && document.querySelectorAll('#recovery-codes li').length === 0`);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  let authenticatorId = '';
  it('registers a passkey with the virtual authenticator, named as typed', async () => {
    authenticatorId = await page.addVirtualAuthenticator();
    await submitForm(page, 'passkey-add', { 'passkey-name': 'Laptop', 'passkey-password': password });
    await page.waitFor(`document.querySelectorAll('#passkey-list li').length === 1`, 20_000);
    assert.equal(await page.evaluate(`document.querySelector('#passkey-list li strong').textContent`), 'Laptop');
    const held = await page.virtualCredentials(authenticatorId);
    assert.equal(held.length, 1);
    assert.equal(held[0]?.['isResidentCredential'], true, 'a discoverable credential');
    assert.equal(held[0]?.['rpId'], 'localhost');
    await page.screenshotAt(join(screenshotDir, 'account-desktop.png'), 1280);
    await page.screenshotAt(join(screenshotDir, 'account-phone.png'), 390);
    const overflow = await page.evaluate<number>(`document.documentElement.scrollWidth - document.documentElement.clientWidth`);
    assert.equal(overflow, 0, 'no sideways scrolling at phone width');
    await page.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'dark' }] });
    await page.screenshotAt(join(screenshotDir, 'account-dark-phone.png'), 390);
    await page.send('Emulation.setEmulatedMedia', { features: [] });
    await page.setViewport(1280, 800);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('logs out everywhere (a second click confirms) and lands on the sign-in page', async () => {
    await click(page, 'logout-everywhere');
    await click(page, 'logout-everywhere');
    const login = await page.waitForUrl((url) => url.pathname === '/login');
    assert.equal(login.searchParams.get('rd'), accountUrl());
    assert.equal(await page.evaluate<number>(`fetch('api/auth/account', { credentials: 'same-origin' }).then((res) => res.status)`), 401);
  });

  it('asks for a code after the password, refuses a wrong one, and signs in with the right one', async () => {
    await submitForm(page, 'login', { username, password });
    await page.waitFor(`!document.getElementById('code-step').hidden && document.getElementById('login').hidden`);
    await page.screenshotAt(join(screenshotDir, 'sign-in-code-desktop.png'), 1280);
    await page.screenshotAt(join(screenshotDir, 'sign-in-code-phone.png'), 390);
    await page.setViewport(1280, 800);
    await submitForm(page, 'code-step', { code: totpCode(seed, -5) });
    assert.ok((await shownText(page, 'code-message')).length > 0);
    assert.equal(await page.evaluate('location.pathname'), '/login');
    // The next step's code: within the one step of skew, and not the step used to confirm.
    await submitForm(page, 'code-step', { code: totpCode(seed, 1) });
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    await page.waitFor(`!document.getElementById('account').hidden`);
  });

  it('signs in with the passkey alone: no username typed, the discoverable credential names the account', async () => {
    await click(page, 'sign-out');
    await page.waitForUrl((url) => url.pathname === '/login');
    assert.equal(await page.evaluate<number>(`fetch('api/auth/account', { credentials: 'same-origin' }).then((res) => res.status)`), 401);
    await page.navigate(`${origin}/login?rd=${encodeURIComponent(accountUrl())}`);
    await page.waitFor(`document.readyState === 'complete' && document.getElementById('passkey') !== null && !document.getElementById('passkey').disabled`);
    assert.equal(await page.evaluate(`document.getElementById('username').value`), '');
    await click(page, 'passkey');
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account', 20_000);
    assert.equal(await page.waitFor<string>(`!document.getElementById('account').hidden && document.getElementById('who').textContent`), username);
    await page.waitFor(`document.querySelector('#passkey-list li .muted') !== null && !/last used never/.test(document.querySelector('#passkey-list li .muted').textContent)`);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('signs in with the passkey after a username is typed (the options list that account\'s passkeys)', async () => {
    await click(page, 'sign-out');
    await page.waitForUrl((url) => url.pathname === '/login');
    await page.navigate(`${origin}/login?rd=${encodeURIComponent(accountUrl())}`);
    await page.waitFor(`document.readyState === 'complete' && document.getElementById('passkey') !== null && !document.getElementById('passkey').disabled`);
    await page.evaluate(`(document.getElementById('username').value = ${JSON.stringify(username)}, true)`);
    await click(page, 'passkey');
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account', 20_000);
    assert.equal(await page.waitFor<string>(`!document.getElementById('account').hidden && document.getElementById('who').textContent`), username);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('removes the passkey with a second click, and then a passkey sign-in is refused with a message', async () => {
    // A passkey is a way in: removing one asks the password, in the field above the list.
    await page.evaluate(`(document.querySelector('#passkey-list li button').click(), true)`);
    await page.evaluate(`(document.querySelector('#passkey-list li button').click(), true)`);
    assert.match(await shownText(page, 'passkey-message'), /password/);
    await page.waitFor(`document.querySelectorAll('#passkey-list li').length === 1 && document.querySelector('#passkey-list li button').dataset.armed !== '1'`);
    await page.evaluate(`(document.getElementById('passkey-password').value = ${JSON.stringify(password)}, true)`);
    await page.evaluate(`(document.querySelector('#passkey-list li button').click(), true)`);
    await page.evaluate(`(document.querySelector('#passkey-list li button').click(), true)`);
    await page.waitFor(`document.querySelectorAll('#passkey-list li').length === 0 && !document.getElementById('no-passkeys').hidden`);
    const other = await openPage();
    await other.navigate(`${origin}/login`);
    await other.addVirtualAuthenticator();
    await other.waitFor(`document.readyState === 'complete' && document.getElementById('passkey') !== null`);
    await other.evaluate(`(document.getElementById('username').value = ${JSON.stringify(username)}, true)`);
    await click(other, 'passkey');
    assert.ok((await shownText(other, 'passkey-message')).length > 0);
    assert.equal(await other.evaluate('location.pathname'), '/login');
  });

  it('turns TOTP off with the password from a two-factor session: a password alone signs in again', async () => {
    // The passkey that made this session is gone: it is a password session now, on an account with TOTP.
    await submitForm(page, 'totp-disable', { 'totp-disable-password': password });
    assert.match(await shownText(page, 'totp-message'), /two factors/);
    await click(page, 'sign-out');
    await page.waitForUrl((url) => url.pathname === '/login');
    await page.navigate(`${origin}/login?rd=${encodeURIComponent(accountUrl())}`);
    await page.waitFor(`document.readyState === 'complete'`);
    await submitForm(page, 'login', { username, password });
    await page.waitFor(`!document.getElementById('code-step').hidden`);
    await submitForm(page, 'code-step', { code: recoveryCodes[0] ?? '' });
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    await page.waitFor(`!document.getElementById('account').hidden && !document.getElementById('totp-on').hidden`);
    await submitForm(page, 'totp-disable', { 'totp-disable-password': password });
    await page.waitFor(`!document.getElementById('totp-off').hidden`);
    assert.equal((await authenticate({ username, password })).status, 200);
  });

  it('saved its screenshots', (t) => {
    t.diagnostic(`screenshots in ${screenshotDir}`);
  });
});

describe('the sign-in page when the gate asked for two factors', () => {
  let gatehouse: ServeProcess;
  let origin = '';

  before(async () => {
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir()]);
    origin = `http://localhost:${gatehouse.port}`;
    const admin = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-9q', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(admin.status, 200, admin.text);
  });
  after(async () => {
    await gatehouse?.stop();
  });

  it('follows the gate\'s own redirect for an account without a second factor: no loop back to rd, a link to the account page instead', async () => {
    const page = await openPage();
    await page.navigate(`${origin}/login?rd=${encodeURIComponent(`${origin}/gatehouse/account`)}`);
    await submitForm(page, 'login', { username: 'root', password: 'root-password-9q' });
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    // What the gate answers a browser with this one-factor session on an app that says mfa=1.
    const cookie = (await page.cookies(`${origin}/`)).find((entry) => entry.name === 'jwt');
    assert.ok(cookie !== undefined);
    const gate = await httpCall(gatehouse.port, {
      path: '/api/auth/forward?mfa=1&login=/login',
      token: cookie.value,
      headers: { accept: 'text/html', host: `localhost:${gatehouse.port}`, 'x-forwarded-uri': '/wiki' },
    });
    assert.equal(gate.status, 302, gate.text);
    const location = String(gate.headers['location']);
    assert.match(location, /^\/login\?mfa=setup&rd=/);

    await page.navigate(`${origin}${location}`);
    await page.waitFor(`document.readyState === 'complete' && !document.getElementById('setup-note').hidden`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await page.evaluate('location.pathname'), '/login', 'the one-factor session is not sent back to rd');
    assert.equal(await page.evaluate(`document.getElementById('mfa-note').hidden`), false);
    await page.screenshotAt(join(screenshotDir, 'sign-in-mfa-setup-phone.png'), 390);
    await page.evaluate(`(document.querySelector('#setup-note a').click(), true)`);
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    await page.waitFor(`!document.getElementById('account').hidden && !document.getElementById('totp-off').hidden`);
    assert.deepEqual(unexpectedProblems(page), []);
  });
});

describe('the sign-in page when the browser cannot keep the cookie', () => {
  let gatehouse: ServeProcess;

  before(async () => {
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir(), '--secure-cookie']);
    const admin = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-9q', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(admin.status, 200, admin.text);
  });
  after(async () => {
    await gatehouse?.stop();
  });

  it('warns at once over plain http to a host name with --secure-cookie, and after a right password says the cookie was not kept instead of reloading', async () => {
    const page = await openPage();
    // gatehouse.test resolves to 127.0.0.1 in the test browser: plain http to a name is not a
    // secure context, so the browser drops a Secure cookie, as on a LAN name.
    await page.navigate(`http://gatehouse.test:${gatehouse.port}/login?rd=%2Fsomewhere`);
    const note = await shownText(page, 'cookie-note');
    assert.match(note, /https/);
    await submitForm(page, 'login', { username: 'root', password: 'root-password-9q' });
    const message = await shownText(page, 'message');
    assert.match(message, /did not keep the session cookie/);
    assert.equal(await page.evaluate('location.pathname'), '/login');
    assert.equal(await page.evaluate(`document.getElementById('password').disabled`), false);
    assert.deepEqual(await page.cookies(`http://gatehouse.test:${gatehouse.port}/`), []);
    await page.screenshotAt(join(screenshotDir, 'sign-in-cookie-warning-phone.png'), 390);
    assert.deepEqual(unexpectedProblems(page), []);
  });
});
