// RP-initiated logout (docs/contract/oidc.md "Logout") and the administrators' client
// API (clients), over real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BUILT_SCRIPTS } from '../../src/pages/built-scripts.js';
import { CLEARED_COOKIE, createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { discover, registerClient, signInThrough, type Discovery, type RegisteredClient } from '../helpers/relying-party.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example.org/cb';
const AFTER_LOGOUT = 'https://app.example.org/bye';

describe('RP-initiated logout', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  let idToken = '';
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: [REDIRECT], postLogoutRedirectUris: [AFTER_LOGOUT] });
    idToken = (await signInThrough(server, discovery, client, root.token)).tokens.id_token;
  });
  after(() => server.close());

  const logout = (query: Record<string, string>, cookie?: string): Promise<TestResponse> =>
    server.request({
      path: `/oidc/logout?${new URLSearchParams(query).toString()}`, headers: { accept: 'text/html', 'sec-fetch-site': 'same-site' },
      ...(cookie === undefined ? {} : { token: cookie }),
    });
  /** A new session of the account the hint names (signing out ends the one it is given). */
  const hintsAccount = async (): Promise<string> => (await login(server, root.username, root.password)).cookieToken ?? '';

  it('with a valid id_token_hint of the signed-in account: signs out at once (clears the cookie) and returns to a registered URI with the state', async () => {
    const response = await logout({ id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 'xyz' }, await hintsAccount());
    assert.equal(response.status, 303);
    assert.equal(response.headers.location, `${AFTER_LOGOUT}?state=xyz`);
    assert.deepEqual(response.headers['set-cookie'], [CLEARED_COOKIE]);
  });

  it('accepts a hint that has expired (its signature and issuer still checked)', async () => {
    server.clock.advanceSeconds(7200);
    const response = await logout({ id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT }, await hintsAccount());
    assert.equal(response.status, 303);
    assert.equal(response.headers.location, AFTER_LOGOUT);
  });

  it('with a valid hint and no return URI: a "signed out" page, cookie cleared', async () => {
    const response = await logout({ id_token_hint: idToken }, await hintsAccount());
    assert.equal(response.status, 200);
    assert.match(response.text, /signed out of Gatehouse/);
    assert.deepEqual(response.headers['set-cookie'], [CLEARED_COOKIE]);
  });

  it('without a valid hint: a page with a "Sign out" button, nothing cleared', async () => {
    const cookie = await hintsAccount();
    const [header = '', payload = '', signature = ''] = idToken.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ iss: 'https://auth.example.org', aud: client.clientId })).toString('base64url')}.${signature}`;
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    for (const query of [{}, { id_token_hint: forged }, { id_token_hint: none }, { id_token_hint: 'garbage' }, { client_id: client.clientId, post_logout_redirect_uri: AFTER_LOGOUT }]) {
      const response = await logout(query, cookie);
      assert.equal(response.status, 200, JSON.stringify(query));
      assert.match(response.text, />Sign out</);
      assert.equal(response.headers['set-cookie'], undefined);
      // The script built from oidc/pages/browser/logout-confirm.entry.ts, allowed by its build-time hash.
      assert.ok(response.text.includes(`<script>${BUILT_SCRIPTS['oidc/pages/logout-confirm'].code}</script>`));
      assert.ok(String(response.headers['content-security-policy']).includes(`script-src '${BUILT_SCRIPTS['oidc/pages/logout-confirm'].hash}';`));
    }
  });

  it('an unregistered post_logout_redirect_uri, or one whose app cannot be told: a 400 page, never a redirect', async () => {
    for (const query of [
      { id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' },
      // Compared exactly: not as a prefix, nor with the case or a path of its own changed.
      { id_token_hint: idToken, post_logout_redirect_uri: `${AFTER_LOGOUT}.evil.example/` },
      { id_token_hint: idToken, post_logout_redirect_uri: `${AFTER_LOGOUT}/../../evil` },
      { id_token_hint: idToken, post_logout_redirect_uri: `${AFTER_LOGOUT}?next=https://evil.example/` },
      { id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT.toUpperCase() },
      { id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT.slice(0, -1) },
      { client_id: client.clientId, post_logout_redirect_uri: REDIRECT },
      { post_logout_redirect_uri: AFTER_LOGOUT },
      { id_token_hint: 'garbage', post_logout_redirect_uri: AFTER_LOGOUT },
      { client_id: 'f'.repeat(32) },
    ]) {
      const response = await logout(query);
      assert.equal(response.status, 400, JSON.stringify(query));
      assert.equal(response.headers.location, undefined);
      assert.equal(response.headers['set-cookie'], undefined);
    }
  });

  it('refuses a hint of one app sent with another app\'s client_id', async () => {
    const other = await registerClient(server, root.token, { redirectUris: [REDIRECT], postLogoutRedirectUris: [AFTER_LOGOUT] });
    const response = await logout({ id_token_hint: idToken, client_id: other.clientId, post_logout_redirect_uri: AFTER_LOGOUT });
    assert.equal(response.status, 400);
  });
});

describe('the administrators\' client API', () => {
  let server: TestServer;
  let root: TestUser;
  let user: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    user = await createUser(server, root.token);
  });
  after(() => server.close());

  const body = { name: 'Grafana', redirectUris: ['https://grafana.example.org/login/generic_oauth'] };

  it('makes a client, shows its secret once, lists it without the secret, and removes it', async () => {
    const made = await server.request({ method: 'POST', path: '/api/auth/clients', token: root.token, body: { ...body, groups: ['ops'], mfa: true, alg: 'ES256' } });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.headers['cache-control'], 'no-store');
    const { clientId, clientSecret } = made.json as { clientId: string; clientSecret: string };
    assert.match(clientId, /^[0-9a-f]{32}$/);
    assert.match(clientSecret, /^[A-Za-z0-9_-]{43}$/);
    const listed = await server.request({ path: '/api/auth/clients', token: root.token });
    assert.equal(listed.status, 200);
    assert.equal(listed.text.includes(clientSecret), false);
    const entry = (listed.json as Array<Record<string, unknown>>).find((client) => client['clientId'] === clientId);
    assert.deepEqual({ ...entry, createdAt: 0 }, {
      clientId, name: 'Grafana', redirectUris: body.redirectUris, postLogoutRedirectUris: [], public: false, groups: ['ops'], mfa: true, alg: 'ES256', createdAt: 0,
    });
    assert.equal((await server.request({ method: 'DELETE', path: `/api/auth/clients/${clientId}`, token: root.token })).status, 200);
    assert.equal((await server.request({ method: 'DELETE', path: `/api/auth/clients/${clientId}`, token: root.token })).status, 404);
    assert.equal((await server.request({ method: 'DELETE', path: '/api/auth/clients/not-an-id', token: root.token })).status, 404);
  });

  it('makes a public client without a secret', async () => {
    const made = await server.request({ method: 'POST', path: '/api/auth/clients', token: root.token, body: { name: 'Phone', redirectUris: ['app.example:/cb'], public: true } });
    assert.equal(made.status, 200);
    assert.deepEqual(Object.keys(made.json as object), ['clientId']);
  });

  it('is for administrators with a session cookie only: 401 without, 403 for a user, never ?token=', async () => {
    assert.equal((await server.request({ path: '/api/auth/clients' })).status, 401);
    assert.equal((await server.request({ path: `/api/auth/clients?token=${root.token}` })).status, 401);
    assert.equal((await server.request({ path: '/api/auth/clients', token: user.token })).status, 403);
    assert.equal((await server.request({ method: 'POST', path: '/api/auth/clients', token: user.token, body })).status, 403);
    assert.equal((await server.request({ method: 'POST', path: `/api/auth/clients?token=${root.token}`, body })).status, 401);
  });

  it('refuses bad bodies with 400, a form with 415, and a taken name with 409', async () => {
    for (const bad of [{}, { ...body, redirectUris: ['http://app.example.org/cb'] }, { ...body, redirectUris: ['https://a.example/#x'] }, { ...body, alg: 'none' }, { ...body, redirectUris: [] }]) {
      const response = await server.request({ method: 'POST', path: '/api/auth/clients', token: root.token, body: bad });
      assert.equal(response.status, 400, JSON.stringify(bad));
    }
    const form = await server.request({ method: 'POST', path: '/api/auth/clients', token: root.token, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    const name = { ...body, name: 'Taken' };
    assert.equal((await server.request({ method: 'POST', path: '/api/auth/clients', token: root.token, body: name })).status, 200);
    const again = await server.request({ method: 'POST', path: '/api/auth/clients', token: root.token, body: name });
    assert.equal(again.status, 409);
    assert.equal((again.json as { code: string }).code, 'CLIENT_NAME_TAKEN');
  });
});

describe('e-mail and display name', () => {
  it('the owner sets and removes its own (unverified), administrators theirs (verified); bad values are 400', async () => {
    const { server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' });
    try {
      const user = await createUser(server, root.token);
      const patch = (token: string, value: unknown) => server.request({ method: 'PATCH', path: '/api/auth/account', token, body: value });
      assert.equal((await patch(user.token, { email: 'me@example.org', name: 'Me' })).status, 200);
      let stored = server.running.store.find(user.username);
      assert.deepEqual([stored?.email, stored?.emailVerified, stored?.name], ['me@example.org', false, 'Me']);
      assert.equal((await patch(user.token, { email: null })).status, 200);
      stored = server.running.store.find(user.username);
      assert.deepEqual([stored?.email, stored?.name], [undefined, 'Me']);
      for (const bad of [{ email: 'nope' }, { name: '' }, { name: 'a'.repeat(129) }, { email: 7 }]) assert.equal((await patch(user.token, bad)).status, 400, JSON.stringify(bad));
      assert.equal((await server.request({ method: 'PATCH', path: '/api/auth/account', body: { name: 'x' } })).status, 401);
      assert.equal((await server.request({ method: 'PATCH', path: `/api/auth/account?token=${user.token}`, body: { name: 'x' } })).status, 401);
      const byAdmin = await server.request({ method: 'PATCH', path: `/api/auth/users/${user.username}`, token: root.token, body: { email: 'checked@example.org' } });
      assert.equal(byAdmin.status, 200);
      assert.equal(server.running.store.find(user.username)?.emailVerified, true);
    } finally {
      await server.close();
    }
  });
});
