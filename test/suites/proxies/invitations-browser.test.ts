// Invitations, reset links and sessions in a real browser (headless Chromium over
// --remote-debugging-pipe) through nginx running the app recipe of deploy/ (Gatehouse's pages and API
// on its own site, its --public-url; the app gated on its own): an administrator invites on the users
// page; the invitee joins, sets up TOTP right away and signs in to the app with a code; a reset link
// sets a new password and the old session is refused at the gate; two browsers, one ends the other's
// session. Screenshots
// of the join, reset and sessions pages at desktop and phone width go to GATEHOUSE_SCREENSHOT_DIR, or
// a temp dir named in the test output.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { hotp } from '../../../src/totp/codes.js';
import { Chromium, type Page, type PageProblem } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, killAllChildren, removeTempDirs, tempDir } from '../../helpers/process.js';
import { startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { viaHome, viaProxy } from './through-proxy.js';

const ADMIN = 'root';
const ADMIN_PASSWORD = 'root-password-9q';

let browser: Chromium | undefined;
let stack: Stack;
/** Gatehouse's own site: the users, account, join and reset pages. */
let home = '';
/** The app's site: its sign-in page and the app behind the gate. */
let app = '';
let screenshotDir = '';
const pages: Page[] = [];

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
  screenshotDir = process.env['GATEHOUSE_SCREENSHOT_DIR'] ?? (await tempDir('gatehouse-screens-'));
  stack = await startStack({ proxy: 'nginx', recipe: 'app', publicUrl: true });
  home = stack.home.origin;
  app = `http://127.0.0.1:${stack.proxy.port}`;
  const first = await viaHome(stack.home, {
    method: 'POST', path: '/api/auth/register', body: { username: ADMIN, password: ADMIN_PASSWORD, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' },
  });
  assert.equal(first.status, 200, first.text);
  console.log(`screenshots: ${screenshotDir}`);
});

after(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  await stack?.stop();
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** A new browser (a context of its own: its own cookies). */
async function openBrowser(): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  return page;
}

/**
 * What the pages reported, less the refusals they are made to meet: the sign-in page's session check
 * while signed out, the account page's after its session ended, a wrong code.
 */
function unexpectedProblems(page: Page): PageProblem[] {
  const expected = [/status of 401 .*\/api\/auth\/(verify|authenticate|account|account\/sessions)$/];
  return page.problems.filter((problem) => !(problem.source === 'log:network' && expected.some((pattern) => pattern.test(problem.text))));
}

async function fill(page: Page, formId: string, values: Record<string, string>): Promise<void> {
  await page.waitFor(`(() => { const form = document.getElementById(${JSON.stringify(formId)}); return form !== null && !form.hidden && form.offsetParent !== null; })()`);
  await page.evaluate(`(() => {
    const values = ${JSON.stringify(values)};
    for (const id of Object.keys(values)) document.getElementById(id).value = values[id];
    document.getElementById(${JSON.stringify(formId)}).requestSubmit();
    return true;
  })()`);
}

let lastStep = 0;
/**
 * A code of a time step not used yet: a step signs in once per account, and these tests sign in more
 * often than every 30 s. The next step is accepted too (one step of skew); beyond it, wait.
 */
async function freshCode(seed: Buffer): Promise<string> {
  for (;;) {
    const step = Math.floor(Date.now() / 30_000);
    const next = Math.max(step, lastStep + 1);
    if (next <= step + 1) {
      lastStep = next;
      return hotp(seed, next);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Signs in on the sign-in page of `rd`'s site (with a code when the account asks), which goes on to `rd`. */
async function signIn(page: Page, username: string, password: string, rd: string, seed?: Buffer): Promise<void> {
  await page.navigate(`${new URL(rd).origin}/login?rd=${encodeURIComponent(rd)}`);
  await fill(page, 'login', { username, password });
  if (seed !== undefined) await fill(page, 'code-step', { code: await freshCode(seed) });
  await page.waitForUrl((url) => url.href === rd);
}

/** The shown message of element `id`, once there is one. */
const shownText = (page: Page, id: string): Promise<string> =>
  page.waitFor<string>(`(() => { const m = document.getElementById(${JSON.stringify(id)}); return m && !m.hidden && m.textContent !== '' ? m.textContent : ''; })()`);

async function screenshots(page: Page, name: string): Promise<void> {
  await page.screenshotAt(join(screenshotDir, `${name}-desktop.png`), 1280);
  await page.screenshotAt(join(screenshotDir, `${name}-phone.png`), 390);
  await page.setViewport(1280, 800);
}

/** Whether the gate lets this browser's session into the app: the app's answer, or the sign-in page. */
async function reachesApp(page: Page): Promise<boolean> {
  await page.navigate(`${app}/dashboard`);
  const url = await page.waitForUrl((seen) => seen.pathname === '/dashboard' || seen.pathname === '/login');
  return url.pathname === '/dashboard';
}

describe('invitations, reset links and sessions in Chromium through nginx', () => {
  let admin: Page;
  let seed: Buffer | undefined;
  const invitee = 'grace';
  let password = 'grace-first-pw-9q';

  before(async () => {
    admin = await openBrowser();
    await signIn(admin, ADMIN, ADMIN_PASSWORD, `${home}/gatehouse/users`);
  });

  it('invite -> join -> TOTP right away -> sign in to the app with a code', async () => {
    await admin.waitFor(`document.querySelectorAll('#users li.user').length === 1`);
    await fill(admin, 'invite', { 'invite-username': invitee, 'invite-level': 'USER', 'invite-groups': 'family', 'invite-days': '3' });
    const link = await admin.waitFor<string>(`!document.getElementById('new-link').hidden && document.getElementById('new-link-url').textContent`);
    assert.match(link, new RegExp(`^${home.replace(/\./g, '\\.')}/gatehouse/join#[A-Za-z0-9_-]{43}$`));
    await admin.waitFor(`document.querySelectorAll('#invitation-list li').length === 1`);
    assert.match(await admin.evaluate<string>(`document.querySelector('#invitation-list li').textContent`), /grace.*User · family/);

    const page = await openBrowser();
    await page.navigate(link);
    await page.waitFor(`!document.getElementById('join').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('invited-name').textContent`), invitee);
    assert.equal(await page.evaluate(`location.hash`), '', 'the secret is taken off the address bar');
    await screenshots(page, 'join');
    await fill(page, 'join', { password: 'one-password', repeat: 'another-password' });
    assert.equal(await shownText(page, 'message'), 'The two passwords differ.');
    await fill(page, 'join', { password, repeat: password });
    await page.waitFor(`!document.getElementById('welcome').hidden`);
    await screenshots(page, 'join-welcome');

    await page.evaluate(`(document.getElementById('to-totp').click(), true)`);
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    await page.waitFor(`document.activeElement && document.activeElement.id === 'totp-password'`);
    await fill(page, 'totp-start', { 'totp-password': password });
    const secret = await page.waitFor<string>(`!document.getElementById('totp-pending').hidden && document.getElementById('totp-secret').textContent`);
    seed = decodeBase32(secret.replace(/\s/g, ''));
    assert.ok(seed !== undefined);
    await fill(page, 'totp-confirm', { 'totp-code': await freshCode(seed) });
    await page.waitFor(`!document.getElementById('totp-codes').hidden`);

    // Signed out, then in on the app's site: the password alone no longer does; with a code the app opens.
    await page.navigate(`${home}/logout`);
    await page.waitForUrl((url) => url.pathname === '/login');
    await signIn(page, invitee, password, `${app}/dashboard`, seed);
    const seen = stack.upstream.seen.filter((request) => request.url === '/dashboard');
    assert.equal(seen.at(-1)?.headers['remote-user'], invitee);
    assert.equal(seen.at(-1)?.headers['remote-groups'], 'family');
    await admin.navigate(`${home}/gatehouse/users`);
    await admin.waitFor(`document.querySelectorAll('#users li.user').length === 2 && document.querySelectorAll('#invitation-list li').length === 0`);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('shows a used invitation its own message, with nothing to fill in', async () => {
    await fill(admin, 'invite', { 'invite-username': '', 'invite-level': 'USER', 'invite-groups': '', 'invite-days': '1' });
    const link = await admin.waitFor<string>(`!document.getElementById('new-link').hidden && document.getElementById('new-link-url').textContent`);
    await admin.waitFor(`document.querySelectorAll('#invitation-list li').length === 1`);
    await admin.evaluate(`window.confirm = () => true`);
    await admin.evaluate(`(document.querySelector('#invitation-list li button').click(), true)`);
    await admin.waitFor(`document.querySelectorAll('#invitation-list li').length === 0`);
    const page = await openBrowser();
    await page.navigate(link);
    assert.equal(await shownText(page, 'problem'), 'This link was withdrawn; ask for a new one.');
    assert.equal(await page.evaluate(`document.getElementById('join').hidden`), true);
    await page.navigate(`${home}/gatehouse/join`);
    await page.navigate(`${home}/gatehouse/join#not-a-secret`);
    assert.equal(await shownText(page, 'problem'), 'This link is not valid; check that the whole link was copied.');
    await screenshots(page, 'join-refused');
  });

  it('reset -> new password -> the old session is refused at the gate; the second factor stays', async () => {
    assert.ok(seed !== undefined);
    const before = await openBrowser();
    await signIn(before, invitee, password, `${app}/dashboard`, seed);
    assert.equal(await reachesApp(before), true);

    await admin.navigate(`${home}/gatehouse/users`);
    await admin.waitFor(`document.querySelectorAll('#users li.user').length === 2`);
    await admin.evaluate(`(() => {
      const item = [...document.querySelectorAll('#users li.user')].find((li) => li.querySelector('.user-name').textContent === ${JSON.stringify(invitee)});
      [...item.querySelectorAll('button')].find((b) => b.textContent === 'Reset link').click();
      return true;
    })()`);
    const link = await admin.waitFor<string>(`!document.getElementById('new-link').hidden && document.getElementById('new-link-url').textContent.includes('/reset#') && document.getElementById('new-link-url').textContent`);

    const page = await openBrowser();
    await page.navigate(link);
    await page.waitFor(`!document.getElementById('reset').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('reset-name').textContent`), invitee);
    await screenshots(page, 'reset');
    password = 'grace-second-pw-9q';
    await fill(page, 'reset', { password, repeat: password });
    await page.waitFor(`!document.getElementById('done').hidden`);
    await screenshots(page, 'reset-done');

    assert.equal(await reachesApp(before), false, 'the session from before the reset is refused at the gate');
    const old = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: invitee, password: 'grace-first-pw-9q' } });
    assert.equal(old.status, 401);
    await signIn(page, invitee, password, `${app}/dashboard`, seed);
    assert.equal(await reachesApp(page), true);
    await page.navigate(link);
    assert.equal(await shownText(page, 'problem'), 'This link has already been used; each link works once.');
  });

  it('two browsers: the account page lists both sessions, and one ends the other at once', async () => {
    assert.ok(seed !== undefined);
    const laptop = await openBrowser();
    const phone = await openBrowser();
    await signIn(phone, invitee, password, `${app}/dashboard`, seed);
    // A few seconds apart, so that the newest-first order is the order of sign-in.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await signIn(laptop, invitee, password, `${home}/gatehouse/account`, seed);
    assert.equal(await reachesApp(phone), true);
    await laptop.navigate(`${home}/gatehouse/account#sessions-section`);
    const count = await laptop.waitFor<number>(`document.querySelectorAll('#session-list li').length`);
    assert.ok(count >= 2, `${count} sessions listed`);
    const first = await laptop.evaluate<{ text: string; isHere: boolean }>(`(() => {
      const li = document.querySelector('#session-list li');
      return { text: li.textContent, isHere: li.querySelector('.here') !== null };
    })()`);
    assert.equal(first.isHere, true, 'the newest session is this browser');
    assert.match(first.text, /Chrome on Linux/);
    assert.match(first.text, /127\.0\.0\.1/);
    assert.match(first.text, /password and code/);
    await screenshots(laptop, 'sessions');
    // The phone's session: the second in the list. Two clicks end it.
    for (let click = 0; click < 2; click++) await laptop.evaluate(`(document.querySelectorAll('#session-list li')[1].querySelector('button').click(), true)`);
    assert.equal(await shownText(laptop, 'sessions-message'), 'Session ended: it is signed out everywhere it was used.');
    await laptop.waitFor(`document.querySelectorAll('#session-list li').length === ${count - 1}`);
    assert.equal(await reachesApp(phone), false, 'the ended session is refused at the gate at once');
    // The laptop's own session (on Gatehouse's site) goes on.
    await laptop.navigate(`${home}/gatehouse/account`);
    await laptop.waitFor(`document.querySelectorAll('#session-list li').length === ${count - 1}`);
    assert.deepEqual(unexpectedProblems(laptop), []);
  });

  it('shows the administrator each account\'s last sign-in and sessions, and ends one', async () => {
    await admin.navigate(`${home}/gatehouse/users`);
    await admin.waitFor(`document.querySelectorAll('#users li.user').length === 2`);
    const tags = await admin.evaluate<string[]>(`(() => {
      const item = [...document.querySelectorAll('#users li.user')].find((li) => li.querySelector('.user-name').textContent === ${JSON.stringify(invitee)});
      return [...item.querySelectorAll('.tag')].map((tag) => tag.textContent);
    })()`);
    assert.ok(tags.some((tag) => tag.startsWith('last sign-in ')), tags.join(', '));
    await admin.evaluate(`(() => {
      const item = [...document.querySelectorAll('#users li.user')].find((li) => li.querySelector('.user-name').textContent === ${JSON.stringify(invitee)});
      [...item.querySelectorAll('button')].find((b) => b.textContent === 'Sessions').click();
      return true;
    })()`);
    const endButtons = `[...document.querySelectorAll('ul.sessions li button')].filter((b) => b.textContent === 'End')`;
    const listed = await admin.waitFor<number>(`${endButtons}.length`);
    await screenshots(admin, 'users-sessions');
    await admin.evaluate(`(${endButtons}[0].click(), true)`);
    assert.equal(await shownText(admin, 'status'), `Ended a session of ${invitee}.`);
    await admin.waitFor(`${endButtons}.length === ${listed - 1}`);
    assert.deepEqual(unexpectedProblems(admin), []);
  });
});
