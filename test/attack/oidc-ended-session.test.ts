// Ending one session (docs/contract/links-and-sessions.md "What ends with a session": its owner from the
// account page, or an administrator) is how a person throws out a stolen cookie without signing out
// everywhere. What an app got through that session (a code not yet exchanged, an access token, a
// refresh token) must end with it, or the thief keeps the account through the app.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claimsOf, createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import {
  authorizationRequest, callbackOf, discover, exchangeCode, followAuthorization, registerClient, signInThrough, tokenRequest,
  userinfo, type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import type { TestServer } from '../helpers/server.js';

describe('what an app got through a session ends with that session', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: ['https://app.example.org/cb'] });
  });
  after(() => server.close());

  /** A code, an access token and a refresh token got through the session `cookie`. */
  async function holdings(cookie: string) {
    const { tokens } = await signInThrough(server, discovery, client, cookie, { scope: 'openid offline_access' });
    const attempt = authorizationRequest(discovery, client);
    const { location } = await followAuthorization(server, attempt, cookie);
    return { tokens, attempt, code: callbackOf(location, attempt, discovery).get('code') ?? '' };
  }

  const ways: ReadonlyArray<readonly [string, (user: TestUser, owner: string, sessionId: string) => Promise<void>]> = [
    ['its owner ends it from another session', async (_user, owner, sessionId) => {
      const response = await server.request({ method: 'DELETE', path: `/api/auth/account/sessions/${sessionId}`, token: owner });
      assert.equal(response.status, 200, response.text);
    }],
    ['an administrator ends it', async (user, _owner, sessionId) => {
      const response = await server.request({ method: 'DELETE', path: `/api/auth/users/${user.username}/sessions/${sessionId}`, token: root.token });
      assert.equal(response.status, 200, response.text);
    }],
  ];

  for (const [how, end] of ways) {
    it(`when ${how}`, async () => {
      const user = await createUser(server, root.token);
      const stolen = (await login(server, user.username, user.password)).cookieToken ?? '';
      const owner = (await login(server, user.username, user.password)).cookieToken ?? '';
      const held = await holdings(stolen);
      const kept = await holdings(owner);
      await end(user, owner, String(claimsOf(stolen)['ses']));

      assert.equal((await userinfo(server, discovery, held.tokens.access_token)).status, 401, 'access token');
      const refresh = await tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: held.tokens.refresh_token ?? '' });
      assert.equal((refresh.json as { error?: string }).error, 'invalid_grant', `refresh token: ${refresh.text}`);
      const exchange = await exchangeCode(server, discovery, client, held.code, held.attempt);
      assert.equal((exchange.json as { error?: string }).error, 'invalid_grant', `code: ${exchange.text}`);

      // The other session's are untouched.
      assert.equal((await userinfo(server, discovery, kept.tokens.access_token)).status, 200);
      const keptRefresh = await tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: kept.tokens.refresh_token ?? '' });
      assert.equal(keptRefresh.status, 200, keptRefresh.text);
      assert.equal((await exchangeCode(server, discovery, client, kept.code, kept.attempt)).status, 200);
    });
  }

  it('a refresh token outlives its session\'s cookie expiring on its own (offline_access)', async () => {
    const user = await createUser(server, root.token);
    const cookie = (await login(server, user.username, user.password)).cookieToken ?? '';
    const { tokens } = await signInThrough(server, discovery, client, cookie, { scope: 'openid offline_access' });
    server.clock.advanceSeconds(Number(claimsOf(cookie)['exp']) - Number(claimsOf(cookie)['iat']) + 60);
    const refresh = await tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' });
    assert.equal(refresh.status, 200, refresh.text);
  });
});

describe('what an app got through a session ends when that session signs out through the app (--revoke-on-logout)', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org', GATEHOUSE_REVOKE_ON_LOGOUT: 'true' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: ['https://app.example.org/cb'] });
  });
  after(() => server.close());

  it('RP-initiated logout with a hint ends the session record, as GET {base}/logout does', async () => {
    const user = await createUser(server, root.token);
    const cookie = (await login(server, user.username, user.password)).cookieToken ?? '';
    const { tokens } = await signInThrough(server, discovery, client, cookie, { scope: 'openid offline_access' });
    const hint = new URLSearchParams({ id_token_hint: tokens.id_token ?? '' }).toString();
    const loggedOut = await server.request({ path: `/oidc/logout?${hint}`, token: cookie, headers: { accept: 'text/html' } });
    assert.equal(loggedOut.status, 200, loggedOut.text);

    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 401, 'access token');
    const refresh = await tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' });
    assert.equal((refresh.json as { error?: string }).error, 'invalid_grant', `refresh token: ${refresh.text}`);
  });
});
