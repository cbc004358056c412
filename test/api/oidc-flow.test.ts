// Gatehouse as an OpenID Connect provider (docs/contract/oidc.md), the flows that
// succeed, driven over real HTTP by the relying party of test/helpers/relying-party.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, login, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import {
  discover, pathOf, registerClient, signInThrough, tokenRequest, userinfo, verifyIdToken, type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { enrolTotp } from '../helpers/two-factor.js';

const ISSUER = 'https://auth.example.org';
const REDIRECT = 'https://app.example.org/login/callback';

describe('OpenID Connect discovery and keys', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ GATEHOUSE_PUBLIC_URL: ISSUER });
  });
  after(() => server.close());

  it('publishes the discovery document the contract lists, the issuer exactly --public-url', async () => {
    const discovery = await discover(server);
    assert.equal(discovery.issuer, ISSUER);
    assert.equal(discovery.authorization_endpoint, `${ISSUER}/oidc/authorize`);
    assert.equal(discovery.token_endpoint, `${ISSUER}/oidc/token`);
    assert.equal(discovery.userinfo_endpoint, `${ISSUER}/oidc/userinfo`);
    assert.equal(discovery.jwks_uri, `${ISSUER}/oidc/jwks`);
    assert.equal(discovery.end_session_endpoint, `${ISSUER}/oidc/logout`);
    assert.equal(discovery.revocation_endpoint, `${ISSUER}/oidc/revoke`);
    assert.deepEqual(discovery['response_types_supported'], ['code']);
    assert.deepEqual(discovery['grant_types_supported'], ['authorization_code', 'refresh_token']);
    assert.deepEqual(discovery['subject_types_supported'], ['public']);
    assert.deepEqual(discovery['id_token_signing_alg_values_supported'], ['RS256', 'ES256']);
    assert.deepEqual(discovery['token_endpoint_auth_methods_supported'], ['client_secret_basic', 'client_secret_post', 'none']);
    assert.deepEqual(discovery['code_challenge_methods_supported'], ['S256']);
    assert.deepEqual(discovery['scopes_supported'], ['openid', 'profile', 'email', 'groups', 'offline_access']);
    assert.ok(Array.isArray(discovery['claims_supported']));
    assert.equal(discovery['authorization_response_iss_parameter_supported'], true);
  });

  it('publishes an RS256 and an ES256 public key, each with its thumbprint as kid', async () => {
    const response = await server.request({ path: '/oidc/jwks' });
    assert.equal(response.status, 200);
    const { keys } = response.json as { keys: Array<Record<string, string>> };
    assert.deepEqual(keys.map((key) => [key['kty'], key['alg'], key['use']]), [['RSA', 'RS256', 'sig'], ['EC', 'ES256', 'sig']]);
    for (const key of keys) {
      assert.match(key['kid'] ?? '', /^[A-Za-z0-9_-]{43}$/);
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(Object.hasOwn(key, member), false);
    }
  });

  it('lives under --base-uri, the issuer being --public-url with that base', async () => {
    const based = await startTestServer({ GATEHOUSE_PUBLIC_URL: 'https://example.org/auth', GATEHOUSE_BASE_URI: '/auth' });
    try {
      const discovery = await discover(based, '/auth');
      assert.equal(discovery.issuer, 'https://example.org/auth');
      assert.equal(discovery.token_endpoint, 'https://example.org/auth/oidc/token');
      assert.equal((await based.request({ path: '/auth/oidc/jwks' })).status, 200);
      assert.equal((await based.request({ path: '/.well-known/openid-configuration' })).status, 404);
    } finally {
      await based.close();
    }
  });
});

describe('without --public-url', () => {
  it('answers 404 on every OpenID Connect path', async () => {
    const server = await startTestServer();
    try {
      const paths: ReadonlyArray<readonly [string, string]> = [
        ['GET', '/.well-known/openid-configuration'], ['GET', '/oidc/jwks'], ['GET', '/oidc/authorize'], ['POST', '/oidc/authorize'],
        ['POST', '/oidc/token'], ['GET', '/oidc/userinfo'], ['POST', '/oidc/userinfo'], ['POST', '/oidc/revoke'], ['GET', '/oidc/logout'],
        ['GET', '/api/auth/clients'], ['POST', '/api/auth/clients'], ['DELETE', `/api/auth/clients/${'a'.repeat(32)}`],
      ];
      for (const [method, path] of paths) assert.equal((await server.request({ method, path })).status, 404, `${method} ${path}`);
    } finally {
      await server.close();
    }
  });
});

describe('signing in to an app through Gatehouse', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let confidential: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER }));
    discovery = await discover(server);
    confidential = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
  });
  after(() => server.close());

  it('gives a confidential client (client_secret_basic) an RS256 id_token, an access token, and no refresh token without offline_access', async () => {
    const user = await createUser(server, root.token);
    const { tokens, claims } = await signInThrough(server, discovery, confidential, user.token);
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.scope, 'openid profile email groups');
    assert.equal(JSON.parse(Buffer.from(tokens.id_token.split('.')[0] ?? '', 'base64url').toString()).alg, 'RS256');
    assert.match(String(claims['sub']), /^[A-Za-z0-9_-]{22}$/);
    assert.equal(claims['preferred_username'], user.username);
    assert.deepEqual(claims['groups'], []);
    assert.deepEqual(claims['amr'], ['pwd']);
    assert.equal(claims['auth_time'], claims['iat']);
    // No address: no email claims.
    assert.equal(Object.hasOwn(claims, 'email'), false);
  });

  it('accepts client_secret_post as well', async () => {
    const user = await createUser(server, root.token);
    await signInThrough(server, discovery, confidential, user.token, { how: 'post' });
  });

  it('puts claims in by scope: openid alone gives sub only; email and name appear once the account has them', async () => {
    const user = await createUser(server, root.token);
    const bare = await signInThrough(server, discovery, confidential, user.token, { scope: 'openid' });
    const expected = ['iss', 'sub', 'aud', 'azp', 'exp', 'iat', 'auth_time', 'nonce', 'amr'];
    assert.deepEqual(Object.keys(bare.claims).sort(), expected.sort());
    assert.equal((await updateUser(server, root.token, user.username, { email: 'ada@example.org', name: 'Ada L.', groups: ['media', 'ops'] })).status, 200);
    const full = await signInThrough(server, discovery, confidential, user.token);
    assert.equal(full.claims['email'], 'ada@example.org');
    assert.equal(full.claims['email_verified'], true);
    assert.equal(full.claims['name'], 'Ada L.');
    assert.deepEqual(full.claims['groups'], ['media', 'ops']);
    assert.equal(full.claims['sub'], bare.claims['sub']);
    // The owner's own address is not verified.
    const own = await server.request({ method: 'PATCH', path: '/api/auth/account', token: user.token, body: { email: 'ada@home.example' } });
    assert.equal(own.status, 200, own.text);
    const mine = await signInThrough(server, discovery, confidential, user.token, { scope: 'openid email' });
    assert.equal(mine.claims['email'], 'ada@home.example');
    assert.equal(mine.claims['email_verified'], false);
    assert.equal(Object.hasOwn(mine.claims, 'name'), false);
  });

  it('answers userinfo with sub and the claims of the granted scopes, plain JSON, by GET and POST', async () => {
    const user = await createUser(server, root.token);
    const { tokens, claims } = await signInThrough(server, discovery, confidential, user.token, { scope: 'openid profile' });
    const byGet = await userinfo(server, discovery, tokens.access_token);
    assert.equal(byGet.status, 200);
    assert.match(String(byGet.headers['content-type']), /^application\/json/);
    assert.deepEqual(byGet.json, { sub: claims['sub'], preferred_username: user.username });
    const byPost = await server.request({ method: 'POST', path: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.deepEqual(byPost.json, byGet.json);
    const inBody = await server.request({
      method: 'POST', path: '/oidc/userinfo', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${tokens.access_token}`,
    });
    assert.deepEqual(inBody.json, byGet.json);
  });

  it('signs in a public client with PKCE and no secret', async () => {
    const phone = await registerClient(server, root.token, { redirectUris: ['app.example.photos:/oauth-callback'], public: true });
    assert.equal(phone.clientSecret, undefined);
    const user = await createUser(server, root.token);
    const { tokens } = await signInThrough(server, discovery, phone, user.token, { how: 'none' });
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 200);
  });

  it('signs an ES256 client its id_tokens with the P-256 key (64-byte R||S signature)', async () => {
    const es = await registerClient(server, root.token, { redirectUris: [REDIRECT], alg: 'ES256' });
    const user = await createUser(server, root.token);
    const { tokens } = await signInThrough(server, discovery, es, user.token);
    const [header = '', , signature = ''] = tokens.id_token.split('.');
    assert.equal(JSON.parse(Buffer.from(header, 'base64url').toString()).alg, 'ES256');
    assert.equal(Buffer.from(signature, 'base64url').length, 64);
  });

  it('keeps sub through a rename, and gives each account its own', async () => {
    const user = await createUser(server, root.token);
    const other = await createUser(server, root.token);
    const before = (await signInThrough(server, discovery, confidential, user.token)).claims['sub'];
    assert.notEqual((await signInThrough(server, discovery, confidential, other.token)).claims['sub'], before);
    const renamed = `${user.username}-renamed`;
    assert.equal((await updateUser(server, root.token, user.username, { username: renamed })).status, 200);
    const session = (await login(server, renamed, user.password)).cookieToken ?? '';
    const { claims } = await signInThrough(server, discovery, confidential, session);
    assert.equal(claims['sub'], before);
    assert.equal(claims['preferred_username'], renamed);
  });

  it('rotates refresh tokens (offline_access): a new one each time, a new id_token without nonce but the first auth_time', async () => {
    const user = await createUser(server, root.token);
    const first = await signInThrough(server, discovery, confidential, user.token, { scope: 'openid profile offline_access' });
    assert.ok(first.tokens.refresh_token !== undefined);
    server.clock.advanceSeconds(120);
    const refreshed = await tokenRequest(server, discovery, confidential, { grant_type: 'refresh_token', refresh_token: first.tokens.refresh_token });
    assert.equal(refreshed.status, 200, refreshed.text);
    const next = refreshed.json as { refresh_token: string; id_token: string; access_token: string; scope: string };
    assert.notEqual(next.refresh_token, first.tokens.refresh_token);
    assert.equal(next.scope, 'openid profile offline_access');
    const claims = await verifyIdToken(server, discovery, next.id_token, confidential.clientId, undefined);
    assert.equal(claims['auth_time'], first.claims['auth_time']);
    assert.equal(claims['sub'], first.claims['sub']);
    assert.equal((await userinfo(server, discovery, next.access_token)).status, 200);
    // A narrower scope on refresh (RFC 6749 section 6), and never a wider one.
    const narrower = await tokenRequest(server, discovery, confidential, { grant_type: 'refresh_token', refresh_token: next.refresh_token, scope: 'openid' });
    assert.equal(narrower.status, 200, narrower.text);
    const narrow = narrower.json as { refresh_token: string; access_token: string; scope: string };
    assert.equal(narrow.scope, 'openid');
    assert.deepEqual(Object.keys((await userinfo(server, discovery, narrow.access_token)).json as object), ['sub']);
    const wider = await tokenRequest(server, discovery, confidential, { grant_type: 'refresh_token', refresh_token: narrow.refresh_token, scope: 'openid email' });
    assert.equal(wider.status, 400);
    assert.equal((wider.json as { error: string }).error, 'invalid_scope');
    // The refused request did not spend the token.
    assert.equal((await tokenRequest(server, discovery, confidential, { grant_type: 'refresh_token', refresh_token: narrow.refresh_token })).status, 200);
  });

  it('revokes a refresh token (and the access tokens of its family) and an access token, and answers 200 for unknown ones', async () => {
    const user = await createUser(server, root.token);
    const { tokens } = await signInThrough(server, discovery, confidential, user.token, { scope: 'openid offline_access' });
    const revoke = (token: string, client: RegisteredClient = confidential) => server.request({
      method: 'POST', path: pathOf(discovery.revocation_endpoint),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret ?? ''}`).toString('base64')}` },
      body: new URLSearchParams({ token }).toString(),
    });
    const other = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
    // RFC 7009 section 2.1: another client's token is refused (test/attack/oidc-revoke-other-client.test.ts).
    assert.equal((await revoke(tokens.refresh_token ?? '', other)).status, 400);
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 200, 'another client cannot revoke it');
    assert.equal((await revoke(tokens.refresh_token ?? '')).status, 200);
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 401);
    const refused = await tokenRequest(server, discovery, confidential, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' });
    assert.equal((refused.json as { error: string }).error, 'invalid_grant');
    const second = await signInThrough(server, discovery, confidential, user.token);
    assert.equal((await revoke(second.tokens.access_token)).status, 200);
    assert.equal((await userinfo(server, discovery, second.tokens.access_token)).status, 401);
    assert.equal((await revoke('no-such-token')).status, 200);
  });

  it('never lets an access token pass the gate or the account routes', async () => {
    const user = await createUser(server, root.token);
    const { tokens } = await signInThrough(server, discovery, confidential, user.token);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    assert.equal((await server.request({ path: '/api/auth/forward', headers: bearer })).status, 401);
    const basic = { authorization: `Basic ${Buffer.from(`${user.username}:${tokens.access_token}`).toString('base64')}` };
    assert.equal((await server.request({ path: '/api/auth/forward', headers: basic })).status, 401);
    assert.equal((await server.request({ path: `/api/auth/forward?token=${tokens.access_token}` })).status, 401);
    assert.equal((await server.request({ path: '/api/auth/account', headers: bearer })).status, 401);
    assert.equal((await server.request({ path: '/api/auth/account', token: tokens.access_token })).status, 401);
    assert.equal((await server.request({ path: `/api/auth/verify?token=${tokens.access_token}` })).status, 401);
  });

  it('counts a code or password sign-in in amr: two factors after TOTP', async () => {
    const user = await createUser(server, root.token);
    const { token } = await enrolTotp(server, user);
    const { claims } = await signInThrough(server, discovery, confidential, token);
    assert.deepEqual(claims['amr'], ['pwd', 'otp']);
  });
});
