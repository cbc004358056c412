// Signing out ends the session (docs/contract/links-and-sessions.md "Signing out"): a browser's sign-
// out ends that session's record with or without --revoke-on-logout, so the sessions list stops
// showing a signed-out browser as alive, its cookie and `?token=` copies are refused, and what apps
// got through it ends. GET /api/auth/logout is a Flood endpoint: Flood's own test suite logs out with
// the first administrator's cookie and goes on using that same cookie, from 127.0.0.1 with no Fetch
// Metadata headers. A browser always sends `Sec-Fetch-Site`, so that is how a browser's sign-out is
// told from a script's, which keeps the Flood contract.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertTokenRefused, assertTokenWorks, CLEARED_COOKIE, claimsOf, createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { discover, registerClient, signInThrough, tokenRequest, userinfo, type Discovery, type RegisteredClient } from '../helpers/relying-party.js';
import { CLIENT_SETTINGS, startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

it('replays Flood\'s own order: register, log out with that cookie, then list, patch and delete with the same cookie', async () => {
  const server = await startTestServer();
  try {
    const admin = { username: 'flood-admin', password: 'flood-admin-password', client: CLIENT_SETTINGS, level: 10 };
    const user = { username: 'flood-user', password: 'flood-user-password', client: CLIENT_SETTINGS, level: 5 };
    const send = (method: string, path: string, token?: string, body?: unknown): Promise<TestResponse> =>
      server.request({ method, path, ...(token === undefined ? {} : { token }), ...(body === undefined ? {} : { body }) });
    const registered = await send('POST', '/api/auth/register', undefined, admin);
    assert.equal(registered.status, 200, registered.text);
    const cookie = registered.cookieToken ?? '';
    assert.equal((await send('POST', '/api/auth/register', cookie, user)).status, 200);

    const loggedOut = await send('GET', '/api/auth/logout', cookie);
    assert.equal(loggedOut.status, 200, loggedOut.text);
    assert.deepEqual(loggedOut.headers['set-cookie'], [CLEARED_COOKIE]);
    assert.equal((await send('GET', '/api/auth/logout')).status, 401);
    assert.equal((await send('POST', '/api/auth/authenticate', undefined, { username: admin.username, password: admin.password })).status, 200);

    const listed = await send('GET', '/api/auth/users', cookie);
    assert.equal(listed.status, 200, listed.text);
    assert.ok(Array.isArray(listed.json) && typeof (listed.json[0] as { username?: unknown }).username === 'string');
    const patch = { client: { ...CLIENT_SETTINGS, socket: 'test' } };
    assert.equal((await send('PATCH', '/api/auth/users/nonExistentUser', cookie, patch)).status, 500);
    assert.equal((await send('PATCH', `/api/auth/users/${user.username}`, cookie, patch)).status, 200);
    assert.equal((await send('DELETE', '/api/auth/users/nonExistentUser', cookie)).status, 500);
    const deleted = await send('DELETE', `/api/auth/users/${user.username}`, cookie);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((deleted.json as { username?: unknown }).username, user.username);
  } finally {
    await server.close();
  }
});

describe('a browser\'s sign-out ends the session, without --revoke-on-logout', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let app: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    app = await registerClient(server, root.token, { redirectUris: ['https://app.example.org/cb'], postLogoutRedirectUris: ['https://app.example.org/bye'] });
  });
  after(() => server.close());

  const sessionIds = async (cookie: string): Promise<string[]> => {
    const listed = await server.request({ path: '/api/auth/account/sessions', token: cookie });
    assert.equal(listed.status, 200, listed.text);
    return (listed.json as Array<{ id: string }>).map((session) => session.id);
  };

  const ways: ReadonlyArray<readonly [string, (cookie: string, idToken: string) => Promise<TestResponse>]> = [
    ['GET /api/auth/logout with Sec-Fetch-Site (the web client in a browser)', (cookie) =>
      server.request({ path: '/api/auth/logout', token: cookie, headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' } })],
    ['GET {base}/logout', (cookie) => server.request({ path: '/logout', token: cookie, headers: { accept: 'text/html' } })],
    ['RP-initiated logout with the account\'s hint', (cookie, idToken) =>
      server.request({ path: `/oidc/logout?${new URLSearchParams({ id_token_hint: idToken }).toString()}`, token: cookie, headers: { accept: 'text/html' } })],
  ];

  for (const [how, signOut] of ways) {
    it(`${how}: the session leaves the list, its cookie and ?token= copies are refused, and what an app got through it ends`, async () => {
      const user = await createUser(server, root.token);
      const browser = (await login(server, user.username, user.password)).cookieToken ?? '';
      const other = (await login(server, user.username, user.password)).cookieToken ?? '';
      const { tokens } = await signInThrough(server, discovery, app, browser, { scope: 'openid offline_access' });
      assert.ok((await sessionIds(other)).includes(String(claimsOf(browser)['ses'])));

      const answer = await signOut(browser, tokens.id_token);
      assert.ok(answer.status < 400, `${answer.status} ${answer.text}`);
      assert.deepEqual(answer.headers['set-cookie'], [CLEARED_COOKIE]);

      assert.equal((await sessionIds(other)).includes(String(claimsOf(browser)['ses'])), false, 'it left the sessions list');
      await assertTokenRefused(server, browser);
      assert.equal((await server.request({ path: `/api/auth/verify?token=${browser}` })).status, 401, 'a ?token= copy');
      assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 401, 'the access token');
      const refreshed = await tokenRequest(server, discovery, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' });
      assert.equal((refreshed.json as { error?: string }).error, 'invalid_grant', `the refresh token: ${refreshed.text}`);
      await assertTokenWorks(server, other, user.username);
    });
  }

  it('a script\'s GET /api/auth/logout (no Sec-Fetch-Site) keeps the Flood contract: its copies go on working', async () => {
    const user = await createUser(server, root.token);
    const cookie = (await login(server, user.username, user.password)).cookieToken ?? '';
    const { tokens } = await signInThrough(server, discovery, app, cookie, { scope: 'openid offline_access' });
    assert.equal((await server.request({ path: '/api/auth/logout', token: cookie })).status, 200);
    await assertTokenWorks(server, cookie, user.username);
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 200);
  });
});
