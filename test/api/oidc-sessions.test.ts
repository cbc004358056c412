// Every token an account holds through an app stops working when its sessions end
// (docs/contract/oidc.md "Refresh tokens"): access tokens, refresh tokens and codes not yet exchanged,
// after each change that ends sessions, and when the app is removed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUser, deleteUser, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import {
  authorizationRequest, callbackOf, discover, exchangeCode, followAuthorization, registerClient, signInThrough, tokenRequest,
  userinfo, type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { enrolTotp } from '../helpers/two-factor.js';

const REDIRECT = 'https://app.example.org/cb';

describe('tokens end with the account\'s sessions', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
  });
  after(() => server.close());

  /** An access token, a refresh token and an unexchanged code of `user`, through `target`. */
  async function holdings(user: TestUser, target: RegisteredClient = client) {
    const { tokens } = await signInThrough(server, discovery, target, user.token, { scope: 'openid offline_access' });
    const attempt = authorizationRequest(discovery, target);
    const { location } = await followAuthorization(server, attempt, user.token);
    return { tokens, attempt, code: callbackOf(location, attempt, discovery).get('code') ?? '' };
  }

  async function assertAllEnded(held: Awaited<ReturnType<typeof holdings>>, target: RegisteredClient = client, expectedClientError = 'invalid_grant'): Promise<void> {
    assert.equal((await userinfo(server, discovery, held.tokens.access_token)).status, 401, 'access token');
    const refresh = await tokenRequest(server, discovery, target, { grant_type: 'refresh_token', refresh_token: held.tokens.refresh_token ?? '' });
    assert.equal((refresh.json as { error: string }).error, expectedClientError, `refresh token: ${refresh.text}`);
    const exchange = await exchangeCode(server, discovery, target, held.code, held.attempt);
    assert.equal((exchange.json as { error: string }).error, expectedClientError, `code: ${exchange.text}`);
  }

  const changes: ReadonlyArray<readonly [string, (user: TestUser) => Promise<void>]> = [
    ['its owner changes the password', async (user) => {
      const response = await server.request({ method: 'POST', path: '/api/auth/account/password', token: user.token, body: { password: user.password, newPassword: 'a new password' } });
      assert.equal(response.status, 200, response.text);
    }],
    ['an administrator sets a new password', async (user) => assert.equal((await updateUser(server, root.token, user.username, { password: 'reset by admin' })).status, 200)],
    ['it is renamed', async (user) => assert.equal((await updateUser(server, root.token, user.username, { username: `${user.username}-2` })).status, 200)],
    ['its level changes', async (user) => assert.equal((await updateUser(server, root.token, user.username, { level: 'ADMINISTRATOR' })).status, 200)],
    ['its owner logs out everywhere', async (user) => {
      const response = await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: user.token, body: {} });
      assert.equal(response.status, 200, response.text);
    }],
    ['it is deleted', async (user) => assert.equal((await deleteUser(server, root.token, user.username)).status, 200)],
  ];
  for (const [name, change] of changes) {
    it(`when ${name}`, async () => {
      const user = await createUser(server, root.token);
      const held = await holdings(user);
      assert.equal((await userinfo(server, discovery, held.tokens.access_token)).status, 200);
      await change(user);
      await assertAllEnded(held);
    });
  }

  it('when an administrator resets its second factor', async () => {
    const user = await createUser(server, root.token);
    const { token } = await enrolTotp(server, user);
    const held = await holdings({ ...user, token });
    assert.equal((await updateUser(server, root.token, user.username, { totp: false })).status, 200);
    await assertAllEnded(held);
  });

  it('when it leaves the groups the app is limited to (userinfo and refresh check them again)', async () => {
    const limited = await registerClient(server, root.token, { redirectUris: [REDIRECT], groups: ['media'] });
    const user = await createUser(server, root.token);
    assert.equal((await updateUser(server, root.token, user.username, { groups: ['media'] })).status, 200);
    const held = await holdings(user, limited);
    assert.equal((await updateUser(server, root.token, user.username, { groups: [] })).status, 200);
    await assertAllEnded(held, limited);
  });

  it('when the app is removed: its tokens stop working and it can no longer authenticate', async () => {
    const doomed = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
    const user = await createUser(server, root.token);
    const held = await holdings(user, doomed);
    const removed = await server.request({ method: 'DELETE', path: `/api/auth/clients/${doomed.clientId}`, token: root.token });
    assert.equal(removed.status, 200, removed.text);
    await assertAllEnded(held, doomed, 'invalid_client');
  });

  it('not when only the e-mail address, display name or client settings change', async () => {
    const user = await createUser(server, root.token);
    const held = await holdings(user);
    assert.equal((await updateUser(server, root.token, user.username, { email: 'x@example.org', name: 'X' })).status, 200);
    assert.equal((await userinfo(server, discovery, held.tokens.access_token)).status, 200);
    const refresh = await tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: held.tokens.refresh_token ?? '' });
    assert.equal(refresh.status, 200, refresh.text);
    assert.equal((await exchangeCode(server, discovery, client, held.code, held.attempt)).status, 200);
  });
});

describe('refresh tokens across a restart', () => {
  it('keep working after the service restarts on the same data directory; access tokens do not', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-restart-'));
    try {
      const settings = { GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' };
      let server = await startTestServer(settings, { dataDir });
      let refreshToken = '';
      let accessToken = '';
      let target: RegisteredClient;
      try {
        const admin = await createUser(server, undefined, { level: 10 });
        target = await registerClient(server, admin.token, { redirectUris: [REDIRECT] });
        const { tokens } = await signInThrough(server, await discover(server), target, admin.token, { scope: 'openid offline_access' });
        refreshToken = tokens.refresh_token ?? '';
        accessToken = tokens.access_token;
      } finally {
        await server.close();
      }
      server = await startTestServer(settings, { dataDir });
      try {
        const restarted = await discover(server);
        assert.equal((await userinfo(server, restarted, accessToken)).status, 401);
        const refreshed = await tokenRequest(server, restarted, target, { grant_type: 'refresh_token', refresh_token: refreshToken });
        assert.equal(refreshed.status, 200, refreshed.text);
      } finally {
        await server.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
