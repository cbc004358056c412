// A person signed in as an account an app's groups refuse, in Chromium through Caddy: the app (on
// another site) sends the browser to Gatehouse, which shows its own page instead of an instant
// access_denied. "Back to the app" returns access_denied with the state and iss; "Sign in as someone
// else" signs out and, once another account signs in, finishes the same authorization with a code.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from '../../helpers/chromium.js';
import { startStand, type Stand } from './behind-caddy.js';
import { saveScreenshots, unexpectedProblems } from './screens.js';

const OUTSIDER = 'bob';
const OUTSIDER_PASSWORD = 'bob-password-5t';
const MEMBER = 'alice';
const MEMBER_PASSWORD = 'alice-password-8q';

describe('an app not open to the signed-in account, in Chromium through Caddy', () => {
  let stand: Stand;
  let clientId = '';
  before(async () => {
    stand = await startStand();
    for (const [username, password, groups] of [[OUTSIDER, OUTSIDER_PASSWORD, []], [MEMBER, MEMBER_PASSWORD, ['media']]] as const) {
      const made = await stand.api('POST', '/api/auth/users', { username, password, level: 'USER', groups });
      assert.equal(made.status, 200, made.text);
    }
    const client = await stand.api('POST', '/api/auth/clients', { name: 'Media library', redirectUris: [`${stand.appOrigin}/cb`], groups: ['media'], public: true });
    assert.equal(client.status, 200, client.text);
    clientId = (client.json as { clientId: string }).clientId;
    // The app: a start page linking to the authorization (so the arrival is cross-site, as from a
    // real app), and a callback that shows what it received.
    stand.appRoute = (path, query) => {
      if (path === '/start') {
        const authorize = `${stand.issuer}/oidc/authorize?${new URLSearchParams({
          response_type: 'code', client_id: clientId, redirect_uri: `${stand.appOrigin}/cb`, scope: 'openid profile', state: query.get('state') ?? 'none',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
        }).toString()}`;
        return { body: `<!doctype html><title>Media library</title><a id="sign-in" href="${authorize.replace(/&/g, '&amp;')}">Sign in with Gatehouse</a>` };
      }
      if (path === '/cb') return { body: '<!doctype html><title>Callback</title><p>callback</p>' };
      return undefined;
    };
  });
  after(() => stand?.close());

  /** From the app's start page, as a person clicks its sign-in link: Gatehouse's page for the refused account. */
  async function refusedFromTheApp(page: Page, state: string): Promise<void> {
    await page.navigate(`${stand.appOrigin}/start?state=${state}`);
    await page.waitFor(`document.getElementById('sign-in') !== null`);
    await page.evaluate(`(document.getElementById('sign-in').click(), true)`);
    await page.waitForUrl((url) => url.origin === stand.issuer && url.pathname === '/oidc/authorize' && url.searchParams.get('state') === state);
    await page.waitFor(`document.getElementById('switch') !== null`);
  }

  it('shows who is signed in and that the app is not open to them; "Back to the app" returns access_denied', async () => {
    const page = await stand.signedIn('/gatehouse/account', OUTSIDER, OUTSIDER_PASSWORD);
    await refusedFromTheApp(page, 'first');
    assert.equal(await page.evaluate<string>(`document.getElementById('username').textContent`), OUTSIDER);
    assert.match(await page.evaluate<string>('document.body.innerText'), /Media library is not open to your account/);
    await saveScreenshots(page, 'oidc-not-open');
    await page.evaluate(`(document.getElementById('back').click(), true)`);
    const back = await page.waitForUrl((url) => url.origin === stand.appOrigin && url.pathname === '/cb');
    assert.deepEqual([back.searchParams.get('error'), back.searchParams.get('state'), back.searchParams.get('iss'), back.searchParams.get('code')],
      ['access_denied', 'first', stand.issuer, null]);
    // Still signed in: going back changes nothing at Gatehouse.
    assert.ok((await page.cookies(stand.issuer)).some((cookie) => cookie.name === 'jwt'));
    assert.deepEqual(unexpectedProblems(page, [403]).filter((problem) => !problem.text.includes('favicon.ico')), []);
  });

  it('"Sign in as someone else" signs out, and the next account\'s sign-in finishes the same authorization', async () => {
    const page = await stand.signedIn('/gatehouse/account', OUTSIDER, OUTSIDER_PASSWORD);
    await refusedFromTheApp(page, 'second');
    await page.evaluate(`(document.getElementById('switch').click(), true)`);
    await page.waitForUrl((url) => url.origin === stand.issuer && url.pathname === '/login');
    await page.waitFor(`document.getElementById('login') !== null && !document.getElementById('login').hidden`);
    assert.equal((await page.cookies(stand.issuer)).some((cookie) => cookie.name === 'jwt'), false, 'signed out');
    await page.evaluate(`(() => {
      document.getElementById('username').value = ${JSON.stringify(MEMBER)};
      document.getElementById('password').value = ${JSON.stringify(MEMBER_PASSWORD)};
      document.getElementById('login').requestSubmit();
      return true;
    })()`);
    const callback = await page.waitForUrl((url) => url.origin === stand.appOrigin && url.pathname === '/cb');
    assert.equal(callback.searchParams.get('state'), 'second');
    assert.match(callback.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(unexpectedProblems(page, [403]).filter((problem) => !problem.text.includes('favicon.ico')), []);
  });
});
