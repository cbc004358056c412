// CORS for browser apps (docs/contract/oidc.md, endpoints), over real HTTP: the token, userinfo and
// revocation endpoints answer Access-Control-Allow-Origin only with the request's Origin, and only
// when it is the origin of one of that app's redirect URIs; never credentials. Their preflights,
// which carry no client and no token, answer the origins of every registered app. Discovery and the
// JWKS are public documents, open to any origin.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPopulatedServer, type TestUser } from '../helpers/api.js';
import { discover, registerClient, signInThrough, tokenRequest, type Discovery, type RegisteredClient } from '../helpers/relying-party.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const SPA = 'https://spa.example.org';
const DEV = 'http://localhost:5173';
const OTHER = 'https://other.example.org';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The CORS headers of an answer, and that no answer ever allows credentials. */
function corsOf(response: TestResponse): { origin: string | undefined; vary: string } {
  assert.equal(response.headers['access-control-allow-credentials'], undefined);
  const origin = response.headers['access-control-allow-origin'];
  return { origin: typeof origin === 'string' ? origin : undefined, vary: String(response.headers.vary ?? '') };
}

describe('CORS at the provider\'s endpoints', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let spa: RegisteredClient;
  let other: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    spa = await registerClient(server, root.token, { public: true, redirectUris: [`${SPA}/callback`, `${DEV}/cb?x=1`, 'app.example:/cb'] });
    other = await registerClient(server, root.token, { redirectUris: [`${OTHER}/cb`] });
  });
  after(() => server.close());

  const token = (client: RegisteredClient, origin: string | undefined, fields: Record<string, string> = { grant_type: 'authorization_code', code: 'c'.repeat(43), redirect_uri: client.redirectUri }) =>
    server.request({
      method: 'POST', path: '/oidc/token', headers: { ...FORM, ...(origin === undefined ? {} : { origin }) },
      body: new URLSearchParams({ ...fields, client_id: client.clientId }).toString(),
    });

  it('token: the request\'s Origin when it is one of that app\'s redirect origins, on errors too', async () => {
    for (const origin of [SPA, DEV]) {
      const answer = await token(spa, origin);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(corsOf(answer), { origin, vary: 'Origin' });
    }
    // The tokens themselves, from a real code.
    const { tokens } = await signInThrough(server, discovery, spa, root.token, { how: 'none' });
    assert.ok(tokens.access_token !== '');
  });

  it('token: no Access-Control-Allow-Origin for another app\'s origin, a stranger, "null", or no Origin; Vary: Origin always', async () => {
    for (const origin of [OTHER, 'https://evil.example', 'null', 'https://spa.example.org:444', 'http://spa.example.org', `${SPA}/`, undefined]) {
      assert.deepEqual(corsOf(await token(spa, origin)), { origin: undefined, vary: 'Origin' }, String(origin));
    }
    // A confidential app's own origin, named by Basic authentication as by client_id.
    const basic = await server.request({
      method: 'POST', path: '/oidc/token',
      headers: { ...FORM, origin: OTHER, authorization: `Basic ${Buffer.from(`${other.clientId}:${other.clientSecret ?? ''}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'c'.repeat(43), redirect_uri: other.redirectUri }).toString(),
    });
    assert.deepEqual(corsOf(basic), { origin: OTHER, vary: 'Origin' });
  });

  it('userinfo: the origins of the app the access token was issued to; an unknown token answers any registered app\'s origin', async () => {
    const { tokens } = await signInThrough(server, discovery, spa, root.token, { how: 'none' });
    const userinfo = (origin: string, bearer = tokens.access_token) =>
      server.request({ path: '/oidc/userinfo', headers: { authorization: `Bearer ${bearer}`, origin } });
    const mine = await userinfo(SPA);
    assert.equal(mine.status, 200);
    assert.deepEqual(corsOf(mine), { origin: SPA, vary: 'Origin' });
    assert.deepEqual(corsOf(await userinfo(OTHER)), { origin: undefined, vary: 'Origin' });
    assert.deepEqual(corsOf(await userinfo('https://evil.example')), { origin: undefined, vary: 'Origin' });
    const unknown = await userinfo(OTHER, 'x'.repeat(43));
    assert.equal(unknown.status, 401);
    assert.deepEqual(corsOf(unknown), { origin: OTHER, vary: 'Origin' });
    assert.deepEqual(corsOf(await userinfo('https://evil.example', 'x'.repeat(43))), { origin: undefined, vary: 'Origin' });
  });

  it('revocation: the origins of the app named by client_id', async () => {
    const { tokens } = await signInThrough(server, discovery, spa, root.token, { how: 'none', scope: 'openid offline_access' });
    const revoke = (origin: string) => server.request({
      method: 'POST', path: '/oidc/revoke', headers: { ...FORM, origin },
      body: new URLSearchParams({ token: tokens.refresh_token ?? '', client_id: spa.clientId }).toString(),
    });
    assert.deepEqual(corsOf(await revoke(OTHER)), { origin: undefined, vary: 'Origin' });
    const answer = await revoke(SPA);
    assert.equal(answer.status, 200);
    assert.deepEqual(corsOf(answer), { origin: SPA, vary: 'Origin' });
    assert.equal((await tokenRequest(server, discovery, spa, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' }, 'none')).status, 400);
  });

  it('preflights: 204 with the methods and headers for any registered app\'s origin, nothing for a stranger', async () => {
    for (const [path, methods] of [['/oidc/token', 'POST'], ['/oidc/userinfo', 'GET, POST'], ['/oidc/revoke', 'POST']] as const) {
      for (const origin of [SPA, OTHER]) {
        const answer = await server.request({
          method: 'OPTIONS', path,
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
        });
        assert.equal(answer.status, 204, `${path} ${origin}: ${answer.text}`);
        assert.deepEqual(corsOf(answer), { origin, vary: 'Origin' });
        assert.equal(answer.headers['access-control-allow-methods'], methods);
        assert.equal(answer.headers['access-control-allow-headers'], 'Authorization, Content-Type');
        assert.equal(answer.headers['access-control-max-age'], '600');
        assert.equal(answer.text, '');
      }
      for (const origin of ['https://evil.example', 'null', undefined]) {
        const answer = await server.request({ method: 'OPTIONS', path, headers: origin === undefined ? {} : { origin, 'access-control-request-method': 'POST' } });
        assert.equal(answer.status, 204);
        assert.deepEqual(corsOf(answer), { origin: undefined, vary: 'Origin' });
        assert.equal(answer.headers['access-control-allow-methods'], undefined);
      }
    }
  });

  it('follows the apps as they change: an origin removed from an app\'s redirect URIs is refused at once', async () => {
    const moving = await registerClient(server, root.token, { public: true, redirectUris: ['https://moving.example.org/cb'] });
    assert.equal(corsOf(await token(moving, 'https://moving.example.org')).origin, 'https://moving.example.org');
    const edit = await server.request({ method: 'PATCH', path: `/api/auth/clients/${moving.clientId}`, token: root.token, body: { redirectUris: ['https://moved.example.org/cb'] } });
    assert.equal(edit.status, 200);
    assert.equal(corsOf(await token(moving, 'https://moving.example.org')).origin, undefined);
    const preflight = await server.request({ method: 'OPTIONS', path: '/oidc/token', headers: { origin: 'https://moving.example.org', 'access-control-request-method': 'POST' } });
    assert.equal(corsOf(preflight).origin, undefined);
  });

  it('discovery and the JWKS are open to any origin', async () => {
    for (const path of ['/.well-known/openid-configuration', '/oidc/jwks']) {
      const answer = await server.request({ path, headers: { origin: 'https://evil.example' } });
      assert.equal(answer.status, 200);
      assert.equal(corsOf(answer).origin, '*');
    }
  });
});
