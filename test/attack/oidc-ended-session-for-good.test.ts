// What a session ended stays ended (docs/contract/links-and-sessions.md "What ends with a session"):
// a refresh token an app got through a session must not come back once that session's cookie would
// have expired on its own, nor after a restart. A thief with a stolen cookie gets a refresh token
// through a public app; the owner ends that session; a week later the token must still be refused.
// Every way a session ends counts: its owner or an administrator ending it, signing out (GET
// {base}/logout, a browser's GET /api/auth/logout, an app's RP-initiated logout), and the 64-session
// limit ending the oldest.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { claimsOf, createUser, login, TOKEN_TTL_SECONDS, type TestUser } from '../helpers/api.js';
import {
  discover, registerClient, signInThrough, tokenRequest, userinfo, type Discovery, type RegisteredClient, type TokenSet,
} from '../helpers/relying-party.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const SETTINGS = { GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' };
/** Past the cookie window of every session made before the restart. */
const A_WEEK_AND_A_DAY = TOKEN_TTL_SECONDS + 86_400;

describe('a refresh token got through a session that ended stays refused, past its cookie window and a restart', () => {
  let dataDir = '';
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let app: RegisteredClient;
  /** The refresh token each way's ended session got, and the control's (a session that expired on its own). */
  const held = new Map<string, TokenSet>();
  /** What the thief's refresh answered at once, before the restart. */
  let refusedAtOnce: TestResponse | undefined;
  let accessAtOnce: TestResponse | undefined;

  const signIn = async (user: TestUser, headers?: Record<string, string>): Promise<string> =>
    (await login(server, user.username, user.password, headers)).cookieToken ?? '';
  const tokensThrough = async (cookie: string): Promise<TokenSet> =>
    (await signInThrough(server, discovery, app, cookie, { scope: 'openid offline_access' })).tokens;
  const sessionIdOf = (cookie: string): string => String(claimsOf(cookie)['ses']);
  const ok = (response: TestResponse, status = 200): void => assert.equal(response.status, status, response.text);

  /** Each way a session ends: given the account, its session's cookie and that session's tokens, and another session of the owner. */
  const ways: ReadonlyArray<readonly [string, (user: TestUser, cookie: string, tokens: TokenSet, owner: string) => Promise<void>]> = [
    ['its owner ends it', async (_user, cookie, _tokens, owner) =>
      ok(await server.request({ method: 'DELETE', path: `/api/auth/account/sessions/${sessionIdOf(cookie)}`, token: owner }))],
    ['an administrator ends it', async (user, cookie) =>
      ok(await server.request({ method: 'DELETE', path: `/api/auth/users/${user.username}/sessions/${sessionIdOf(cookie)}`, token: root.token }))],
    ['it signs out at {base}/logout', async (_user, cookie) =>
      ok(await server.request({ path: '/logout', token: cookie, headers: { accept: 'text/html', 'sec-fetch-site': 'same-origin' } }), 303)],
    ['a browser signs it out at /api/auth/logout', async (_user, cookie) =>
      ok(await server.request({ path: '/api/auth/logout', token: cookie, headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } }))],
    ['an app signs it out (RP-initiated logout with its hint)', async (_user, cookie, tokens) =>
      ok(await server.request({ path: `/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.id_token }).toString()}`, token: cookie, headers: { accept: 'text/html' } }))],
    ['64 later sign-ins end it, the oldest', async (user) => {
      for (let i = 0; i < 64; i++) await signIn(user);
    }],
  ];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-ended-'));
    server = await startTestServer(SETTINGS, { dataDir });
    root = await createUser(server, undefined, { prefix: 'root', level: 10 });
    discovery = await discover(server);
    app = await registerClient(server, root.token, { public: true, redirectUris: ['https://app.example.org/cb'] });

    // The report's case: two families through a stolen cookie; the owner ends that session.
    const victim = await createUser(server, root.token);
    const stolen = await signIn(victim);
    const owner = await signIn(victim);
    const first = await tokensThrough(stolen);
    held.set('the thief\'s', await tokensThrough(stolen));
    ok(await server.request({ method: 'DELETE', path: `/api/auth/account/sessions/${sessionIdOf(stolen)}`, token: owner }));
    refusedAtOnce = await tokenRequest(server, discovery, app, { grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '' }, 'none');
    accessAtOnce = await userinfo(server, discovery, first.access_token);

    for (const [how, end] of ways) {
      const user = await createUser(server, root.token);
      const cookie = await signIn(user);
      const tokens = await tokensThrough(cookie);
      held.set(how, tokens);
      await end(user, cookie, tokens, await signIn(user));
    }
    const control = await createUser(server, root.token);
    held.set('control', await tokensThrough(await signIn(control)));

    await server.close();
    server = await startTestServer(SETTINGS, { dataDir });
    server.clock.advanceSeconds(A_WEEK_AND_A_DAY);
  });
  after(async () => {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const refresh = (name: string): Promise<TestResponse> =>
    tokenRequest(server, discovery, app, { grant_type: 'refresh_token', refresh_token: held.get(name)?.refresh_token ?? '' }, 'none');

  it('refuses the thief\'s refresh token and access token at once', () => {
    assert.equal((refusedAtOnce?.json as { error?: string } | undefined)?.error, 'invalid_grant', refusedAtOnce?.text);
    assert.equal(accessAtOnce?.status, 401);
  });

  it('still refuses the thief\'s other refresh token a week later, after a restart: nothing answers', async () => {
    const refreshed = await refresh('the thief\'s');
    assert.equal(refreshed.status, 400, refreshed.text);
    assert.equal((refreshed.json as { error?: string }).error, 'invalid_grant');
  });

  for (const [how] of ways) {
    it(`ends the refresh token for good when ${how}`, async () => {
      const refreshed = await refresh(how);
      assert.equal(refreshed.status, 400, refreshed.text);
      assert.equal((refreshed.json as { error?: string }).error, 'invalid_grant');
    });
  }

  it('keeps a refresh token whose session expired on its own (control): userinfo answers', async () => {
    const refreshed = await refresh('control');
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal((await userinfo(server, discovery, (refreshed.json as TokenSet).access_token)).status, 200);
  });
});
