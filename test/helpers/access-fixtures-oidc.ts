// The access matrix's fixtures for the OpenID Connect rows (docs/contract/oidc.md): the
// matrix's servers run with --public-url, so the provider is on. Each world has one app registered by
// its first administrator; a cell that needs a code, an access token, a refresh token or an id_token
// gets a fresh one for its account first, through the tests' own relying party. The answers are the
// contract's, written from the cell: the token, userinfo and revocation endpoints judge what the app
// sends and never a session, so a machine token's Authorization header in the cell takes the place of
// the app's credentials and is refused in RFC 6749's or RFC 6750's own words.
import assert from 'node:assert/strict';
import type { Action } from '../../src/auth/access.js';
import { CLEARED_COOKIE } from './api.js';
import { isAdministratorPersona, type Cell, type Counted } from './access-model.js';
import type { AccountRun, AccountSetting, AccountVariant, Expected, Prepared, RowFixture } from './access-fixtures.js';
import type { TrackedAccount, World } from './access-world.js';
import {
  authorizationRequest, discover, pathOf, registerClient, tokenRequest, verifyIdToken,
  type AuthorizationAttempt, type Discovery, type RegisteredClient, type TokenSet,
} from './relying-party.js';
import type { TestResponse } from './server.js';

const FORM = Object.freeze({ 'content-type': 'application/x-www-form-urlencoded' });
const REDIRECT_URI = 'https://app.example.test/callback';
const POST_LOGOUT_URI = 'https://app.example.test/signed-out';

interface App {
  readonly discovery: Discovery;
  readonly client: RegisteredClient;
}

/** Per world: its app, and an app a removeClient cell may remove. */
const apps = new WeakMap<World, App>();
const spares = new WeakMap<World, string>();
/** What the cell's preparation made that its answer checks against (one cell at a time per world). */
const pendingNonces = new WeakMap<World, string>();
const pendingRefreshTokens = new WeakMap<World, string>();

async function appOf(world: World): Promise<App> {
  let app = apps.get(world);
  if (app === undefined) {
    const discovery = await discover(world.server);
    const client = await registerClient(world.server, world.fixtureSession(world.root), {
      redirectUris: [REDIRECT_URI], postLogoutRedirectUris: [POST_LOGOUT_URI],
    });
    app = { discovery, client };
    apps.set(world, app);
  }
  return app;
}

/** A code for `account`, from an authorization request its two-factor session makes. */
async function codeFor(world: World, account: TrackedAccount, scope: string): Promise<{ app: App; attempt: AuthorizationAttempt; code: string }> {
  const app = await appOf(world);
  const attempt = authorizationRequest(app.discovery, app.client, { scope });
  const res = await world.send({ path: pathOf(attempt.url), token: world.fixtureSession(account) });
  assert.equal(res.status, 303, res.text);
  const code = new URL(String(res.headers.location)).searchParams.get('code');
  assert.ok(code !== null, `no code in ${String(res.headers.location)}`);
  return { app, attempt, code };
}

/** A token set for `account`, as the app receives it. */
async function tokensFor(world: World, account: TrackedAccount, scope: string): Promise<{ app: App; tokens: TokenSet }> {
  const { app, attempt, code } = await codeFor(world, account, scope);
  const res = await tokenRequest(world.server, app.discovery, app.client, {
    grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: attempt.verifier ?? '',
  }, 'post');
  assert.equal(res.status, 200, res.text);
  return { app, tokens: res.json as TokenSet };
}

/**
 * RP-initiated logout with the caller's own id_token as the hint: a session the row counts (the
 * cookie) is signed out at once and sent back to the app; with none counted, the hint signs nothing
 * out and the person gets the page with a "Sign out" button (docs/contract/links-and-sessions.md "RP logout").
 */
function logoutFixture(isForm: boolean): RowFixture {
  const page = isForm ? '303 to the "Sign out" page' : '200 the "Sign out" page';
  return {
    variants: [withAccounts(
      (_cell, caller) => ({
        summary: caller === undefined ? `${page}, nothing signed out` : '303 back to the app, the session ended',
        async check(res, run) {
          const token = run.material.sessionToken;
          if (caller === undefined) {
            // A form is sent on to the page at the GET address, with what it returns to and never the hint.
            if (isForm) {
              assert.equal(res.status, 303, res.text);
              const { client } = await appOf(run.world);
              const query = new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'matrix-state' });
              assert.equal(res.headers.location, `logout?${query.toString()}`);
            } else {
              assert.equal(res.status, 200, res.text);
              assert.match(res.text, />Sign out</);
            }
            assert.equal(res.headers['set-cookie'], undefined);
          } else {
            assert.equal(res.status, 303, res.text);
            assert.equal(res.headers.location, `${POST_LOGOUT_URI}?state=matrix-state`);
            assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
          }
          // A live token the row does not count (`?token=`) is left alone.
          if (token !== undefined) assert.equal(await isSessionLive(run.world, token), caller === undefined);
        },
      }),
      async ({ world, caller }) => {
        const { tokens } = await tokensFor(world, caller, 'openid');
        const query = new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'matrix-state' });
        const options: Prepared['options'] = isForm
          ? { method: 'POST', path: '/oidc/logout', headers: FORM, body: query.toString() }
          : { path: `/oidc/logout?${query.toString()}` };
        return { options };
      },
    )],
  };
}

/** What Authorization header the cell's credential puts on the request, in place of the app's. */
function headerOf(cell: Cell): 'none' | 'Bearer' | 'Basic' {
  const { credential } = cell;
  if (credential.carrier === 'machine') return credential.scheme;
  return credential.carrier === 'dead machine token' ? 'Bearer' : 'none';
}

/** An RFC 6749 section 5.2 (or RFC 6750 section 3) error answer, with its status. */
function oauthError<R>(status: number, error: string, challenge?: RegExp): Expected<R> {
  return {
    summary: `${status} ${error}`,
    check(res) {
      assert.equal(res.status, status, res.text);
      assert.equal((res.json as { error?: unknown }).error, error, res.text);
      if (challenge !== undefined) assert.match(String(res.headers['www-authenticate']), challenge);
    },
  };
}

/**
 * The app's credentials beside the cell's Authorization header: a Bearer header is no client
 * authentication (invalid_client), a Basic one a second method beside client_secret_post (invalid_request).
 */
function clientRefusal<R>(cell: Cell): Expected<R> | undefined {
  const header = headerOf(cell);
  if (header === 'Bearer') return oauthError(401, 'invalid_client', /^Basic /);
  if (header === 'Basic') return oauthError(400, 'invalid_request');
  return undefined;
}

const isTwoFactor = (amr: readonly string[]): boolean => amr.includes('otp') || (amr.includes('hwk') && amr.includes('user'));

/**
 * Authorize: with no session counted, the sign-in page, which comes back; with a session, the code
 * sent to the app, unless --require-mfa-for-admins sends an administrator's one-factor session to the
 * sign-in page's code step (or to set one up).
 */
function authorizeAnswer(cell: Cell, caller: Counted | undefined): Expected<AccountRun> {
  const toSignIn = (query: Record<string, string>, summary: string): Expected<AccountRun> => ({
    summary: `303 ${summary}`,
    check(res) {
      assert.equal(res.status, 303, res.text);
      assert.equal(res.headers['set-cookie'], undefined);
      const location = String(res.headers.location);
      assert.ok(location.startsWith('../login?'), location);
      const parameters = new URL(location, 'http://gatehouse.test/oidc/authorize').searchParams;
      for (const [name, value] of Object.entries(query)) assert.equal(parameters.get(name), value, location);
      assert.match(parameters.get('rd') ?? '', /^oidc\/authorize\?response_type=code&/);
    },
  });
  if (caller?.via !== 'session') return toSignIn({}, 'to the sign-in page, which comes back');
  const account = cell.account;
  if (
    cell.settings.isTwoFactorRequiredOfAdministrators && account !== undefined &&
    isAdministratorPersona(account.persona) && !isTwoFactor(caller.amr)
  ) {
    const step = account.factors === 'no second factor' ? 'setup' : 'code';
    return toSignIn({ mfa: step }, `to the sign-in page's ${step} step`);
  }
  return {
    summary: '303 the code sent to the app',
    check(res) {
      assert.equal(res.status, 303, res.text);
      const location = new URL(String(res.headers.location));
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
      assert.match(location.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.equal(location.searchParams.get('state'), 'matrix-state');
    },
  };
}

/** The authorization request of the world's app, as a query (GET) or a form body (POST). */
async function authorizeQuery(world: World): Promise<string> {
  const { client } = await appOf(world);
  return new URLSearchParams({
    response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid profile', state: 'matrix-state',
  }).toString();
}

/** Whether a session token still opens its account. */
async function isSessionLive(world: World, token: string): Promise<boolean> {
  const res = await world.send({ path: '/api/auth/account', token });
  assert.ok(res.status === 200 || res.status === 401, `GET /api/auth/account: ${res.status} ${res.text}`);
  return res.status === 200;
}

const withAccounts = (answer: AccountVariant['answer'], request: (run: AccountSetting) => Promise<Prepared> | Prepared): AccountVariant =>
  ({ world: 'with accounts', label: '', answer, request });

const jsonAnswer = (summary: string, check: (res: TestResponse, run: AccountRun) => void | Promise<void>): Expected<AccountRun> => ({
  summary,
  async check(res, run) {
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    await check(res, run);
  },
});

export const OIDC_FIXTURES: { readonly [A in Action]?: RowFixture } = {
  oidcDiscovery: {
    variants: [withAccounts(
      () => jsonAnswer('200 the discovery document', (res) => {
        const body = res.json as Record<string, unknown>;
        assert.equal(body['issuer'], 'http://localhost:3000');
        assert.equal(body['token_endpoint'], 'http://localhost:3000/oidc/token');
      }),
      () => ({ options: { path: '/.well-known/openid-configuration' } }),
    )],
  },
  oidcKeys: {
    variants: [withAccounts(
      () => jsonAnswer('200 the public keys', (res) => {
        const { keys } = res.json as { keys: Array<Record<string, unknown>> };
        assert.deepEqual(keys.map((key) => key['alg']).sort(), ['ES256', 'RS256']);
        for (const key of keys) assert.equal(key['d'], undefined);
      }),
      () => ({ options: { path: '/oidc/jwks' } }),
    )],
  },
  oidcAuthorize: {
    variants: [withAccounts(
      authorizeAnswer,
      async ({ world }) => ({ options: { path: `/oidc/authorize?${await authorizeQuery(world)}` } }),
    )],
  },
  oidcAuthorizeForm: {
    variants: [withAccounts(
      authorizeAnswer,
      async ({ world }) => ({ options: { method: 'POST', path: '/oidc/authorize', headers: FORM, body: await authorizeQuery(world) } }),
    )],
  },
  oidcToken: {
    variants: [withAccounts(
      (cell) => clientRefusal(cell) ?? jsonAnswer('200 the tokens, the id_token signed for the app', async (res, run) => {
        const tokens = res.json as TokenSet;
        assert.equal(tokens.token_type, 'Bearer');
        assert.equal(res.headers['cache-control'], 'no-store');
        const { discovery, client } = await appOf(run.world);
        const claims = await verifyIdToken(run.world.server, discovery, tokens.id_token, client.clientId, pendingNonces.get(run.world));
        assert.equal(claims['preferred_username'], run.caller.username);
      }),
      async ({ world, caller }) => {
        const { app, attempt, code } = await codeFor(world, caller, 'openid profile');
        pendingNonces.set(world, attempt.nonce);
        const form = new URLSearchParams({
          grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: attempt.verifier ?? '',
          client_id: app.client.clientId, client_secret: app.client.clientSecret ?? '',
        });
        return { options: { method: 'POST', path: '/oidc/token', headers: FORM, body: form.toString() } };
      },
    )],
  },
  oidcUserinfo: {
    variants: [withAccounts(
      // Not the app's access token in the header: the 401 of RFC 6750 section 3.1.
      (cell) => headerOf(cell) === 'none'
        ? jsonAnswer('200 the claims', userinfoClaims)
        : oauthError(401, 'invalid_token', /^Bearer realm="Gatehouse", error="invalid_token"$/),
      async ({ world, caller }) => {
        const { tokens } = await tokensFor(world, caller, 'openid profile');
        return { options: { path: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } } };
      },
    )],
  },
  oidcUserinfoForm: {
    variants: [withAccounts(
      // A header beside the form's access_token: two methods at once (RFC 6750 section 2).
      (cell) => headerOf(cell) === 'none' ? jsonAnswer('200 the claims', userinfoClaims) : oauthError(400, 'invalid_request'),
      async ({ world, caller }) => {
        const { tokens } = await tokensFor(world, caller, 'openid profile');
        const body = new URLSearchParams({ access_token: tokens.access_token }).toString();
        return { options: { method: 'POST', path: '/oidc/userinfo', headers: FORM, body } };
      },
    )],
  },
  oidcRevoke: {
    variants: [withAccounts(
      (cell) => clientRefusal(cell) ?? jsonAnswer('200 the refresh token revoked', async (res, run) => {
        assert.deepEqual(res.json, {});
        const { discovery, client } = await appOf(run.world);
        const refreshed = await tokenRequest(run.world.server, discovery, client, { grant_type: 'refresh_token', refresh_token: pendingRefreshTokens.get(run.world) ?? '' }, 'post');
        assert.equal(refreshed.status, 400, refreshed.text);
        assert.equal((refreshed.json as { error?: unknown }).error, 'invalid_grant');
      }),
      async ({ world, caller }) => {
        const { app, tokens } = await tokensFor(world, caller, 'openid offline_access');
        assert.ok(tokens.refresh_token !== undefined, 'offline_access gives a refresh token');
        pendingRefreshTokens.set(world, tokens.refresh_token);
        const form = new URLSearchParams({ token: tokens.refresh_token, client_id: app.client.clientId, client_secret: app.client.clientSecret ?? '' });
        return { options: { method: 'POST', path: '/oidc/revoke', headers: FORM, body: form.toString() } };
      },
    )],
  },
  ...Object.fromEntries((['oidcTokenPreflight', 'oidcUserinfoPreflight', 'oidcRevokePreflight'] as const).map((action) => [action, {
    variants: [withAccounts(
      () => ({
        summary: '204 the app\'s origin allowed, no credentials',
        check(res) {
          assert.equal(res.status, 204, res.text);
          assert.equal(res.headers['access-control-allow-origin'], 'https://app.example.test');
          assert.equal(res.headers['access-control-allow-credentials'], undefined);
        },
      }),
      async ({ world }) => {
        await appOf(world);
        const path = { oidcTokenPreflight: '/oidc/token', oidcUserinfoPreflight: '/oidc/userinfo', oidcRevokePreflight: '/oidc/revoke' }[action];
        return { options: { method: 'OPTIONS', path, headers: { origin: 'https://app.example.test', 'access-control-request-method': 'POST' } } };
      },
    )],
  }])),
  oidcLogout: logoutFixture(false),
  oidcLogoutForm: logoutFixture(true),
  listClients: {
    variants: [withAccounts(
      () => jsonAnswer('200 the apps', async (res, run) => {
        assert.ok(Array.isArray(res.json), res.text);
        const { client } = await appOf(run.world);
        assert.ok(res.json.some((entry: { clientId?: unknown }) => entry.clientId === client.clientId));
        for (const entry of res.json as Array<Record<string, unknown>>) assert.equal(entry['secretDigest'], undefined);
      }),
      async ({ world }) => {
        await appOf(world);
        return { options: { path: '/api/auth/clients' } };
      },
    )],
  },
  addClient: {
    variants: [withAccounts(
      () => jsonAnswer('200 the app, its secret shown once', (res) => {
        const body = res.json as Record<string, unknown>;
        assert.match(String(body['clientId']), /^[0-9a-f]{32}$/);
        assert.match(String(body['clientSecret']), /^[A-Za-z0-9_-]{43}$/);
      }),
      () => ({
        options: { method: 'POST', path: '/api/auth/clients', body: { name: `matrix-${Math.random().toString(36).slice(2)}`, redirectUris: [REDIRECT_URI] } },
      }),
    )],
  },
  updateClient: {
    variants: [withAccounts(
      () => jsonAnswer('200 the app renamed, its id kept', async (res, run) => {
        const body = res.json as Record<string, unknown>;
        assert.equal(body['clientId'], (await appOf(run.world)).client.clientId);
        assert.equal(body['endedRefreshTokens'], 0);
      }),
      async ({ world }) => {
        const { client } = await appOf(world);
        return { options: { method: 'PATCH', path: `/api/auth/clients/${client.clientId}`, body: { name: `matrix-${Math.random().toString(36).slice(2)}` } } };
      },
    )],
  },
  removeClient: {
    variants: [withAccounts(
      () => jsonAnswer('200 the app removed', (res) => assert.deepEqual(res.json, {})),
      async ({ world }) => {
        // One spare app per world, made when none is left: refused cells leave it for the next.
        let clientId = spares.get(world);
        if (clientId === undefined) {
          clientId = (await registerClient(world.server, world.fixtureSession(world.root), { redirectUris: [REDIRECT_URI] })).clientId;
          spares.set(world, clientId);
        }
        return {
          options: { method: 'DELETE', path: `/api/auth/clients/${clientId}` },
          after(res) {
            if (res.status === 200) spares.delete(world);
          },
        };
      },
    )],
  },
  updateProfile: {
    variants: [withAccounts(
      () => jsonAnswer('200 the name and e-mail address set', (res) => assert.deepEqual(res.json, {})),
      ({ caller }) => ({
        options: { method: 'PATCH', path: '/api/auth/account', body: { name: `Matrix ${caller.username}`, email: `${caller.username}@example.test` } },
      }),
    )],
  },
};


function userinfoClaims(res: TestResponse, run: AccountRun): void {
  const claims = res.json as Record<string, unknown>;
  assert.match(String(claims['sub']), /^[A-Za-z0-9_-]{22}$/);
  assert.equal(claims['preferred_username'], run.caller.username);
  assert.equal(res.headers['cache-control'], 'no-store');
}
