// In Chromium, through Caddy in front of Gatehouse (as deployed: its own host name, here localhost):
// an app on another site (mod_auth_openidc on 127.0.0.1) redirects to Gatehouse, the browser arrives
// cross-site without the SameSite=Strict cookie, the user signs in on Gatehouse's page with the
// password and then a TOTP code, the page returns to authorize, and the app receives its code and
// lets the user in. Then again with the session already there: no page at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { totpCode } from '../../../src/totp/codes.js';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { isApacheInstalled, reserveApache, startApache, type RunningApache } from '../../helpers/apache.js';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, CLIENT_SETTINGS, freePort, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';
import { startCaddy, stopAllProxies, type RunningProxy } from '../../helpers/proxies.js';
import { saveScreenshots, unexpectedProblems } from './screens.js';

const USER = 'bob';
const PASSWORD = 'bob-password-5t';

describe('signing in to an app through Gatehouse in Chromium, through Caddy', () => {
  let browser: Chromium | undefined;
  let gatehouse: ServeProcess;
  let caddy: RunningProxy;
  let apache: RunningApache;
  let issuer = '';
  let seed: Buffer;
  const pages: Page[] = [];

  before(async () => {
    assertBuilt();
    assert.ok(isApacheInstalled(), 'this suite needs apache2 and libapache2-mod-auth-openidc (.ci/run installs them)');
    const gatehousePort = await freePort();
    caddy = await startCaddy((port) => `http://:${port} {\n\tbind 127.0.0.1\n\treverse_proxy 127.0.0.1:${gatehousePort}\n}\n`);
    // Gatehouse's own host name (localhost) is another site than the app's (127.0.0.1).
    issuer = `http://localhost:${caddy.port}`;
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', String(gatehousePort), '--data-dir', await tempDir(), '--public-url', issuer, '--trust-proxy', '127.0.0.1']);
    // Set up straight on Gatehouse's port, as a request to its own origin (the issuer's host) arrives.
    const home = { host: `localhost:${caddy.port}` };
    const first = await httpCall(gatehousePort, { headers: home, method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-7k', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(first.status, 200, first.text);
    const admin = first.cookieToken ?? '';
    assert.equal((await httpCall(gatehousePort, { headers: home, method: 'POST', path: '/api/auth/users', token: admin, body: { username: USER, password: PASSWORD, level: 'USER' } })).status, 200);
    // bob sets up TOTP through the API (his first session), as he would on the account page.
    const session = (await httpCall(gatehousePort, { headers: home, method: 'POST', path: '/api/auth/authenticate', body: { username: USER, password: PASSWORD } })).cookieToken ?? '';
    const begun = await httpCall(gatehousePort, { headers: home, method: 'POST', path: '/api/auth/account/totp', token: session, body: { password: PASSWORD } });
    seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
    assert.equal((await httpCall(gatehousePort, { headers: home, method: 'POST', path: '/api/auth/account/totp/confirm', token: session, body: { code: totpCode(seed, Date.now()) } })).status, 200);
    const reserved = await reserveApache();
    const client = await httpCall(gatehousePort, { headers: home, method: 'POST', path: '/api/auth/clients', token: admin, body: { name: 'Apache', redirectUris: [reserved.redirectUri], mfa: true } });
    assert.equal(client.status, 200, client.text);
    const { clientId, clientSecret } = client.json as { clientId: string; clientSecret: string };
    apache = await startApache(reserved.port, { metadataUrl: `${issuer}/.well-known/openid-configuration`, clientId, clientSecret, scope: 'openid profile' });
    browser = await Chromium.launch();
  });

  /**
   * Follows a link on the app's own site to its protected page, as a person does: the navigation's
   * initiator is the app's site, so the redirect to Gatehouse is cross-site (a typed address would not be).
   */
  async function fromTheApp(page: Page): Promise<void> {
    await page.navigate(`${apache.origin}/loggedout.html`);
    await page.waitForUrl((url) => url.origin === apache.origin && url.pathname === '/loggedout.html');
    await page.evaluate(`(location.assign('/protected/'), true)`);
  }

  after(async () => {
    for (const page of pages) await page.close();
    await browser?.close();
    await apache?.stop();
    await gatehouse?.stop();
    await stopAllProxies();
    await killAllChildren();
    await removeTempDirs();
  });

  it('the app redirects to Gatehouse, the user signs in with password and TOTP, the app receives its code', async () => {
    assert.ok(browser !== undefined);
    const page = await browser.newPage();
    pages.push(page);
    await fromTheApp(page);
    await page.waitForUrl((url) => url.origin === issuer && url.pathname === '/login');
    await page.waitFor(`document.getElementById('login') !== null && !document.getElementById('login').hidden`);
    await saveScreenshots(page, 'oidc-sign-in');
    await page.evaluate(`(() => {
      document.getElementById('username').value = ${JSON.stringify(USER)};
      document.getElementById('password').value = ${JSON.stringify(PASSWORD)};
      document.getElementById('login').requestSubmit();
      return true;
    })()`);
    await page.waitFor(`!document.getElementById('code-step').hidden`);
    await saveScreenshots(page, 'oidc-sign-in-code');
    // The next step's code (one step of skew is allowed): the set-up spent the current one.
    await page.evaluate(`(() => {
      document.getElementById('code').value = ${JSON.stringify(totpCode(seed, Date.now() + 30_000))};
      document.getElementById('code-step').requestSubmit();
      return true;
    })()`);
    await page.waitForUrl((url) => url.origin === apache.origin && url.pathname === '/protected/', 20_000);
    assert.match(await page.evaluate<string>('document.body.innerText'), /Apache Server Status/, apache.describe());
    const callback = page.navigations.map((href) => new URL(href)).find((url) => url.pathname === '/protected/redirect_uri');
    // mod_auth_openidc answers the callback with a redirect, so the callback may be no document of its own:
    // its request is in Gatehouse's log instead.
    if (callback !== undefined) assert.ok(callback.searchParams.get('code') !== null);
    assert.ok(page.navigations.some((href) => href.startsWith(`${issuer}/login?`)), page.navigations.join('\n'));
    await gatehouse.waitForLine((line) => line.includes('"path":"/oidc/token"') && line.includes('"status":200'));
    // The code step is asked for by a 401 (SECOND_FACTOR_REQUIRED), which the console reports.
    assert.deepEqual(unexpectedProblems(page, [401]).filter((problem) => !problem.text.endsWith(`${apache.origin}/favicon.ico`)), []);
  });

  it('a second app visit with the session in place goes through Gatehouse without showing a page', async () => {
    assert.ok(browser !== undefined);
    const page = pages[0];
    assert.ok(page !== undefined);
    // A new app session (the app forgets its own), the same Gatehouse session.
    await page.send('Network.enable');
    const appCookies = (await page.cookies(apache.origin)).map((cookie) => cookie.name);
    assert.ok(appCookies.includes('mod_auth_openidc_session'), appCookies.join(', '));
    await page.send('Network.deleteCookies', { name: 'mod_auth_openidc_session', domain: '127.0.0.1', path: '/' });
    assert.equal((await page.cookies(apache.origin)).some((cookie) => cookie.name === 'mod_auth_openidc_session'), false);
    const before = page.navigations.length;
    await fromTheApp(page);
    await page.waitForUrl((url) => url.origin === apache.origin && url.pathname === '/protected/' && page.navigations.length > before + 2);
    const hops = page.navigations.slice(before);
    assert.ok(hops.some((href) => href.startsWith(`${issuer}/login?`)), `the cross-site arrival hops through the sign-in page:\n${hops.join('\n')}`);
    assert.match(await page.evaluate<string>('document.body.innerText'), /Apache Server Status/);
  });
});
