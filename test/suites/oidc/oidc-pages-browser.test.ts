// The pages OpenID Connect adds, in Chromium, used as a person would: the users page's sign-in apps
// section, the account page's name and e-mail, the 400 page of a sign-in link that cannot go back,
// the logout pages, and the sign-in page asked for a new sign-in. Each at desktop and phone width,
// saved in GATEHOUSE_SCREENSHOT_DIR when it is set.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, freePort, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';
import { saveScreenshots, unexpectedProblems } from './screens.js';

const ADMIN = 'root';
const ADMIN_PASSWORD = 'root-password-7k';

describe('the OpenID Connect pages in Chromium', () => {
  let browser: Chromium | undefined;
  let gatehouse: ServeProcess;
  let origin = '';
  let adminToken = '';
  const pages: Page[] = [];

  before(async () => {
    assertBuilt();
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', String(port), '--data-dir', await tempDir(), '--public-url', origin]);
    const first = await httpCall(port, { method: 'POST', path: '/api/auth/register', body: { username: ADMIN, password: ADMIN_PASSWORD, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(first.status, 200, first.text);
    adminToken = first.cookieToken ?? '';
    browser = await Chromium.launch();
  });

  after(async () => {
    for (const page of pages) await page.close();
    await browser?.close();
    await gatehouse?.stop();
    await killAllChildren();
    await removeTempDirs();
  });

  async function signedIn(to: string, username = ADMIN, password = ADMIN_PASSWORD): Promise<Page> {
    assert.ok(browser !== undefined);
    const page = await browser.newPage();
    pages.push(page);
    await page.navigate(`${origin}/login?rd=${encodeURIComponent(`${origin}${to}`)}`);
    await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
    await page.evaluate(`(() => {
      document.getElementById('username').value = ${JSON.stringify(username)};
      document.getElementById('password').value = ${JSON.stringify(password)};
      document.getElementById('login').requestSubmit();
      return true;
    })()`);
    await page.waitForUrl((url) => url.pathname === to);
    return page;
  }

  const api = (method: string, path: string, body?: unknown) =>
    httpCall(gatehouse.port, { method, path, token: adminToken, ...(body === undefined ? {} : { body }) });

  it('registers an app on the users page, shows its secret once, lists it, and removes it', async () => {
    const page = await signedIn('/gatehouse/users');
    await page.waitFor(`!document.getElementById('apps-section').hidden && document.getElementById('no-apps').hidden === false`);
    assert.equal(await page.evaluate<string>(`document.getElementById('apps-issuer-url').textContent`), origin);
    await page.evaluate(`(() => {
      const form = document.getElementById('app-add');
      form.elements.name.value = 'Grafana';
      form.elements.redirects.value = 'https://grafana.example.org/login/generic_oauth\\n  https://grafana.example.org/other  \\n';
      form.elements.groups.value = 'ops, family';
      form.elements.mfa.checked = true;
      form.requestSubmit();
      return true;
    })()`);
    await page.waitFor(`!document.getElementById('app-created').hidden && document.querySelectorAll('#apps li').length === 1`);
    const secret = await page.evaluate<string>(`document.getElementById('app-created-secret').textContent`);
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    const listed = (await api('GET', '/api/auth/clients')).json as Array<Record<string, unknown>>;
    assert.deepEqual([listed[0]?.['name'], listed[0]?.['groups'], listed[0]?.['mfa'], listed[0]?.['redirectUris']],
      ['Grafana', ['ops', 'family'], true, ['https://grafana.example.org/login/generic_oauth', 'https://grafana.example.org/other']]);
    assert.deepEqual(await page.evaluate(`Array.from(document.querySelectorAll('#apps .tag')).map((tag) => tag.textContent)`), ['with a secret', 'RS256', 'two factors', 'ops', 'family']);
    await saveScreenshots(page, 'oidc-users-apps');
    // A bad redirect URI: the API's message, nothing registered.
    await page.evaluate(`(() => {
      const form = document.getElementById('app-add');
      form.elements.name.value = 'Evil';
      form.elements.redirects.value = 'http://evil.example/cb';
      form.requestSubmit();
      return true;
    })()`);
    assert.match(await page.waitFor<string>(`(() => { const m = document.getElementById('problem'); return m.hidden ? '' : m.textContent; })()`), /https/);
    await page.send('Page.enable');
    await page.evaluate(`(() => { window.confirm = () => true; Array.from(document.querySelectorAll('#apps button')).find((b) => b.textContent === 'Remove').click(); return true; })()`);
    await page.waitFor(`document.querySelectorAll('#apps li').length === 0 && document.getElementById('app-created').hidden`);
    assert.deepEqual((await api('GET', '/api/auth/clients')).json, []);
    assert.deepEqual(unexpectedProblems(page, [400]), []);
  });

  it('sets an e-mail address and a name on the account page, and an administrator\'s address shows as such', async () => {
    assert.equal((await api('POST', '/api/auth/users', { username: 'carol', password: 'carol-password-2', level: 'USER' })).status, 200);
    const page = await signedIn('/gatehouse/account', 'carol', 'carol-password-2');
    await page.waitFor(`!document.getElementById('account').hidden && document.getElementById('profile-form') !== null`);
    await page.evaluate(`(() => {
      const form = document.getElementById('profile-form');
      form.elements.name.value = 'Carol Danvers';
      form.elements.email.value = 'carol@example.org';
      form.requestSubmit();
      return true;
    })()`);
    await page.waitFor(`document.getElementById('profile-message').textContent === 'Saved.'`);
    const stored = (await api('GET', '/api/auth/users/carol')).json as Record<string, unknown>;
    assert.deepEqual([stored['email'], stored['name']], ['carol@example.org', 'Carol Danvers']);
    assert.equal(await page.evaluate(`document.getElementById('profile-form').elements.name.value`), 'Carol Danvers');
    assert.equal(await page.evaluate(`document.getElementById('profile-verified').hidden`), true);
    assert.equal((await api('PATCH', '/api/auth/users/carol', { email: 'carol@corp.example' })).status, 200);
    await page.navigate(`${origin}/gatehouse/account`);
    await page.waitFor(`document.getElementById('profile-form').elements.email.value === 'carol@corp.example' && !document.getElementById('profile-verified').hidden`);
    await saveScreenshots(page, 'oidc-account-profile');
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('shows a sign-in link with an unknown app or redirect URI as a 400 page, never a redirect', async () => {
    assert.ok(browser !== undefined);
    const page = await browser.newPage();
    pages.push(page);
    await page.navigate(`${origin}/oidc/authorize?response_type=code&client_id=${'f'.repeat(32)}&redirect_uri=${encodeURIComponent('https://evil.example/')}&scope=openid`);
    await page.waitFor(`document.readyState === 'complete' && document.querySelector('h1') !== null`);
    assert.match(await page.evaluate<string>('document.body.innerText'), /No app with this client_id is registered/);
    assert.equal(new URL(await page.evaluate<string>('location.href')).origin, origin);
    await saveScreenshots(page, 'oidc-bad-request');
    assert.deepEqual(unexpectedProblems(page, [400]), []);
  });

  it('asks to confirm a logout without a hint, signs out, and returns to the app\'s registered page', async () => {
    const back = `${origin}/login`;
    const client = await api('POST', '/api/auth/clients', { name: 'Logout app', redirectUris: ['https://app.example.org/cb'], postLogoutRedirectUris: [back] });
    const { clientId } = client.json as { clientId: string };
    const page = await signedIn('/gatehouse/account');
    await page.navigate(`${origin}/oidc/logout?client_id=${clientId}&post_logout_redirect_uri=${encodeURIComponent(back)}&state=s1`);
    await page.waitFor(`document.getElementById('sign-out') !== null`);
    await saveScreenshots(page, 'oidc-logout-confirm');
    assert.ok((await page.cookies(origin)).some((cookie) => cookie.name === 'jwt'), 'still signed in before the button');
    await page.evaluate(`(document.getElementById('sign-out').click(), true)`);
    const landed = await page.waitForUrl((url) => url.pathname === '/login');
    assert.equal(landed.searchParams.get('state'), 's1');
    assert.equal((await page.cookies(origin)).some((cookie) => cookie.name === 'jwt'), false);
    assert.deepEqual(unexpectedProblems(page), []);
  });

  it('signs out at once with a valid id_token_hint and says so when there is no page to return to', async () => {
    assert.ok(browser !== undefined);
    const client = await api('POST', '/api/auth/clients', { name: 'Hint app', redirectUris: [`${origin}/cb`] });
    const { clientId, clientSecret } = client.json as { clientId: string; clientSecret: string };
    const page = await signedIn('/gatehouse/account');
    // The app's sign-in, done in the browser up to the code, then exchanged as the app would.
    await page.navigate(`${origin}/oidc/authorize?response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent(`${origin}/cb`)}&scope=openid`);
    const callback = await page.waitForUrl((url) => url.pathname === '/cb');
    const exchanged = await httpCall(gatehouse.port, {
      method: 'POST', path: '/oidc/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: `${origin}/cb` }).toString(),
    });
    const idToken = (exchanged.json as { id_token: string }).id_token;
    await page.navigate(`${origin}/oidc/logout?id_token_hint=${idToken}`);
    await page.waitFor(`document.body.innerText.includes('You are signed out of Gatehouse.')`);
    assert.equal((await page.cookies(origin)).some((cookie) => cookie.name === 'jwt'), false);
    await saveScreenshots(page, 'oidc-signed-out');
    assert.deepEqual(unexpectedProblems(page, [404]), []);
  });

  it('asks for a new sign-in when an app says prompt=login, even with a session', async () => {
    const page = await signedIn('/gatehouse/account');
    await page.navigate(`${origin}/login?prompt=login&rd=${encodeURIComponent('gatehouse/account')}`);
    await page.waitFor(`document.readyState === 'complete' && !document.getElementById('again-note').hidden`);
    // Not sent on once the session was found: the form waits for the new sign-in.
    await page.waitFor(`performance.getEntriesByType('resource').some((entry) => entry.name.endsWith('/api/auth/verify') && entry.responseEnd > 0)`);
    await page.evaluate(`new Promise((resolve) => setTimeout(() => setTimeout(() => resolve(true), 50), 0))`);
    assert.equal(new URL(await page.evaluate<string>('location.href')).pathname, '/login');
    await saveScreenshots(page, 'oidc-sign-in-again');
    assert.deepEqual(unexpectedProblems(page), []);
  });
});
