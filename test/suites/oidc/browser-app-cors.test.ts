// A single-page app signs in through Gatehouse in Chromium, through Caddy: a public client (PKCE)
// whose own script, on another origin than the issuer, exchanges the code at the token endpoint,
// calls userinfo (a preflighted request: Authorization) and revokes its token, all with fetch. The
// same calls from an origin no app registered are blocked by the browser.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from '../../helpers/chromium.js';
import { startStand, type Stand } from './behind-caddy.js';
import { unexpectedProblems } from './screens.js';

const USER = 'carol';
const PASSWORD = 'carol-password-9w';

/** What the app's pages run: the authorization with PKCE, then the calls its callback makes. */
function spaPages(stand: Stand, clientId: string): Stand['appRoute'] {
  const settings = JSON.stringify({ issuer: stand.issuer, clientId, redirectUri: `${stand.appOrigin}/cb` });
  const start = `
const settings = ${settings};
const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
(async () => {
  const discovery = await (await fetch(settings.issuer + '/.well-known/openid-configuration')).json();
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem('verifier', verifier);
  sessionStorage.setItem('discovery', JSON.stringify(discovery));
  location.assign(discovery.authorization_endpoint + '?' + new URLSearchParams({
    response_type: 'code', client_id: settings.clientId, redirect_uri: settings.redirectUri, scope: 'openid profile',
    state: 'spa-state', code_challenge: challenge, code_challenge_method: 'S256',
  }));
})();`;
  const callback = `
const settings = ${settings};
const form = (fields) => ({ method: 'POST', body: new URLSearchParams(fields) });
(async () => {
  const discovery = JSON.parse(sessionStorage.getItem('discovery'));
  const code = new URLSearchParams(location.search).get('code');
  const result = {};
  try {
    const tokens = await (await fetch(discovery.token_endpoint, form({
      grant_type: 'authorization_code', code, redirect_uri: settings.redirectUri, client_id: settings.clientId,
      code_verifier: sessionStorage.getItem('verifier'),
    }))).json();
    result.tokenType = tokens.token_type;
    result.accessToken = tokens.access_token;
    const claims = await (await fetch(discovery.userinfo_endpoint, { headers: { authorization: 'Bearer ' + tokens.access_token } })).json();
    result.username = claims.preferred_username;
    result.revoked = (await fetch(discovery.revocation_endpoint, form({ token: tokens.access_token, client_id: settings.clientId }))).status;
    result.afterRevoke = (await fetch(discovery.userinfo_endpoint, { headers: { authorization: 'Bearer ' + tokens.access_token } })).status;
  } catch (error) {
    result.error = String(error);
  }
  window.result = result;
})();`;
  // The stranger's page: the same calls from an origin no app registered.
  const strangerPage = `
const settings = ${settings};
(async () => {
  const outcome = (promise) => promise.then((answer) => 'read ' + answer.status, (error) => 'blocked: ' + error.name);
  const token = new URLSearchParams(location.search).get('token');
  window.result = {
    token: await outcome(fetch(settings.issuer + '/oidc/token', { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x'.repeat(43), redirect_uri: settings.redirectUri, client_id: settings.clientId }) })),
    userinfo: await outcome(fetch(settings.issuer + '/oidc/userinfo', { headers: { authorization: 'Bearer ' + token } })),
    revoke: await outcome(fetch(settings.issuer + '/oidc/revoke', { method: 'POST', body: new URLSearchParams({ token, client_id: settings.clientId }) })),
    discovery: await outcome(fetch(settings.issuer + '/.well-known/openid-configuration')),
  };
})();`;
  const page = (script: string) => ({ body: `<!doctype html><title>SPA</title><p>app</p><script>${script}</script>` });
  return (path) => (path === '/spa' ? page(start) : path === '/cb' ? page(callback) : path === '/stranger' ? page(strangerPage) : undefined);
}

describe('a single-page app (public client, PKCE) calls the provider from its own origin, in Chromium through Caddy', () => {
  let stand: Stand;
  let page: Page;
  let accessToken = '';
  before(async () => {
    stand = await startStand();
    assert.equal((await stand.api('POST', '/api/auth/users', { username: USER, password: PASSWORD, level: 'USER' })).status, 200);
    const client = await stand.api('POST', '/api/auth/clients', { name: 'Browser app', public: true, redirectUris: [`${stand.appOrigin}/cb`] });
    assert.equal(client.status, 200, client.text);
    stand.appRoute = spaPages(stand, (client.json as { clientId: string }).clientId);
  });
  after(() => stand?.close());

  it('exchanges the code, reads userinfo and revokes the token with fetch from its registered origin', async () => {
    page = await stand.signedIn('/gatehouse/account', USER, PASSWORD);
    await page.navigate(`${stand.appOrigin}/spa`);
    await page.waitForUrl((url) => url.origin === stand.appOrigin && url.pathname === '/cb');
    const result = await page.waitFor<Record<string, unknown>>('window.result', 20_000);
    assert.deepEqual({ ...result, accessToken: typeof result['accessToken'] }, {
      tokenType: 'Bearer', accessToken: 'string', username: USER, revoked: 200, afterRevoke: 401,
    });
    accessToken = String(result['accessToken']);
    assert.deepEqual(unexpectedProblems(page, [401]).filter((problem) => !problem.text.includes('favicon.ico')), []);
  });

  it('from an origin no app registered, the browser lets the script read none of the three answers', async () => {
    const stranger = await stand.newPage();
    await stranger.navigate(`${stand.strangerOrigin}/stranger?token=${accessToken}`);
    const result = await stranger.waitFor<Record<string, string>>('window.result', 20_000);
    assert.deepEqual(result, {
      token: 'blocked: TypeError', userinfo: 'blocked: TypeError', revoke: 'blocked: TypeError', discovery: 'read 200',
    });
    assert.ok(stranger.problems.some((problem) => /CORS|Access-Control-Allow-Origin/.test(problem.text)), JSON.stringify(stranger.problems));
  });
});
