// The administrators' users page ({base}/gatehouse/users) in a real browser (headless Chromium over
// --remote-debugging-pipe): sign in on the login page, list, add without client settings, change
// level and groups, remove; the last-administrator rule; what a USER and a stranger see; desktop
// and phone screenshots (kept in GATEHOUSE_SCREENSHOT_DIR when it is set).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { totpCode } from '../../../src/totp/codes.js';
import { Chromium, type Page, type PageProblem } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { registerVia, viaProxy } from './through-proxy.js';

let browser: Chromium | undefined;
let gatehouse: ServeProcess;
let origin = '';
let adminToken = '';
const ADMIN = 'root';
const ADMIN_PASSWORD = 'root-password-9q';
const pages: Page[] = [];

async function api(method: string, path: string, body?: unknown, token = adminToken): Promise<{ status: number; json: unknown }> {
  const res = await httpCall(gatehouse.port, { method, path, ...(body === undefined ? {} : { body }), ...(token === '' ? {} : { token }) });
  return { status: res.status, json: res.json };
}

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
  gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir()]);
  origin = `http://127.0.0.1:${gatehouse.port}`;
  const first = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: ADMIN, password: ADMIN_PASSWORD, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
  assert.equal(first.status, 200, first.text);
  adminToken = first.cookieToken ?? '';
  assert.equal((await api('POST', '/api/auth/users', { username: 'wiki-reader', password: 'wiki-reader-pw', level: 'USER', groups: ['family', 'media'] })).status, 200);
  assert.equal((await api('POST', '/api/auth/users', { username: 'Ünïcödé <b>name</b>', password: 'odd-name-password', level: 5 })).status, 200);
  const reader = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'wiki-reader', password: 'wiki-reader-pw' } });
  assert.equal((await api('POST', '/api/auth/account/tokens', { name: 'backup', password: 'wiki-reader-pw' }, reader.cookieToken)).status, 200);
});

after(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  await gatehouse?.stop();
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

async function openPage(): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  return page;
}

/** Signs in on the login page, which returns to the users page. */
async function signedInUsersPage(username: string, password: string, at = origin): Promise<Page> {
  const page = await openPage();
  await page.navigate(`${at}/login?rd=${encodeURIComponent(`${at}/gatehouse/users`)}`);
  await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
  await page.evaluate(`(() => {
    document.getElementById('username').value = ${JSON.stringify(username)};
    document.getElementById('password').value = ${JSON.stringify(password)};
    document.getElementById('login').requestSubmit();
    return true;
  })()`);
  await page.waitForUrl((url) => url.pathname === '/gatehouse/users');
  return page;
}

/** The rendered list: one entry per account, its name and tags as shown. */
function shownUsers(page: Page): Promise<Array<{ name: string; tags: string[] }>> {
  return page.evaluate(`Array.from(document.querySelectorAll('#users li.user')).map((li) => ({
    name: li.querySelector('.user-name').textContent,
    tags: Array.from(li.querySelectorAll('.tag')).map((tag) => tag.textContent),
  }))`);
}

async function waitForList(page: Page, count: number): Promise<void> {
  await page.waitFor(`document.querySelectorAll('#users li.user').length === ${count}`);
}

/** Clicks the button with `label` in the entry of `username`. */
async function clickIn(page: Page, username: string, label: string): Promise<void> {
  const clicked = await page.evaluate<boolean>(`(() => {
    const item = Array.from(document.querySelectorAll('#users li.user')).find((li) => li.querySelector('.user-name').textContent === ${JSON.stringify(username)});
    const button = item && Array.from(item.querySelectorAll('button')).find((b) => b.textContent === ${JSON.stringify(label)});
    if (!button) return false;
    button.click();
    return true;
  })()`);
  assert.ok(clicked, `a "${label}" button for ${username}`);
}

async function shownMessage(page: Page, id: 'problem' | 'status'): Promise<string> {
  return page.waitFor<string>(`(() => { const m = document.getElementById('${id}'); return m && !m.hidden ? m.textContent : ''; })()`);
}

/**
 * Errors, exceptions and CSP violations, less the refusals the page was made to meet and the login
 * page's verify call while signed out (a 401 it expects).
 */
function unexpectedProblems(page: Page, allowedStatuses: number[] = []): PageProblem[] {
  return page.problems.filter(
    (problem) =>
      !(problem.source === 'log:network' && (/status of 401 .*\/api\/auth\/verify$/.test(problem.text) || allowedStatuses.some((status) => problem.text.includes(`status of ${status} `)))),
  );
}

describe('the users page in Chromium', () => {
  it('lists every account with level, groups, second factor and machine tokens, names as text', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 3);
    const shown = await shownUsers(page);
    assert.deepEqual(shown.map((user) => user.name).sort(), [ADMIN, 'wiki-reader', 'Ünïcödé <b>name</b>'].sort());
    const reader = shown.find((user) => user.name === 'wiki-reader');
    // The last tag is the last sign-in, as the browser writes a date: its own assertion below.
    assert.deepEqual(reader?.tags.slice(0, -1), ['User', 'family', 'media', 'no second factor', '1 machine token']);
    assert.deepEqual(shown.find((user) => user.name === ADMIN)?.tags.slice(0, -1), ['Administrator', 'no groups', 'no second factor', 'no machine tokens']);
    assert.match(reader?.tags.at(-1) ?? '', /^last sign-in \w/);
    assert.equal(shown.find((user) => user.name === 'Ünïcödé <b>name</b>')?.tags.at(-1), 'no sign-in yet');
    assert.equal(await page.evaluate(`document.querySelectorAll('#users b').length`), 0, 'a name is shown as text, never as HTML');
    assert.match(await page.evaluate<string>('document.body.innerText'), /Your account\s+Sign out/);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('adds an account without client settings, with groups', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 3);
    await page.evaluate(`(() => {
      document.getElementById('add-username').value = 'photos';
      document.getElementById('add-password').value = 'photos-password';
      document.getElementById('add-level').value = 'USER';
      document.getElementById('add-groups').value = 'family, media ';
      document.getElementById('add').requestSubmit();
      return true;
    })()`);
    assert.equal(await shownMessage(page, 'status'), 'Added photos.');
    await waitForList(page, 4);
    assert.deepEqual((await api('GET', '/api/auth/users/photos')).json, { username: 'photos', level: 'USER', groups: ['family', 'media'], totp: false, passkeys: 0, tokens: 0, lastSignInAt: null });
    const signIn = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'photos', password: 'photos-password' } });
    assert.equal(signIn.status, 200);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('refuses a bad group name before sending anything, and shows a taken name as the server says', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 4);
    await page.evaluate(`(() => {
      document.getElementById('add-username').value = 'bad-groups';
      document.getElementById('add-password').value = 'pw-bad-groups';
      document.getElementById('add-groups').value = 'Family';
      document.getElementById('add').requestSubmit();
      return true;
    })()`);
    assert.match(await shownMessage(page, 'problem'), /"Family" is not a group name/);
    assert.equal((await api('GET', '/api/auth/users/bad-groups')).status, 500);
    await page.evaluate(`(() => {
      document.getElementById('add-username').value = 'photos';
      document.getElementById('add-groups').value = '';
      document.getElementById('add').requestSubmit();
      return true;
    })()`);
    await page.waitFor(`document.getElementById('problem').textContent === 'That username is already taken.'`);
    assert.deepEqual(unexpectedProblems(page, [500]), []);
  });

  it('changes level and groups, and the gate sees the change', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 4);
    await clickIn(page, 'photos', 'Edit');
    await page.waitFor(`document.querySelector('#users form.edit') !== null`);
    await page.evaluate(`(() => {
      const form = document.querySelector('#users form.edit');
      form.querySelector('select').value = 'ADMINISTRATOR';
      form.querySelector('input').value = 'ops';
      form.requestSubmit();
      return true;
    })()`);
    assert.equal(await shownMessage(page, 'status'), 'Saved photos.');
    await page.waitFor(`Array.from(document.querySelectorAll('#users li.user .tag')).some((tag) => tag.textContent === 'ops')`);
    // photos signed in above: its last sign-in is a time now (checked in test/api/sessions.test.ts).
    const { lastSignInAt, ...summary } = (await api('GET', '/api/auth/users/photos')).json as { lastSignInAt: unknown };
    assert.deepEqual(summary, { username: 'photos', level: 'ADMINISTRATOR', groups: ['ops'], totp: false, passkeys: 0, tokens: 0 });
    assert.equal(typeof lastSignInAt, 'number');
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('resets a lost TOTP authenticator after the confirmation', async () => {
    const reader = await httpCall(gatehouse.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'wiki-reader', password: 'wiki-reader-pw' } });
    const begun = await api('POST', '/api/auth/account/totp', { password: 'wiki-reader-pw' }, reader.cookieToken);
    const seed = decodeBase32((begun.json as { secret: string }).secret);
    assert.ok(seed !== undefined);
    assert.equal((await api('POST', '/api/auth/account/totp/confirm', { code: totpCode(seed, Date.now()) }, reader.cookieToken)).status, 200);

    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 4);
    assert.ok((await shownUsers(page)).find((user) => user.name === 'wiki-reader')?.tags.includes('second factor: TOTP'));
    await page.evaluate(`window.confirm = () => true`);
    await clickIn(page, 'wiki-reader', 'Reset TOTP');
    assert.equal(await shownMessage(page, 'status'), 'Reset the TOTP of wiki-reader.');
    await page.waitFor(`Array.from(document.querySelectorAll('#users li.user .tag')).filter((tag) => tag.textContent === 'no second factor').length === 4`);
    assert.equal(((await api('GET', '/api/auth/users/wiki-reader')).json as { totp: boolean }).totp, false);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('removes an account after the confirmation', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 4);
    await page.evaluate(`window.confirm = () => true`);
    await clickIn(page, 'photos', 'Remove');
    assert.equal(await shownMessage(page, 'status'), 'Removed photos.');
    await waitForList(page, 3);
    assert.equal((await api('GET', '/api/auth/users/photos')).status, 500);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('keeps the last administrator: demoting or removing them shows the server\'s refusal', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 3);
    await page.evaluate(`window.confirm = () => true`);
    await clickIn(page, ADMIN, 'Remove');
    assert.match(await shownMessage(page, 'problem'), /last administrator/i);
    await clickIn(page, ADMIN, 'Edit');
    await page.evaluate(`(() => {
      const form = document.querySelector('#users form.edit');
      form.querySelector('select').value = 'USER';
      form.requestSubmit();
      return true;
    })()`);
    await page.waitFor(`document.getElementById('problem').textContent.includes('demoted')`);
    assert.equal(((await api('GET', `/api/auth/users/${ADMIN}`)).json as { level: string }).level, 'ADMINISTRATOR');
    assert.deepEqual(unexpectedProblems(page, [409]), []);
  });

  it('tells a USER the page is for administrators, and a stranger to sign in (with no "Sign out" for someone not signed in)', async () => {
    const asUser = await signedInUsersPage('wiki-reader', 'wiki-reader-pw');
    assert.equal(await shownMessage(asUser, 'problem'), 'Only administrators can manage users.');
    assert.equal(await asUser.evaluate(`document.getElementById('content').hidden`), true);
    assert.match(await asUser.evaluate<string>('document.body.innerText'), /Your account\s+Sign out/, 'a signed-in USER can reach their account and sign out');
    assert.deepEqual(unexpectedProblems(asUser, [403]), []);

    const stranger = await openPage();
    await stranger.navigate(`${origin}/gatehouse/users`);
    assert.match(await shownMessage(stranger, 'problem'), /Sign in as an administrator/);
    const href = await stranger.evaluate<string>(`document.getElementById('sign-in').href`);
    assert.equal(href, `${origin}/login?rd=${encodeURIComponent(`${origin}/gatehouse/users`)}`);
    assert.doesNotMatch(await stranger.evaluate<string>('document.body.innerText'), /Your account|Sign out/);
    assert.deepEqual(unexpectedProblems(stranger, [401]), []);
  });

  it('lays out at desktop and phone width without horizontal scrolling (screenshots)', async () => {
    const page = await signedInUsersPage(ADMIN, ADMIN_PASSWORD);
    await waitForList(page, 3);
    const directory = process.env['GATEHOUSE_SCREENSHOT_DIR'];
    for (const [name, width, height, isMobile] of [['desktop', 1280, 900, false], ['phone', 390, 844, true]] as const) {
      await page.setViewport(width, height, isMobile);
      await page.waitFor(`window.innerWidth === ${width}`);
      assert.ok(await page.evaluate<boolean>(`document.documentElement.scrollWidth <= window.innerWidth`), `no horizontal scroll at ${width}px`);
      const png = await page.screenshot();
      assert.ok(png.subarray(1, 4).toString('latin1') === 'PNG' && png.length > 1000, `a PNG at ${width}px`);
      if (directory !== undefined && directory !== '') await writeFile(join(directory, `users-page-${name}.png`), png);
    }
    assert.deepEqual(unexpectedProblems(page), []);
  });
});

for (const kind of PROXY_KINDS) {
  describe(`the users page in Chromium through ${kind}, on Gatehouse's own site of the recipe`, () => {
    let stack: Stack;
    let admin: { username: string; password: string };
    before(async () => {
      stack = await startStack({ proxy: kind, recipe: 'app', publicUrl: true });
      admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
    });
    after(() => stack?.stop());

    it('signs in, lists, adds an account with groups, and the gate lets it into the group app', async () => {
      const page = await signedInUsersPage(admin.username, admin.password, stack.home.origin);
      await waitForList(page, 1);
      await page.evaluate(`(() => {
        document.getElementById('add-username').value = 'family-member';
        document.getElementById('add-password').value = 'family-member-pw';
        document.getElementById('add-groups').value = 'family';
        document.getElementById('add').requestSubmit();
        return true;
      })()`);
      assert.equal(await shownMessage(page, 'status'), 'Added family-member.');
      await waitForList(page, 2);
      assert.deepEqual((await shownUsers(page)).find((user) => user.name === 'family-member')?.tags, ['User', 'family', 'no second factor', 'no machine tokens', 'no sign-in yet']);
      const signedIn = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'family-member', password: 'family-member-pw' } });
      assert.equal(signedIn.status, 200);
      assert.deepEqual(unexpectedProblems(page), [], stack.describe());
    });
  });
}
