// RFC 7009 section 2.1: the server "verifies whether the token was issued to the client making the
// revocation request. If this validation fails, the request is refused". One app must not be able to
// end another app's tokens (nor learn by a 200 that it did nothing): it gets 400 invalid_grant (RFC
// 6749 section 5.2: "issued to another client"), and the token goes on working.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPopulatedServer, type TestUser } from '../helpers/api.js';
import {
  discover, pathOf, registerClient, signInThrough, tokenRequest, userinfo, type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

describe('revoking a token issued to another app', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let owner: RegisteredClient;
  let other: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    owner = await registerClient(server, root.token, { redirectUris: ['https://owner.example.org/cb'] });
    other = await registerClient(server, root.token, { redirectUris: ['https://other.example.org/cb'] });
  });
  after(() => server.close());

  const revoke = (client: RegisteredClient, token: string): Promise<TestResponse> => {
    const credentials = Buffer.from(`${client.clientId}:${client.clientSecret ?? ''}`).toString('base64');
    return server.request({
      method: 'POST', path: pathOf(discovery.revocation_endpoint), body: new URLSearchParams({ token }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${credentials}` },
    });
  };
  const refresh = (token: string): Promise<TestResponse> =>
    tokenRequest(server, discovery, owner, { grant_type: 'refresh_token', refresh_token: token });

  it('refuses another app\'s access token with 400 invalid_grant and revokes nothing', async () => {
    const { tokens } = await signInThrough(server, discovery, owner, root.token, { scope: 'openid offline_access' });
    const refused = await revoke(other, tokens.access_token);
    assert.equal(refused.status, 400, refused.text);
    assert.equal((refused.json as { error?: string }).error, 'invalid_grant');
    assert.equal(refused.headers['cache-control'], 'no-store');
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 200, 'the access token still works');
    assert.equal((await refresh(tokens.refresh_token ?? '')).status, 200, 'and its family too');
  });

  it('refuses another app\'s refresh token with 400 invalid_grant and revokes nothing', async () => {
    const { tokens } = await signInThrough(server, discovery, owner, root.token, { scope: 'openid offline_access' });
    const refused = await revoke(other, tokens.refresh_token ?? '');
    assert.equal(refused.status, 400, refused.text);
    assert.equal((refused.json as { error?: string }).error, 'invalid_grant');
    const refreshed = await refresh(tokens.refresh_token ?? '');
    assert.equal(refreshed.status, 200, `the refresh token still works: ${refreshed.text}`);
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 200, 'its access token too');
  });

  it('still answers 200 for an unknown or used token, and revokes the app\'s own', async () => {
    const { tokens } = await signInThrough(server, discovery, owner, root.token, { scope: 'openid offline_access' });
    assert.equal((await revoke(other, 'x'.repeat(43))).status, 200);
    assert.equal((await revoke(other, `${(tokens.refresh_token ?? '').split('.')[0] ?? ''}.${'y'.repeat(43)}`)).status, 200);
    assert.equal((await revoke(owner, tokens.access_token)).status, 200);
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 401);
    assert.equal((await revoke(owner, tokens.refresh_token ?? '')).status, 200);
    assert.equal((await refresh(tokens.refresh_token ?? '')).status, 400);
  });
});
