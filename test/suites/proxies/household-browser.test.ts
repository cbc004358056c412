// A household's second day, in a real browser (headless Chromium over --remote-debugging-pipe)
// through nginx running the app recipe of deploy/ (Gatehouse's account, users, join and reset pages
// and their API on its own site, its --public-url; the app's sign-in page and the app behind the
// gate on the app's site): the join and reset pages survive a reload and say when a newer reset
// link replaced the one opened; the pages say the shortest password before it is typed;
// withdrawing an invitation asks once and takes its link off the page; two browsers of one kind
// are told apart in the sessions list; the account page leads administrators to the users page;
// signing out lands on a page that says so; the sign-in page names its site (--site-name, else the
// host in the address bar).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page, type PageProblem } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, killAllChildren, removeTempDirs, startServe, tempDir } from '../../helpers/process.js';
import { startStack, stopAllProxies, type HomeSite, type Stack } from '../../helpers/proxies.js';
import { viaHome } from './through-proxy.js';

const ADMIN = 'root';
const ADMIN_PASSWORD = 'root-password-9q';

let browser: Chromium | undefined;
let stack: Stack;
/** Gatehouse's own site (http://localhost:PORT, its --public-url): the account, users, join and reset pages. */
let home = '';
/** The app's site: its sign-in page, /logout and the app behind the gate. */
let app = '';
const pages: Page[] = [];

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
  stack = await startStack({ proxy: 'nginx', recipe: 'app', publicUrl: true, gatehouseArgs: ['--site-name', 'The Smiths'] });
  home = stack.home.origin;
  app = `http://127.0.0.1:${stack.proxy.port}`;
  await registerAdmin(stack.home);
});

after(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  await stack?.stop();
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** Registers the first account, the administrator, on Gatehouse's own site `site`. */
async function registerAdmin(site: HomeSite): Promise<void> {
  const first = await viaHome(site, {
    method: 'POST', path: '/api/auth/register', body: { username: ADMIN, password: ADMIN_PASSWORD, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' },
  });
  assert.equal(first.status, 200, first.text);
}

/** A new browser (a context of its own: its own cookies). */
async function openBrowser(): Promise<Page> {
  assert.ok(browser !== undefined, 'chromium started');
  const page = await browser.newPage();
  pages.push(page);
  return page;
}

/** What the pages reported, less the refusals they are made to meet (signed-out checks, refused links). */
function unexpectedProblems(page: Page): PageProblem[] {
  // The favicon.ico a browser asks of an app's site without a session is the gate's 401.
  const expected = [/status of 401 .*\/api\/auth\/(verify|authenticate|account|account\/sessions|join\/check|reset\/check)$/, /status of 401 .*\/favicon\.ico$/];
  return page.problems.filter((problem) => !(problem.source === 'log:network' && expected.some((pattern) => pattern.test(problem.text))));
}

/** Fills the fields of a shown form by id and submits it as a person would (the browser's own checks first). */
async function fill(page: Page, formId: string, values: Record<string, string>): Promise<void> {
  await page.waitFor(`(() => { const form = document.getElementById(${JSON.stringify(formId)}); return form !== null && !form.hidden && form.offsetParent !== null; })()`);
  await page.evaluate(`(() => {
    const values = ${JSON.stringify(values)};
    for (const id of Object.keys(values)) document.getElementById(id).value = values[id];
    document.getElementById(${JSON.stringify(formId)}).requestSubmit();
    return true;
  })()`);
}

/** The shown text of element `id`, once there is some. */
const shownText = (page: Page, id: string): Promise<string> =>
  page.waitFor<string>(`(() => { const m = document.getElementById(${JSON.stringify(id)}); return m && !m.hidden && m.offsetParent !== null && m.textContent !== '' ? m.textContent : ''; })()`);

/** Signs in on the sign-in page of `rd`'s site, which goes on to `rd`. */
async function signIn(page: Page, username: string, password: string, rd: string): Promise<void> {
  await page.navigate(`${new URL(rd).origin}/login?rd=${encodeURIComponent(rd)}`);
  await fill(page, 'login', { username, password });
  await page.waitForUrl((url) => url.href === rd);
}

/** Reloads the page as the browser's reload button does, and waits for the new document. */
async function reload(page: Page): Promise<void> {
  await page.evaluate(`(window.beforeReload = true)`);
  await page.send('Page.reload', {});
  await page.waitFor(`document.readyState === 'complete' && window.beforeReload === undefined`);
}

/** An administrator's API call with a session cookie, on Gatehouse's own site through the proxy (the stack's unless `site`). */
async function adminCall(method: string, path: string, body?: unknown, site: HomeSite = stack.home): Promise<{ status: number; json: Record<string, unknown> }> {
  const signedIn = await viaHome(site, { method: 'POST', path: '/api/auth/authenticate', body: { username: ADMIN, password: ADMIN_PASSWORD } });
  assert.ok(signedIn.cookieToken !== undefined, signedIn.text);
  const answer = await viaHome(site, { method, path, token: signedIn.cookieToken, ...(body === undefined ? {} : { body }) });
  return { status: answer.status, json: (answer.json ?? {}) as Record<string, unknown> };
}

describe('the join and reset pages, day two', () => {
  it('the join page survives a reload: the secret is off the address bar but still opens the invitation', async () => {
    const made = await adminCall('POST', '/api/auth/invites', { username: 'dana', level: 'USER' });
    assert.equal(made.status, 200);
    const page = await openBrowser();
    await page.navigate(String(made.json['url']));
    await page.waitFor(`!document.getElementById('join').hidden`);
    assert.equal(await page.evaluate(`location.hash`), '', 'the secret is taken off the address bar');
    await reload(page);
    await page.waitFor(`!document.getElementById('join').hidden || !document.getElementById('problem').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('problem').hidden`), true, await page.evaluate<string>(`document.getElementById('problem').textContent`));
    assert.equal(await page.evaluate(`document.getElementById('invited-name').textContent`), 'dana');
    assert.equal(await page.evaluate(`location.href`), `${home}/gatehouse/join`);
    await fill(page, 'join', { password: 'dana-password-9q', repeat: 'dana-password-9q' });
    await page.waitFor(`!document.getElementById('welcome').hidden`);
    // Reloaded once more, the spent link says so instead of calling itself not valid.
    await reload(page);
    assert.equal(await shownText(page, 'problem'), 'This link has already been used; each link works once.');
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('the reset page survives a reload, and a link a newer one replaced says so', async () => {
    assert.equal((await adminCall('POST', '/api/auth/users', { username: 'eddie', password: 'eddie-password-9q', level: 'USER' })).status, 200);
    const older = await adminCall('POST', '/api/auth/users/eddie/reset-link', {});
    const newer = await adminCall('POST', '/api/auth/users/eddie/reset-link', {});
    const page = await openBrowser();
    await page.navigate(String(older.json['url']));
    assert.equal(await shownText(page, 'problem'), 'A newer link was made for this account and replaced this one; use the newest link you were sent.');
    assert.equal(await page.evaluate(`document.getElementById('reset').hidden`), true, 'nothing to fill in');
    const current = await openBrowser();
    await current.navigate(String(newer.json['url']));
    await current.waitFor(`!document.getElementById('reset').hidden`);
    await reload(current);
    await current.waitFor(`!document.getElementById('reset').hidden || !document.getElementById('problem').hidden`);
    assert.equal(await current.evaluate(`document.getElementById('reset-name').textContent`), 'eddie');
    assert.deepEqual(unexpectedProblems(current), []);
  });
});

describe('the shortest password, said before it is typed', () => {
  it('the join, reset, account and users pages name it beside the field and carry it as minlength', async () => {
    const invitation = await adminCall('POST', '/api/auth/invites', { level: 'USER' });
    assert.equal((await adminCall('POST', '/api/auth/users', { username: 'fran', password: 'fran-password-9q', level: 'USER' })).status, 200);
    const reset = await adminCall('POST', '/api/auth/users/fran/reset-link', {});
    const stranger = await openBrowser();
    const admin = await openBrowser();
    await signIn(admin, ADMIN, ADMIN_PASSWORD, `${home}/gatehouse/account`);
    const cases: ReadonlyArray<readonly [Page, string, string, string]> = [
      [stranger, String(invitation.json['url']), 'password', 'repeat'],
      [stranger, String(reset.json['url']), 'password', 'repeat'],
      [admin, `${home}/gatehouse/account`, 'new-password', 'repeat-password'],
      [admin, `${home}/gatehouse/users`, 'add-password', ''],
    ];
    for (const [page, url, field, repeat] of cases) {
      await page.navigate(url);
      await page.waitFor(`(() => { const field = document.getElementById(${JSON.stringify(field)}); return field !== null && field.offsetParent !== null; })()`);
      const seen = await page.evaluate<{ label: string; minLength: number; repeatMinLength: number }>(`(() => ({
        label: document.querySelector('label[for=${field}]').textContent,
        minLength: document.getElementById(${JSON.stringify(field)}).minLength,
        repeatMinLength: ${repeat === '' ? '12' : `document.getElementById(${JSON.stringify(repeat)}).minLength`},
      }))()`);
      assert.match(seen.label, /\(at least 12 characters\)$/, url);
      assert.equal(seen.minLength, 12, url);
      assert.equal(seen.repeatMinLength, 12, url);
    }
  });

  it('the join page does not send a shorter password: the browser says so first, and the invitation stays open', async () => {
    const invitation = await adminCall('POST', '/api/auth/invites', { username: 'gail', level: 'USER' });
    const page = await openBrowser();
    await page.navigate(String(invitation.json['url']));
    await page.waitFor(`!document.getElementById('join').hidden`);
    for (const id of ['password', 'repeat']) {
      await page.evaluate(`(document.getElementById(${JSON.stringify(id)}).focus(), true)`);
      await page.send('Input.insertText', { text: 'eleven-char' });
    }
    const isValid = await page.evaluate<boolean>(`(() => { const form = document.getElementById('join'); form.requestSubmit(); return form.checkValidity(); })()`);
    assert.equal(isValid, false);
    assert.equal(await page.evaluate(`document.getElementById('password').validity.tooShort`), true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await page.evaluate(`document.getElementById('welcome').hidden`), true, 'no account was made');
    const check = await viaHome(stack.home, { method: 'POST', path: '/api/auth/join/check', body: { secret: String(invitation.json['url']).split('#')[1] } });
    assert.equal(check.status, 200, check.text);
  });
});

describe('no offer that cannot work', () => {
  it('over plain http to a host name, the join and account pages offer no passkey and say why', async (t) => {
    // Gatehouse's own site is https (its --public-url), but its proxy also answers plain http on
    // that name without sending the browser on to https: Gatehouse compares host and port, not the
    // scheme, so its pages answer there, in a page that is not a secure context. gatehouse.test
    // resolves to 127.0.0.1 in the test browser.
    const insecure = await startStack({ proxy: 'nginx', recipe: 'app', gatehouseArgs: (ports) => ['--public-url', `https://gatehouse.test:${ports.home}`] });
    t.after(() => insecure.stop());
    const site: HomeSite = { port: insecure.home.port, host: `gatehouse.test:${insecure.home.port}`, origin: `http://gatehouse.test:${insecure.home.port}` };
    await registerAdmin(site);
    const made = await adminCall('POST', '/api/auth/invites', { username: 'hank', level: 'USER' }, site);
    assert.equal(made.status, 200, JSON.stringify(made.json));
    const secret = String(made.json['url']).split('#')[1];
    const page = await openBrowser();
    await page.navigate(`${site.origin}/gatehouse/join#${secret}`);
    await fill(page, 'join', { password: 'hank-password-9q', repeat: 'hank-password-9q' });
    await page.waitFor(`!document.getElementById('welcome').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('to-passkey').offsetParent === null`), true, 'no passkey offered');
    assert.match(await shownText(page, 'passkey-why'), /only over https \(or on localhost\).*plain http at gatehouse\.test/);
    assert.equal(await page.evaluate(`document.getElementById('to-totp').offsetParent !== null`), true);
    await page.evaluate(`(document.getElementById('to-totp').click(), true)`);
    await page.waitForUrl((url) => url.pathname === '/gatehouse/account');
    await page.waitFor(`!document.getElementById('account').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('totp-section').offsetParent !== null`), true, 'the linked section is shown');
    assert.equal(await page.evaluate(`[...document.querySelectorAll('button')].some((b) => b.offsetParent !== null && /passkey/i.test(b.textContent))`), false, 'no button offers a passkey');
    assert.match(await shownText(page, 'passkey-why'), /only over https/);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('on a secure page the join page offers a passkey, and its links lead to sections the account page shows', async () => {
    const made = await adminCall('POST', '/api/auth/invites', { username: 'iris', level: 'USER' });
    const page = await openBrowser();
    await page.navigate(String(made.json['url']));
    await fill(page, 'join', { password: 'iris-password-9q', repeat: 'iris-password-9q' });
    await page.waitFor(`!document.getElementById('welcome').hidden`);
    assert.equal(await page.evaluate(`document.getElementById('passkey-why').hidden`), true);
    const links = await page.evaluate<string[]>(`[...document.querySelectorAll('#welcome a')].filter((a) => a.offsetParent !== null).map((a) => a.href)`);
    assert.deepEqual(links.map((link) => new URL(link).hash), ['#totp-section', '#passkeys-section', '']);
    for (const link of links) {
      await page.navigate(link);
      await page.waitFor(`!document.getElementById('account').hidden`);
      const hash = new URL(link).hash;
      if (hash !== '') assert.equal(await page.evaluate(`document.querySelector(${JSON.stringify(hash)}).offsetParent !== null`), true, link);
    }
    assert.deepEqual(unexpectedProblems(page), []);
  });
});

describe('the users page and the account page', () => {
  it('withdrawing an invitation asks once, and its link leaves the page with it', async () => {
    const admin = await openBrowser();
    await signIn(admin, ADMIN, ADMIN_PASSWORD, `${home}/gatehouse/users`);
    await admin.evaluate(`(() => {
      window.questions = [];
      window.answer = false;
      window.confirm = (question) => { window.questions.push(question); return window.answer; };
      return true;
    })()`);
    await fill(admin, 'invite', { 'invite-username': 'jack', 'invite-level': 'USER', 'invite-groups': '', 'invite-days': '2' });
    await admin.waitFor(`!document.getElementById('new-link').hidden`);
    const withdraw = `[...document.querySelectorAll('#invitation-list li')].find((li) => li.textContent.includes('jack')).querySelector('button').click()`;
    await admin.waitFor(`[...document.querySelectorAll('#invitation-list li')].some((li) => li.textContent.includes('jack'))`);
    await admin.evaluate(`(${withdraw}, true)`);
    assert.deepEqual(await admin.evaluate(`window.questions`), ['Withdraw the invitation for jack? Its link stops working at once.']);
    assert.equal(await admin.evaluate(`document.getElementById('new-link').hidden`), false, 'a No keeps the invitation and its link');
    await admin.evaluate(`(window.answer = true, ${withdraw}, true)`);
    await admin.waitFor(`![...document.querySelectorAll('#invitation-list li')].some((li) => li.textContent.includes('jack'))`);
    assert.equal(await admin.evaluate(`window.questions.length`), 2, 'one question for each click');
    assert.equal(await admin.evaluate(`document.getElementById('new-link').hidden`), true, 'the withdrawn link is off the page');
    assert.deepEqual(unexpectedProblems(admin), []);
  });

  it('two browsers of one kind are told apart in the sessions list: address, last seen, this browser', async () => {
    assert.equal((await adminCall('POST', '/api/auth/users', { username: 'kate', password: 'kate-password-9q', level: 'USER' })).status, 200);
    const phone = await openBrowser();
    const laptop = await openBrowser();
    await signIn(phone, 'kate', 'kate-password-9q', `${home}/gatehouse/account`);
    await signIn(laptop, 'kate', 'kate-password-9q', `${home}/gatehouse/account`);
    await laptop.navigate(`${home}/gatehouse/account#sessions-section`);
    await laptop.waitFor(`document.querySelectorAll('#session-list li').length === 2`);
    const entries = await laptop.evaluate<Array<{ text: string; isHere: boolean }>>(`[...document.querySelectorAll('#session-list li')].map((li) => ({ text: li.innerText, isHere: li.querySelector('.here') !== null }))`);
    assert.deepEqual(entries.map((entry) => entry.isHere).sort(), [false, true], 'one of the two is this browser');
    for (const entry of entries) {
      assert.match(entry.text, /Chrome on Linux/);
      assert.match(entry.text, /From 127\.0\.0\.1 · signed in .+ with password/);
      assert.match(entry.text, entry.isHere ? /Active now/ : /Last seen /, entry.text);
    }
    // The users page marks the administrator's own browser among its own account's sessions the same way.
    const admin = await openBrowser();
    await signIn(admin, ADMIN, ADMIN_PASSWORD, `${home}/gatehouse/users`);
    await admin.waitFor(`document.querySelectorAll('#users li.user').length > 0`);
    await admin.evaluate(`(() => {
      const item = [...document.querySelectorAll('#users li.user')].find((li) => li.querySelector('.user-name').textContent === ${JSON.stringify(ADMIN)});
      [...item.querySelectorAll('button')].find((b) => b.textContent === 'Sessions').click();
      return true;
    })()`);
    await admin.waitFor(`document.querySelectorAll('ul.sessions li.session').length > 0`);
    assert.equal(await admin.evaluate(`document.querySelectorAll('ul.sessions li.session .here').length`), 1, 'this browser is marked once');
    assert.match(await admin.evaluate<string>(`document.querySelector('ul.sessions li.session .here').closest('li').innerText`), /Active now/);
    assert.deepEqual(unexpectedProblems(laptop), []);
    assert.deepEqual(unexpectedProblems(admin), []);
  });

  it('the account page leads an administrator to the users page, and a user nowhere of the kind', async () => {
    const admin = await openBrowser();
    await signIn(admin, ADMIN, ADMIN_PASSWORD, `${home}/gatehouse/account`);
    await admin.waitFor(`!document.getElementById('account').hidden`);
    const link = await admin.evaluate<{ text: string; href: string } | null>(`(() => {
      const link = [...document.querySelectorAll('a')].find((a) => a.offsetParent !== null && a.pathname === '/gatehouse/users');
      return link === undefined ? null : { text: link.textContent, href: link.href };
    })()`);
    assert.deepEqual(link, { text: 'Manage users', href: `${home}/gatehouse/users` });
    await admin.evaluate(`([...document.querySelectorAll('a')].find((a) => a.pathname === '/gatehouse/users').click(), true)`);
    await admin.waitForUrl((url) => url.pathname === '/gatehouse/users');
    await admin.waitFor(`document.querySelectorAll('#users li.user').length > 0`);
    const user = await openBrowser();
    await signIn(user, 'kate', 'kate-password-9q', `${home}/gatehouse/account`);
    await user.waitFor(`!document.getElementById('account').hidden`);
    assert.equal(await user.evaluate(`[...document.querySelectorAll('a')].some((a) => a.offsetParent !== null && a.pathname === '/gatehouse/users')`), false);
    assert.deepEqual(unexpectedProblems(admin), []);
  });

  it('signing out lands on a page that says so, with the sign-in form to sign in again', async () => {
    const page = await openBrowser();
    await signIn(page, 'kate', 'kate-password-9q', `${home}/gatehouse/account`);
    await page.waitFor(`!document.getElementById('account').hidden`);
    await page.evaluate(`(document.getElementById('sign-out').click(), true)`);
    await page.waitForUrl((url) => url.pathname === '/login');
    assert.equal(await shownText(page, 'signed-out-note'), 'You are signed out.');
    assert.equal(await page.evaluate(`document.getElementById('login').offsetParent !== null`), true, 'the form to sign in again');
    assert.deepEqual(await page.cookies(`${home}/`), [], 'the session cookie is gone');
    // The sign-out address an app links to lands there too, and passes rd on.
    await signIn(page, 'kate', 'kate-password-9q', `${app}/dashboard`);
    await page.navigate(`${app}/logout?rd=${encodeURIComponent(`${app}/dashboard`)}`);
    await page.waitForUrl((url) => url.pathname === '/login');
    assert.equal(await shownText(page, 'signed-out-note'), 'You are signed out.');
    await fill(page, 'login', { username: 'kate', password: 'kate-password-9q' });
    await page.waitForUrl((url) => url.pathname === '/dashboard');
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('the sign-in page names the site it signs in to: --site-name, else the host in the address bar', async () => {
    const page = await openBrowser();
    await page.navigate(`${app}/login`);
    await page.waitFor(`document.readyState === 'complete'`);
    assert.equal(await page.evaluate(`document.querySelector('h1').textContent`), 'Sign in to The Smiths');
    assert.equal(await page.evaluate(`document.title`), 'Sign in · The Smiths');
    const plain = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', await tempDir()]);
    try {
      await page.navigate(`http://127.0.0.1:${plain.port}/login`);
      await page.waitFor(`document.readyState === 'complete' && document.querySelector('h1').textContent !== 'Sign in'`);
      assert.equal(await page.evaluate(`document.querySelector('h1').textContent`), `Sign in to 127.0.0.1:${plain.port}`);
    } finally {
      await plain.stop();
    }
    assert.deepEqual(unexpectedProblems(page), []);
  });
});

describe('one family of pages', () => {
  /** How a page's next step looks: the computed style a person sees. */
  const looksOf = (page: Page, selector: string): Promise<{ background: string; color: string; border: string; radius: string; weight: string; decoration: string } | null> =>
    page.evaluate(`(() => {
      const node = [...document.querySelectorAll(${JSON.stringify(selector)})].find((candidate) => candidate.offsetParent !== null);
      if (node === undefined) return null;
      const style = getComputedStyle(node);
      return { background: style.backgroundColor, color: style.color, border: style.borderTopColor, radius: style.borderTopLeftRadius, weight: style.fontWeight, decoration: style.textDecorationLine };
    })()`);

  it("every page that tells a result gives its next step the sign-in page's button, never a bare link", async () => {
    const page = await openBrowser();
    await page.navigate(`${app}/login`);
    await page.waitFor(`document.readyState === 'complete'`);
    const primary = await looksOf(page, '#login button[type=submit]');
    const secondary = await looksOf(page, '#passkey');
    assert.ok(primary !== null && secondary !== null);
    assert.equal(await page.evaluate(`getComputedStyle(document.querySelector('main')).backgroundColor`), 'rgb(255, 255, 255)');

    assert.equal((await adminCall('POST', '/api/auth/users', { username: 'liam', password: 'liam-password-9q', level: 'USER' })).status, 200);
    const reset = await adminCall('POST', '/api/auth/users/liam/reset-link', {});
    await page.navigate(String(reset.json['url']));
    await fill(page, 'reset', { password: 'liam-password-new', repeat: 'liam-password-new' });
    await page.waitFor(`!document.getElementById('done').hidden`);
    assert.deepEqual(await looksOf(page, '#done a'), primary, 'reset done: Sign in');
    await reload(page);
    await shownText(page, 'problem');
    assert.deepEqual(await looksOf(page, '#refused-next a'), secondary, 'a used link: the way to the sign-in page');

    const user = await openBrowser();
    await signIn(user, 'liam', 'liam-password-new', `${app}/dashboard`);
    await user.navigate(`${app}/admin`);
    await user.waitFor(`document.querySelector('h1') !== null && document.querySelector('h1').textContent === 'Not allowed'`);
    assert.deepEqual(await looksOf(user, '#switch'), secondary, 'the 403 page: sign in as someone else');
    assert.deepEqual(unexpectedProblems(page), []);
  });
});
