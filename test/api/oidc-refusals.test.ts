// Every refusal docs/contract/oidc.md lists, over real HTTP: the authorize request
// that gets a 400 page and never a redirect, the errors sent back to the app, the token endpoint's
// RFC 6749 errors, codes used twice and refresh tokens reused, and the throttle.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createUser, login, nowSeconds, signToken, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import {
  authorizationRequest, callbackOf, discover, exchangeCode, followAuthorization, pathOf, registerClient, signInThrough,
  tokenRequest, userinfo, type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import { openRawConnection, statusesIn, uploadThenRead } from '../helpers/raw-socket.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
import { enrolTotp } from '../helpers/two-factor.js';

const ISSUER = 'https://auth.example.org';
const REDIRECT = 'https://app.example.org/cb';
const errorOf = (response: TestResponse): unknown => (response.json as { error?: unknown } | undefined)?.error;

/** A page, not a redirect: 400, HTML, no Location. */
function assertNoRedirectPage(response: TestResponse): void {
  assert.equal(response.status, 400, response.text.slice(0, 200));
  assert.equal(response.headers.location, undefined);
  assert.match(String(response.headers['content-type']), /^text\/html/);
}

describe('authorization requests that cannot go back to the app', () => {
  let server: TestServer;
  let root: TestUser;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER }));
    client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
  });
  after(() => server.close());

  const get = (query: Record<string, string>, token?: string) =>
    server.request({ path: `/oidc/authorize?${new URLSearchParams(query).toString()}`, ...(token === undefined ? {} : { token }) });
  const good = () => ({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope: 'openid', state: 's' });

  it('an unknown client_id, a missing or unregistered redirect_uri get a 400 page, signed in or not', async () => {
    for (const query of [
      { ...good(), client_id: 'f'.repeat(32) },
      { ...good(), client_id: '' },
      { ...good(), redirect_uri: '' },
      { ...good(), redirect_uri: 'https://evil.example/cb' },
      { ...good(), redirect_uri: `${REDIRECT}/` },
      { ...good(), redirect_uri: 'https://app.example.org/CB' },
    ]) {
      assertNoRedirectPage(await get(query));
      assertNoRedirectPage(await get(query, root.token));
    }
  });

  it('a repeated or badly escaped parameter gets a 400 page, even with a good redirect_uri', async () => {
    const base = new URLSearchParams(good()).toString();
    assertNoRedirectPage(await server.request({ path: `/oidc/authorize?${base}&redirect_uri=${encodeURIComponent('https://evil.example/')}` }));
    assertNoRedirectPage(await server.request({ path: `/oidc/authorize?${base}&state=%zz` }));
    assertNoRedirectPage(await server.request({ path: `/oidc/authorize?${base}&scope=openid` }));
  });

  it('a form POST with the same faults gets the same page', async () => {
    const response = await server.request({
      method: 'POST', path: '/oidc/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...good(), redirect_uri: 'https://evil.example/cb' }).toString(),
    });
    assertNoRedirectPage(response);
  });
});

describe('authorization errors sent back to the app', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
  });
  after(() => server.close());

  /** The error the app receives (with state and iss) for `extra` on a signed-in request. */
  async function errorFor(extra: Record<string, string>, target: RegisteredClient = client, token = root.token, pkce = true): Promise<string | null> {
    const attempt = authorizationRequest(discovery, target, { extra, pkce });
    const { location } = await followAuthorization(server, attempt, token);
    assert.equal(location.href.split('?')[0], target.redirectUri.split('?')[0]);
    assert.equal(location.searchParams.get('code'), null);
    return callbackOf(location, attempt, discovery).get('error');
  }

  const table: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ['the implicit flow', { response_type: 'token' }, 'unsupported_response_type'],
    ['the hybrid flow', { response_type: 'code id_token' }, 'unsupported_response_type'],
    ['a scope without openid', { scope: 'profile email' }, 'invalid_scope'],
    ['PKCE plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a request object', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
    ['response_mode=form_post', { response_mode: 'form_post' }, 'invalid_request'],
    ['prompt=none with another value', { prompt: 'none login' }, 'invalid_request'],
  ];
  for (const [name, extra, error] of table) {
    it(`${name}: ${error}`, async () => assert.equal(await errorFor(extra), error));
  }

  it('a public client without PKCE: invalid_request', async () => {
    const phone = await registerClient(server, root.token, { redirectUris: ['app.example:/cb'], public: true });
    assert.equal(await errorFor({}, phone, root.token, false), 'invalid_request');
  });

  it('a signed-in account outside the client\'s groups with prompt=none: access_denied (without it, a page: oidc-not-open.test.ts); a member gets a code', async () => {
    const limited = await registerClient(server, root.token, { redirectUris: [REDIRECT], groups: ['media'] });
    const outsider = await createUser(server, root.token);
    assert.equal(await errorFor({ prompt: 'none' }, limited, outsider.token), 'access_denied');
    const member = await createUser(server, root.token);
    assert.equal((await updateUser(server, root.token, member.username, { groups: ['family', 'media'] })).status, 200);
    await signInThrough(server, discovery, limited, member.token);
  });

  it('with no session, sends the browser to the sign-in page, which returns to the same request', async () => {
    const attempt = authorizationRequest(discovery, client);
    const { location } = await followAuthorization(server, attempt);
    assert.equal(location.pathname, '/login');
    const back = new URL(location.searchParams.get('rd') ?? '', location);
    assert.equal(back.pathname, '/oidc/authorize');
    assert.equal(back.searchParams.get('client_id'), client.clientId);
    assert.equal(back.searchParams.get('state'), attempt.state);
    // The page sends a signed-in browser straight back: that request carries the cookie and gets a code.
    const { location: app } = await followAuthorization(server, { ...attempt, url: back.href }, root.token);
    assert.ok(callbackOf(app, attempt, discovery).get('code') !== null);
  });

  it('prompt=none: one hop through the sign-in page, then login_required if still no session', async () => {
    const attempt = authorizationRequest(discovery, client, { extra: { prompt: 'none' } });
    const { location } = await followAuthorization(server, attempt);
    assert.equal(location.pathname, '/login');
    assert.equal(location.searchParams.get('prompt'), 'none');
    const back = new URL(location.searchParams.get('rd') ?? '', location);
    const { location: app } = await followAuthorization(server, { ...attempt, url: back.href });
    assert.equal(callbackOf(app, attempt, discovery).get('error'), 'login_required');
    // With a session (the cookie came along on the hop) it is a code.
    const { location: signedIn } = await followAuthorization(server, { ...attempt, url: back.href }, root.token);
    assert.ok(callbackOf(signedIn, attempt, discovery).get('code') !== null);
  });

  it('prompt=login and max_age ask for a new sign-in, then accept a session made after the request', async () => {
    const user = await createUser(server, root.token);
    for (const extra of [{ prompt: 'login' }, { max_age: '60' }]) {
      const attempt = authorizationRequest(discovery, client, { extra });
      server.clock.advanceSeconds(61);
      const { location } = await followAuthorization(server, attempt, user.token);
      assert.equal(location.pathname, '/login');
      assert.equal(location.searchParams.get('prompt'), 'login');
      const back = new URL(location.searchParams.get('rd') ?? '', location);
      // The old session again: back to the sign-in page.
      assert.equal((await followAuthorization(server, { ...attempt, url: back.href }, user.token)).location.pathname, '/login');
      const fresh = (await login(server, user.username, user.password)).cookieToken ?? '';
      const { location: app } = await followAuthorization(server, { ...attempt, url: back.href }, fresh);
      assert.ok(callbackOf(app, attempt, discovery).get('code') !== null);
    }
    // prompt=none never shows the page: an old session is login_required, a recent one a code.
    assert.equal(await errorFor({ prompt: 'none', max_age: '60' }, client, user.token), 'login_required');
    const recent = (await login(server, user.username, user.password)).cookieToken ?? '';
    const quiet = authorizationRequest(discovery, client, { extra: { prompt: 'none', max_age: '60' } });
    assert.ok(callbackOf((await followAuthorization(server, quiet, recent)).location, quiet, discovery).get('code') !== null);
  });

  it('a client with mfa sends a one-factor session to the code step, and gives a two-factor one its code', async () => {
    const strict = await registerClient(server, root.token, { redirectUris: [REDIRECT], mfa: true });
    const user = await createUser(server, root.token);
    const attempt = authorizationRequest(discovery, strict);
    const noFactor = (await followAuthorization(server, attempt, user.token)).location;
    assert.equal(noFactor.pathname, '/login');
    assert.equal(noFactor.searchParams.get('mfa'), 'setup');
    const { token } = await enrolTotp(server, user);
    const onePassword = (await login(server, user.username, user.password)).status;
    assert.equal(onePassword, 401, 'an account with TOTP cannot sign in with the password alone');
    await signInThrough(server, discovery, strict, token);
    const withFactor = await createUser(server, root.token);
    await enrolTotp(server, withFactor);
    // A password-only session of an account that has a second factor: to the code step.
    const oneFactorToken = await sessionWithoutCode(withFactor);
    const codeStep = (await followAuthorization(server, authorizationRequest(discovery, strict), oneFactorToken)).location;
    assert.equal(codeStep.searchParams.get('mfa'), 'code');
    assert.equal(await errorFor({ prompt: 'none' }, strict, oneFactorToken), 'login_required');
  });

  /**
   * A password-only session of an account that has TOTP, as a session of an account whose passkey
   * did not verify its user would be: signed with the test secret, since the API hands out none.
   */
  async function sessionWithoutCode(user: TestUser): Promise<string> {
    const stored = server.running.store.find(user.username);
    assert.ok(stored !== undefined);
    const iat = nowSeconds(server);
    return signToken({ username: user.username, iat, exp: iat + 3600, sid: stored.sessionKey, amr: ['pwd'] });
  }
});

describe('the token endpoint refuses', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER, GATEHOUSE_THROTTLE_ADDRESS: '1000' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
  });
  after(() => server.close());

  async function codeFor(target: RegisteredClient, extra: { scope?: string; pkce?: boolean } = {}) {
    const attempt = authorizationRequest(discovery, target, extra);
    const { location } = await followAuthorization(server, attempt, root.token);
    return { attempt, code: callbackOf(location, attempt, discovery).get('code') ?? '' };
  }

  it('a code used twice: invalid_grant, and the tokens of its first use are revoked', async () => {
    const { attempt, code } = await codeFor(client, { scope: 'openid offline_access' });
    const first = await exchangeCode(server, discovery, client, code, attempt);
    assert.equal(first.status, 200);
    const tokens = first.json as { access_token: string; refresh_token: string };
    const second = await exchangeCode(server, discovery, client, code, attempt);
    assert.equal(second.status, 400);
    assert.equal(errorOf(second), 'invalid_grant');
    assert.equal(second.headers['cache-control'], 'no-store');
    assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 401);
    const refresh = await tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    assert.equal(errorOf(refresh), 'invalid_grant');
  });

  it('a code after 60 seconds, one of another client, another redirect URI, a wrong or missing PKCE verifier, a verifier without a challenge', async () => {
    const expired = await codeFor(client);
    server.clock.advanceSeconds(60);
    assert.equal(errorOf(await exchangeCode(server, discovery, client, expired.code, expired.attempt)), 'invalid_grant');
    const other = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
    const stolen = await codeFor(client);
    assert.equal(errorOf(await exchangeCode(server, discovery, other, stolen.code, stolen.attempt)), 'invalid_grant');
    // That burnt it: its own client cannot use it either.
    assert.equal(errorOf(await exchangeCode(server, discovery, client, stolen.code, stolen.attempt)), 'invalid_grant');
    const twoUris = await registerClient(server, root.token, { redirectUris: [REDIRECT, 'https://app.example.org/other'] });
    const moved = await codeFor(twoUris);
    assert.equal(errorOf(await exchangeCode(server, discovery, { ...twoUris, redirectUri: 'https://app.example.org/other' }, moved.code, moved.attempt)), 'invalid_grant');
    const wrongVerifier = await codeFor(client);
    assert.equal(errorOf(await exchangeCode(server, discovery, client, wrongVerifier.code, { ...wrongVerifier.attempt, verifier: 'x'.repeat(43) })), 'invalid_grant');
    const noVerifier = await codeFor(client);
    assert.equal(errorOf(await exchangeCode(server, discovery, client, noVerifier.code, { ...noVerifier.attempt, verifier: undefined })), 'invalid_grant');
    const downgrade = await codeFor(client, { pkce: false });
    assert.equal(errorOf(await exchangeCode(server, discovery, client, downgrade.code, { ...downgrade.attempt, verifier: 'v'.repeat(43) })), 'invalid_grant');
    // And the good case still works.
    const fine = await codeFor(client);
    assert.equal((await exchangeCode(server, discovery, client, fine.code, fine.attempt)).status, 200);
  });

  it('a wrong, missing or stray client secret: 401 invalid_client with WWW-Authenticate', async () => {
    const { attempt, code } = await codeFor(client);
    for (const [target, how] of [
      [{ ...client, clientSecret: 'wrong' }, 'basic'],
      [{ ...client, clientSecret: 'wrong' }, 'post'],
      [client, 'none'],
      [{ ...client, clientId: 'f'.repeat(32) }, 'basic'],
    ] as const) {
      const response = await exchangeCode(server, discovery, target, code, attempt, how);
      assert.equal(response.status, 401, `${how}: ${response.text}`);
      assert.equal(errorOf(response), 'invalid_client');
      assert.match(String(response.headers['www-authenticate']), /^Basic realm="Gatehouse"/);
    }
    const phone = await registerClient(server, root.token, { redirectUris: ['app.example:/cb'], public: true });
    const phoneCode = await codeFor(phone);
    const stray = await exchangeCode(server, discovery, { ...phone, clientSecret: 'made-up' }, phoneCode.code, phoneCode.attempt, 'post');
    assert.equal(errorOf(stray), 'invalid_client');
    // The code was not spent by the refused requests.
    assert.equal((await exchangeCode(server, discovery, client, code, attempt)).status, 200);
  });

  it('other grants and malformed requests: unsupported_grant_type, invalid_request', async () => {
    const form = (body: string, contentType = 'application/x-www-form-urlencoded') => server.request({
      method: 'POST', path: pathOf(discovery.token_endpoint), body,
      headers: { 'content-type': contentType, authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret ?? ''}`).toString('base64')}` },
    });
    assert.equal(errorOf(await form('grant_type=password&username=a&password=b')), 'unsupported_grant_type');
    assert.equal(errorOf(await form('grant_type=client_credentials')), 'unsupported_grant_type');
    assert.equal(errorOf(await form('grant_type=authorization_code&grant_type=refresh_token')), 'invalid_request');
    assert.equal(errorOf(await form('{"grant_type":"authorization_code"}', 'application/json')), 'invalid_request');
    assert.equal(errorOf(await form('grant_type=authorization_code&code=%zz')), 'invalid_request');
    assert.equal((await form('grant_type=authorization_code')).status, 400);
  });

  it('a used refresh token: invalid_grant, and its whole family (the newest token and its access tokens) is revoked', async () => {
    const { tokens } = await signInThrough(server, discovery, client, root.token, { scope: 'openid offline_access' });
    const refresh = (token: string) => tokenRequest(server, discovery, client, { grant_type: 'refresh_token', refresh_token: token });
    const next = (await refresh(tokens.refresh_token ?? '')).json as { refresh_token: string; access_token: string };
    const replay = await refresh(tokens.refresh_token ?? '');
    assert.equal(errorOf(replay), 'invalid_grant');
    assert.equal(errorOf(await refresh(next.refresh_token)), 'invalid_grant');
    assert.equal((await userinfo(server, discovery, next.access_token)).status, 401);
  });

  it('a refresh token presented by another client: invalid_grant, and it is gone', async () => {
    const { tokens } = await signInThrough(server, discovery, client, root.token, { scope: 'openid offline_access' });
    const other = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
    const stolen = await tokenRequest(server, discovery, other, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' });
    assert.equal(errorOf(stolen), 'invalid_grant');
  });

  it('gives no refresh token without offline_access', async () => {
    const { tokens } = await signInThrough(server, discovery, client, root.token, { scope: 'openid profile' });
    assert.equal(tokens.refresh_token, undefined);
  });
});

describe('userinfo refuses', () => {
  it('no token, an unknown one, and an expired one, with RFC 6750 WWW-Authenticate', async () => {
    const { server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER });
    try {
      const discovery = await discover(server);
      const none = await server.request({ path: '/oidc/userinfo' });
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="Gatehouse"');
      const unknown = await userinfo(server, discovery, 'A'.repeat(43));
      assert.equal(unknown.status, 401);
      assert.equal(unknown.headers['www-authenticate'], 'Bearer realm="Gatehouse", error="invalid_token"');
      const client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
      const { tokens } = await signInThrough(server, discovery, client, root.token);
      server.clock.advanceSeconds(3600);
      assert.equal((await userinfo(server, discovery, tokens.access_token)).status, 401);
      assert.equal((await server.request({ path: `/oidc/userinfo?access_token=${tokens.access_token}` })).status, 401);
    } finally {
      await server.close();
    }
  });
});

describe('failures count in the login throttle', () => {
  it('wrong client secrets: 429 for that client from that address, even with the right secret', async () => {
    const { server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER, GATEHOUSE_THROTTLE_USER: '3' });
    try {
      const discovery = await discover(server);
      const client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
      const wrong = { ...client, clientSecret: 'wrong' };
      const attempt = { grant_type: 'authorization_code', code: 'c'.repeat(43), redirect_uri: REDIRECT };
      for (let i = 0; i < 3; i++) assert.equal((await tokenRequest(server, discovery, wrong, attempt)).status, 401);
      const blocked = await tokenRequest(server, discovery, client, attempt);
      assert.equal(blocked.status, 429);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      // Another client is not blocked.
      const other = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
      assert.equal(errorOf(await tokenRequest(server, discovery, other, attempt)), 'invalid_grant');
    } finally {
      await server.close();
    }
  });

  it('unknown codes count against the address: its token requests and its sign-ins get 429', async () => {
    const { server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER, GATEHOUSE_THROTTLE_ADDRESS: '4' });
    try {
      const discovery = await discover(server);
      const client = await registerClient(server, root.token, { redirectUris: [REDIRECT] });
      const guess = (code: string) => tokenRequest(server, discovery, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
      for (let i = 0; i < 4; i++) assert.equal(errorOf(await guess(createHash('sha256').update(String(i)).digest('base64url'))), 'invalid_grant');
      assert.equal((await guess('z'.repeat(43))).status, 429);
      assert.equal((await login(server, root.username, root.password)).status, 429);
    } finally {
      await server.close();
    }
  });
});

// An OAuth error is an error answer like any other (src/app.ts sendError): a body still arriving
// would be parsed as the next request, so the connection closes; a body read to its end keeps it.
describe('an OAuth error answers the connection as every other error does', () => {
  let server: TestServer;
  before(async () => {
    ({ server } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER }));
  });
  after(() => server.close());

  const head = (path: string, contentType: string, length: number): string =>
    `POST ${path} HTTP/1.1\r\nHost: auth.example.org\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n`;

  for (const path of ['/oidc/token', '/oidc/revoke', '/oidc/userinfo']) {
    it(`closes the connection of ${path} refused before its body arrived, and never serves what follows the body`, async () => {
      const body = JSON.stringify({ grant_type: 'authorization_code', token: 't', access_token: 'a' });
      const connection = await openRawConnection(server.port);
      try {
        // Not a form: refused invalid_request before a byte of the body is read.
        await connection.write(head(path, 'application/json', Buffer.byteLength(body)));
        assert.ok(await connection.waitFor((text) => text.endsWith('}')), connection.text());
        const answer = connection.text();
        assert.deepEqual(statusesIn(answer), [400]);
        assert.match(answer, /\r\nConnection: close\r\n/i);
        assert.match(answer, /\r\nCache-Control: no-store\r\n/i);
        assert.match(answer, /\r\nPragma: no-cache\r\n/i);
        assert.equal((JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: string }).error, 'invalid_request');
        await connection.write(`${body}GET /oidc/pipelined-after-oauth-error HTTP/1.1\r\nHost: auth.example.org\r\n\r\n`);
        assert.equal(await connection.waitForClose(10_000), true);
        assert.deepEqual(statusesIn(connection.text()), [400]);
        assert.deepEqual(server.logs.filter((line) => line.includes('pipelined-after-oauth-error')), [], 'the bytes after the unread body were parsed as a request');
        assert.equal(connection.error(), undefined, 'the client was reset instead of closed');
      } finally {
        connection.destroy();
      }
    });
  }

  it('answers a client that writes a whole 10 MB body to the token endpoint before reading: a complete 400, then the server closes', { timeout: 60_000 }, async () => {
    const tenMb = 10_000_000;
    const res = await uploadThenRead(server.port, head('/oidc/token', 'application/json', tenMb), tenMb, { fill: 0x20 });
    assert.equal(res.writeError, undefined, `the upload was cut after ${res.bytesWritten} bytes`);
    assert.equal(res.bytesWritten, tenMb);
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.equal(res.headers['connection'], 'close');
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
    assert.equal((JSON.parse(res.body) as { error: string }).error, 'invalid_request');
    assert.equal(res.closedByServer, true, 'the connection stayed open while the server read the unwanted body');
  });

  it('keeps the connection when the form was read to its end, and answers the next request on it', async () => {
    const form = 'grant_type=password';
    const connection = await openRawConnection(server.port);
    try {
      await connection.write(`${head('/oidc/token', 'application/x-www-form-urlencoded', form.length)}${form}`);
      assert.ok(await connection.waitFor((text) => text.endsWith('}')), connection.text());
      assert.doesNotMatch(connection.text(), /\r\nConnection: close\r\n/i);
      await connection.write('GET /oidc/jwks HTTP/1.1\r\nHost: auth.example.org\r\n\r\n');
      assert.ok(await connection.waitFor((text) => statusesIn(text).length === 2), connection.text());
      assert.deepEqual(statusesIn(connection.text()), [401, 200]);
    } finally {
      connection.destroy();
    }
  });
});
