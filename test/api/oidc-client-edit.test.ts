// Editing a registered app (PATCH /api/auth/clients/{clientId}), over real HTTP: what changes, what
// stays (the id and the secret), when the change counts (the next authorization), which refresh
// tokens end with it, and every refusal.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createUser, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import {
  authorizationRequest, discover, pathOf, registerClient, signInThrough, tokenRequest,
  type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
import { enrolTotp } from '../helpers/two-factor.js';

const FIRST = 'https://app.example.org/first';
const SECOND = 'https://app.example.org/second';

describe('editing a sign-in app', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
  });
  after(() => server.close());

  const edit = (clientId: string, body: unknown, token = root.token, headers: Record<string, string> = {}): Promise<TestResponse> =>
    server.request({ method: 'PATCH', path: `/api/auth/clients/${clientId}`, token, body, headers });
  const listed = async (clientId: string): Promise<Record<string, unknown> | undefined> =>
    ((await server.request({ path: '/api/auth/clients', token: root.token })).json as Array<Record<string, unknown>>)
      .find((entry) => entry['clientId'] === clientId);
  const refresh = (client: RegisteredClient, token: string): Promise<TestResponse> =>
    tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: token });
  const authorizeStatus = async (client: RegisteredClient, redirectUri: string): Promise<TestResponse> =>
    server.request({ path: pathOf(authorizationRequest(discovery, { ...client, redirectUri }).url), token: root.token, headers: { accept: 'text/html' } });

  it('changes the name, redirect URIs, sign-out URIs, groups, mfa and alg; the id and the secret stay', async () => {
    const client = await registerClient(server, root.token, { name: 'Before', redirectUris: [FIRST] });
    const changes = {
      name: 'After', redirectUris: [SECOND], postLogoutRedirectUris: ['https://app.example.org/bye'], groups: ['ops'], mfa: true, alg: 'ES256',
    };
    const answer = await edit(client.clientId, changes);
    assert.equal(answer.status, 200, answer.text);
    const summary = answer.json as Record<string, unknown>;
    assert.equal(summary['clientId'], client.clientId);
    assert.equal(summary['clientSecret'], undefined);
    const entry = await listed(client.clientId);
    assert.deepEqual(
      [entry?.['name'], entry?.['redirectUris'], entry?.['postLogoutRedirectUris'], entry?.['groups'], entry?.['mfa'], entry?.['alg'], entry?.['public']],
      ['After', [SECOND], ['https://app.example.org/bye'], ['ops'], true, 'ES256', false],
    );
    // Lists replace; an empty list of groups lets every account in again, mfa false drops it.
    assert.equal((await edit(client.clientId, { groups: [], mfa: false, postLogoutRedirectUris: [] })).status, 200);
    const cleared = await listed(client.clientId);
    assert.deepEqual([cleared?.['groups'], cleared?.['mfa'], cleared?.['postLogoutRedirectUris'], cleared?.['name']], [[], false, [], 'After']);
  });

  it('takes effect for the next authorization, and the old secret still exchanges codes', async () => {
    const client = await registerClient(server, root.token, { redirectUris: [FIRST] });
    assert.equal((await edit(client.clientId, { redirectUris: [SECOND], alg: 'ES256' })).status, 200);
    const removed = await authorizeStatus(client, FIRST);
    assert.equal(removed.status, 400);
    assert.equal(removed.headers.location, undefined);
    const moved: RegisteredClient = { ...client, redirectUri: SECOND };
    const { tokens } = await signInThrough(server, discovery, moved, root.token);
    const header = JSON.parse(Buffer.from(tokens.id_token.split('.')[0] ?? '', 'base64url').toString()) as { alg: string };
    assert.equal(header.alg, 'ES256');
  });

  it('changing the groups ends the refresh tokens of accounts outside them, and only those', async () => {
    const inside = await createUser(server, root.token, { prefix: 'inside' });
    const outside = await createUser(server, root.token, { prefix: 'outside' });
    assert.equal((await updateUser(server, root.token, inside.username, { groups: ['media'] })).status, 200);
    const client = await registerClient(server, root.token, { redirectUris: [FIRST] });
    const insider = await signInThrough(server, discovery, client, (await relogin(inside)), { scope: 'openid offline_access' });
    const outsider = await signInThrough(server, discovery, client, (await relogin(outside)), { scope: 'openid offline_access' });
    const answer = await edit(client.clientId, { groups: ['media'] });
    assert.equal(answer.status, 200, answer.text);
    assert.equal((answer.json as { endedRefreshTokens: number }).endedRefreshTokens, 1);
    // Ended in the file itself, not only refused at the next use.
    const grants = JSON.parse(await readGrants()) as { grants: Array<{ username: string; clientId: string }> };
    assert.deepEqual(grants.grants.filter((grant) => grant.clientId === client.clientId).map((grant) => grant.username), [inside.username]);
    assert.equal((await refresh(client, outsider.tokens.refresh_token ?? '')).status, 400);
    assert.equal((await refresh(client, insider.tokens.refresh_token ?? '')).status, 200);
  });

  it('turning mfa on ends the refresh tokens of one-factor sign-ins and their access tokens; two-factor ones stay', async () => {
    const twoFactor = await createUser(server, root.token, { prefix: 'twofactor' });
    const { token: twoFactorSession } = await enrolTotp(server, twoFactor);
    const oneFactor = await createUser(server, root.token, { prefix: 'onefactor' });
    const client = await registerClient(server, root.token, { redirectUris: [FIRST] });
    const strong = await signInThrough(server, discovery, client, twoFactorSession, { scope: 'openid offline_access' });
    const weak = await signInThrough(server, discovery, client, (await relogin(oneFactor)), { scope: 'openid offline_access' });
    const answer = await edit(client.clientId, { mfa: true });
    assert.equal(answer.status, 200, answer.text);
    assert.equal((answer.json as { endedRefreshTokens: number }).endedRefreshTokens, 1);
    assert.equal((await refresh(client, weak.tokens.refresh_token ?? '')).status, 400);
    const userinfoOf = (token: string) => server.request({ path: '/oidc/userinfo', headers: { authorization: `Bearer ${token}` } });
    assert.equal((await userinfoOf(weak.tokens.access_token)).status, 401);
    assert.equal((await userinfoOf(strong.tokens.access_token)).status, 200);
    assert.equal((await refresh(client, strong.tokens.refresh_token ?? '')).status, 200);
    // Unchanged groups and mfa end nothing.
    const again = await edit(client.clientId, { name: 'Renamed only' });
    assert.equal((again.json as { endedRefreshTokens: number }).endedRefreshTokens, 0);
  });

  it('refuses bad bodies with 400 (as adding one does), a taken name with 409, an unknown app with 404', async () => {
    const client = await registerClient(server, root.token, { name: 'Editable', redirectUris: [FIRST] });
    await registerClient(server, root.token, { name: 'Other', redirectUris: [FIRST] });
    const tooMany = Array.from({ length: 17 }, (_, index) => `https://app.example.org/${index}`);
    for (const bad of [
      {}, [], '"text"', 'null', '7', { name: '' }, { name: 'x'.repeat(129) }, { name: 7 }, { redirectUris: [] }, { redirectUris: tooMany },
      { redirectUris: ['http://app.example.org/cb'] }, { redirectUris: ['https://a.example/#x'] }, { redirectUris: ['javascript:alert(1)'] },
      { redirectUris: [FIRST, FIRST] }, { postLogoutRedirectUris: ['https://a.example/#x'] }, { groups: ['Not A Group'] }, { groups: 'ops' },
      { mfa: 'yes' }, { alg: 'none' }, { alg: 'HS256' }, { public: true }, { clientId: 'f'.repeat(32) }, { clientSecret: 'x' },
      { secretDigest: 'x' }, JSON.parse('{"__proto__":{"name":"x"}}') as unknown,
    ]) {
      const response = await edit(client.clientId, bad);
      assert.equal(response.status, 400, `${JSON.stringify(bad)}: ${response.text}`);
      // A __proto__ key is refused as JSON before any field is looked at.
      assert.ok(['VALIDATION_FAILED', 'INVALID_JSON'].includes((response.json as { code: string }).code), response.text);
    }
    const taken = await edit(client.clientId, { name: 'Other' });
    assert.equal(taken.status, 409);
    assert.equal((taken.json as { code: string }).code, 'CLIENT_NAME_TAKEN');
    // Its own name is no clash.
    assert.equal((await edit(client.clientId, { name: 'Editable' })).status, 200);
    assert.equal((await edit('f'.repeat(32), { name: 'Nobody' })).status, 404);
    assert.equal((await edit('not-an-id', { name: 'Nobody' })).status, 404);
    const form = await server.request({ method: 'PATCH', path: `/api/auth/clients/${client.clientId}`, token: root.token, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    const huge = await edit(client.clientId, { name: 'x', redirectUris: ['https://a.example/'.padEnd(2_000_000, 'a')] });
    assert.ok(huge.status === 400 || huge.status === 413, String(huge.status));
    const entry = await listed(client.clientId);
    assert.deepEqual([entry?.['name'], entry?.['redirectUris']], ['Editable', [FIRST]]);
  });

  it('is for administrators with a session cookie from Gatehouse\'s own pages only', async () => {
    const client = await registerClient(server, root.token, { redirectUris: [FIRST] });
    const user = await createUser(server, root.token);
    const body = { name: 'Taken over' };
    assert.equal((await server.request({ method: 'PATCH', path: `/api/auth/clients/${client.clientId}`, body })).status, 401);
    assert.equal((await server.request({ method: 'PATCH', path: `/api/auth/clients/${client.clientId}?token=${root.token}`, body })).status, 401);
    assert.equal((await edit(client.clientId, body, user.token)).status, 403);
    const crossSite = await edit(client.clientId, body, root.token, { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    assert.equal((crossSite.json as { code: string }).code, 'CROSS_SITE_REQUEST');
    assert.notEqual((await listed(client.clientId))?.['name'], 'Taken over');
  });

  async function relogin(user: TestUser): Promise<string> {
    const response = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password } });
    assert.equal(response.status, 200, response.text);
    return response.cookieToken ?? '';
  }

  function readGrants(): Promise<string> {
    return readFile(join(server.dataDir, 'oidc-grants.json'), 'utf8');
  }
});
