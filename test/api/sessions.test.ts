// Sessions people can see and end (docs/contract/links-and-sessions.md "Sessions"): every
// sign-in is a session record; its owner (any session of the account) and administrators list and end
// them; an ended session's cookie and every ?token= copy are refused everywhere, the gate included,
// at once and after a restart. Driven over real HTTP with the test clock.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { createTokenCodec } from '../../src/auth/jwt.js';
import { totpCode } from '../../src/totp/codes.js';
import { LAST_SEEN_RESOLUTION_SECONDS } from '../../src/auth/session-records.js';
import { MAX_SESSIONS_PER_ACCOUNT } from '../../src/store/session-file.js';
import { CLEARED_COOKIE, createUser, login, startPopulatedServer, verify, type TestUser } from '../helpers/api.js';
import { addPasskey, newAuthenticator, signIn as passkeySignIn } from '../helpers/passkeys.js';
import { FLAGS } from '../helpers/soft-authenticator.js';
import { startTestServer, TEST_SECRET, type TestResponse, type TestServer } from '../helpers/server.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

interface SessionView {
  id: string;
  current: boolean;
  createdAt: number;
  lastSeenAt: number;
  address: string;
  browser: string;
  amr: string[];
}

const claimsOf = (token: string | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from((token ?? '').split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
const codeOf = (response: TestResponse): unknown => (response.json as { code?: unknown } | undefined)?.code;

async function signIn(server: TestServer, user: TestUser, userAgent = FIREFOX): Promise<string> {
  const response = await login(server, user.username, user.password, { 'user-agent': userAgent });
  assert.equal(response.status, 200, response.text);
  assert.ok(response.cookieToken !== undefined);
  return response.cookieToken;
}

async function sessionsOf(server: TestServer, token: string): Promise<SessionView[]> {
  const response = await server.request({ path: '/api/auth/account/sessions', token });
  assert.equal(response.status, 200, response.text);
  return response.json as SessionView[];
}

const endSession = (server: TestServer, token: string, id: string): Promise<TestResponse> =>
  server.request({ method: 'DELETE', path: `/api/auth/account/sessions/${encodeURIComponent(id)}`, token });

/** Every way a session token is used: the Flood verify, the account API, the gate by cookie and by ?token=. */
async function assertRefusedEverywhere(server: TestServer, token: string): Promise<void> {
  assert.equal((await verify(server, token)).status, 401, 'verify');
  assert.equal((await server.request({ path: `/api/auth/verify?token=${token}` })).status, 401, 'verify ?token=');
  assert.equal((await server.request({ path: '/api/auth/account', token })).status, 401, 'account');
  assert.equal((await server.request({ path: '/api/auth/forward', token })).status, 401, 'gate, cookie');
  assert.equal((await server.request({ path: `/api/auth/forward?token=${token}` })).status, 401, 'gate, ?token=');
  const uri = { 'x-original-uri': `/app/?token=${token}` };
  assert.equal((await server.request({ path: '/api/auth/forward', headers: uri })).status, 401, 'gate, the original URI');
}

async function assertOpen(server: TestServer, token: string): Promise<void> {
  assert.equal((await verify(server, token)).status, 200, 'verify');
  assert.equal((await server.request({ path: '/api/auth/forward', token })).status, 200, 'gate');
}

describe('sessions an account can see and end', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('records every sign-in: when, from where, which browser, which factors; the caller\'s own marked current', async () => {
    const user = await createUser(server, root.token);
    const startedMs = server.clock.now();
    const laptop = await signIn(server, user, FIREFOX);
    server.clock.advanceSeconds(5);
    const phone = await signIn(server, user, SAFARI_IPHONE);
    const listed = await sessionsOf(server, laptop);
    // The registration handed out a session too; newest first.
    assert.deepEqual(listed.map((session) => session.browser), ['Safari on iOS', 'Firefox on Linux', 'Unknown']);
    for (const session of listed) {
      assert.deepEqual(Object.keys(session).sort(), ['address', 'amr', 'browser', 'createdAt', 'current', 'id', 'lastSeenAt']);
      assert.equal(session.address, '127.0.0.1');
      assert.deepEqual(session.amr, ['pwd']);
      assert.match(session.id, /^[A-Za-z0-9_-]{22}$/);
    }
    assert.deepEqual(listed.map((session) => session.current), [false, true, false]);
    assert.equal(listed[1]?.createdAt, Math.floor(startedMs / 1000) * 1000);
    assert.equal(listed[0]?.createdAt, listed[0]?.lastSeenAt);
    assert.deepEqual((await sessionsOf(server, phone)).map((session) => session.current), [true, false, false]);
    assert.equal(claimsOf(phone)['ses'], listed[0]?.id, 'the token carries its session id');
  });

  it('ends another session: its cookie and every ?token= copy are refused everywhere at once; the others go on', async () => {
    const user = await createUser(server, root.token);
    const laptop = await signIn(server, user);
    const phone = await signIn(server, user, SAFARI_IPHONE);
    const phoneId = String(claimsOf(phone)['ses']);
    const ended = await endSession(server, laptop, phoneId);
    assert.equal(ended.status, 200, ended.text);
    assert.deepEqual(ended.json, {});
    assert.equal(ended.headers['set-cookie'], undefined, 'ending another session leaves the caller\'s cookie');
    await assertRefusedEverywhere(server, phone);
    await assertOpen(server, laptop);
    assert.ok(!(await sessionsOf(server, laptop)).some((session) => session.id === phoneId));
  });

  it('ends the caller\'s own session, clearing its cookie', async () => {
    const user = await createUser(server, root.token);
    const token = await signIn(server, user);
    const ended = await endSession(server, token, String(claimsOf(token)['ses']));
    assert.equal(ended.status, 200, ended.text);
    assert.deepEqual(ended.headers['set-cookie'], [CLEARED_COOKIE]);
    await assertRefusedEverywhere(server, token);
    await assertOpen(server, user.token);
  });

  it('answers 404 SESSION_NOT_FOUND for an unknown, malformed, already ended or another account\'s session id, ending nothing', async () => {
    const user = await createUser(server, root.token);
    const other = await createUser(server, root.token);
    const token = await signIn(server, user);
    const othersToken = await signIn(server, other);
    const mine = String(claimsOf(token)['ses']);
    await endSession(server, user.token, mine);
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', 'short', '%2E%2E', `${mine}x`, mine, String(claimsOf(othersToken)['ses'])]) {
      const response = await endSession(server, user.token, id);
      assert.equal(response.status, 404, `${id}: ${response.text}`);
      assert.equal(codeOf(response), 'SESSION_NOT_FOUND');
    }
    await assertOpen(server, othersToken);
  });

  it('reads a path\'s account and session id percent-decoded once: a bad escape names nothing (400, 404)', async () => {
    const user = await createUser(server, root.token);
    const token = await signIn(server, user);
    const id = String(claimsOf(token)['ses']);
    const name = encodeURIComponent(user.username);
    const request = (method: string, path: string) => server.request({ method, path: `/api/auth/users/${path}`, token: root.token });
    // The judge answers first: a stranger learns nothing of the path.
    assert.equal((await server.request({ path: '/api/auth/users/%zz/sessions' })).status, 401);
    for (const bad of ['%zz', '%E0%A4', '..', '%00']) {
      const listed = await request('GET', `${bad}/sessions`);
      assert.equal(listed.status, 400, `${bad}: ${listed.text}`);
      assert.equal(codeOf(listed), 'INVALID_PATH_PARAMETER');
      assert.equal(codeOf(await request('DELETE', `${bad}/sessions/${id}`)), 'INVALID_PATH_PARAMETER');
      const ended = await request('DELETE', `${name}/sessions/${id}${bad}`);
      assert.equal(ended.status, 404, `${bad}: ${ended.text}`);
      assert.equal(codeOf(ended), 'SESSION_NOT_FOUND');
    }
    await assertOpen(server, token);
    // An escaped character is the character: %41 is A.
    const escaped = [...id].map((character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`).join('');
    assert.equal((await request('DELETE', `${name}/sessions/${escaped}`)).status, 200);
    await assertRefusedEverywhere(server, token);
  });

  it('takes a session cookie only: no session, or a ?token= alone, is 401', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await server.request({ path: '/api/auth/account/sessions' })).status, 401);
    assert.equal((await server.request({ path: `/api/auth/account/sessions?token=${user.token}` })).status, 401);
    const id = String(claimsOf(user.token)['ses']);
    const byUrl = await server.request({ method: 'DELETE', path: `/api/auth/account/sessions/${id}?token=${user.token}` });
    assert.equal(byUrl.status, 401);
    await assertOpen(server, user.token);
  });

  it('refuses a cross-site request to end a session', async () => {
    const user = await createUser(server, root.token);
    const token = await signIn(server, user);
    const response = await server.request({
      method: 'DELETE', path: `/api/auth/account/sessions/${String(claimsOf(token)['ses'])}`, token: user.token,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(response.status, 403);
    await assertOpen(server, token);
  });

  it('a password change from one session ends the others and carries that one over (same id, new cookie)', async () => {
    const user = await createUser(server, root.token);
    const laptop = await signIn(server, user);
    const phone = await signIn(server, user, SAFARI_IPHONE);
    const changed = await server.request({
      method: 'POST', path: '/api/auth/account/password', token: laptop, body: { password: user.password, newPassword: 'a-new-password-1' },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.ok(changed.cookieToken !== undefined);
    assert.equal(claimsOf(changed.cookieToken)['ses'], claimsOf(laptop)['ses']);
    await assertRefusedEverywhere(server, phone);
    await assertRefusedEverywhere(server, laptop);
    const listed = await sessionsOf(server, changed.cookieToken);
    assert.deepEqual(listed.map((session) => [session.id, session.current]), [[claimsOf(laptop)['ses'], true]]);
  });

  it('log out everywhere ends every session; the list then holds only sessions begun after it', async () => {
    const user = await createUser(server, root.token);
    const laptop = await signIn(server, user);
    const out = await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: laptop, body: {} });
    assert.equal(out.status, 200, out.text);
    await assertRefusedEverywhere(server, laptop);
    const fresh = await signIn(server, user);
    assert.deepEqual((await sessionsOf(server, fresh)).map((session) => session.current), [true]);
  });

  it(`keeps at most ${MAX_SESSIONS_PER_ACCOUNT} live sessions per account: a sign-in beyond ends the oldest`, async () => {
    const user = await createUser(server, root.token);
    const tokens = [user.token];
    for (let index = 1; index < MAX_SESSIONS_PER_ACCOUNT; index++) {
      server.clock.advanceSeconds(1);
      tokens.push(await signIn(server, user));
    }
    assert.equal((await sessionsOf(server, user.token)).length, MAX_SESSIONS_PER_ACCOUNT);
    server.clock.advanceSeconds(1);
    const newest = await signIn(server, user);
    const listed = await sessionsOf(server, newest);
    assert.equal(listed.length, MAX_SESSIONS_PER_ACCOUNT);
    await assertRefusedEverywhere(server, user.token);
    await assertOpen(server, tokens[1] ?? '');
    assert.ok(server.logs.some((line) => line.includes('sessions_ended_by_limit')));
  });

  it(`writes lastSeenAt at most once per session per ${LAST_SEEN_RESOLUTION_SECONDS} seconds`, async () => {
    const user = await createUser(server, root.token);
    const token = await signIn(server, user);
    const [before] = await sessionsOf(server, token);
    server.clock.advanceSeconds(LAST_SEEN_RESOLUTION_SECONDS - 1);
    await verify(server, token);
    assert.equal((await sessionsOf(server, token))[0]?.lastSeenAt, before?.lastSeenAt);
    server.clock.advanceSeconds(1);
    await verify(server, token);
    // The write is not awaited by the request that caused it: ask until it is in.
    let seen = before?.lastSeenAt;
    for (let attempt = 0; attempt < 100 && seen === before?.lastSeenAt; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      seen = (await sessionsOf(server, token))[0]?.lastSeenAt;
    }
    assert.equal(seen, (before?.lastSeenAt ?? 0) + LAST_SEEN_RESOLUTION_SECONDS * 1000);
  });

  it('records which factors made each session: a code, a passkey (with or without user verification)', async () => {
    const user = await createUser(server, root.token);
    const begun = await server.request({ method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
    const seed = decodeBase32((begun.json as { secret: string }).secret);
    assert.ok(seed !== undefined);
    const confirmed = await server.request({ method: 'POST', path: '/api/auth/account/totp/confirm', token: user.token, body: { code: totpCode(seed, server.clock.now()) } });
    assert.equal(confirmed.status, 200, confirmed.text);
    // Confirming carried the session over, now with a code.
    assert.deepEqual((await sessionsOf(server, confirmed.cookieToken ?? '')).map((session) => session.amr), [['pwd', 'otp']]);
    server.clock.advanceSeconds(30);
    const withCode = await server.request({
      method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password, code: totpCode(seed, server.clock.now()) },
    });
    assert.equal(withCode.status, 200, withCode.text);
    const authenticator = newAuthenticator();
    const added = await addPasskey(server, withCode.cookieToken ?? '', user.password, authenticator);
    assert.equal(added.status, 200, added.text);
    const verified = await passkeySignIn(server, authenticator);
    const present = await passkeySignIn(server, authenticator, { overrides: { flags: FLAGS.UP } });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(present.status, 200, present.text);
    const listed = await sessionsOf(server, verified.cookieToken ?? '');
    assert.deepEqual(listed.map((session) => session.amr), [['hwk'], ['hwk', 'user'], ['pwd', 'otp']]);
  });

  it('records a registration that hands out a cookie, not one with ?cookie=false', async () => {
    const made = await server.request({
      method: 'POST', path: '/api/auth/register?cookie=false', token: root.token,
      body: { username: `quiet-${process.pid}`, password: 'quiet-password', level: 5, client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' } },
    });
    assert.equal(made.status, 200, made.text);
    const signedIn = await login(server, `quiet-${process.pid}`, 'quiet-password');
    assert.equal((await sessionsOf(server, signedIn.cookieToken ?? '')).length, 1);
    const user = await createUser(server, root.token);
    assert.equal((await sessionsOf(server, user.token)).length, 1);
  });

  it('keeps a token without a session id working until a credential change or log out everywhere', async () => {
    const user = await createUser(server, root.token);
    const found = server.running.store.find(user.username);
    assert.ok(found !== undefined);
    const iat = Math.floor(server.clock.now() / 1000);
    const older = createTokenCodec(Buffer.from(TEST_SECRET)).sign({ username: user.username, iat, exp: iat + 3600, sid: found.sessionKey });
    await assertOpen(server, older);
    assert.equal((await sessionsOf(server, older)).every((session) => !session.current), true);
    await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: older, body: {} });
    await assertRefusedEverywhere(server, older);
  });

  it('shows administrators each account\'s last sign-in and sessions, and lets them end one', async () => {
    const user = await createUser(server, root.token);
    const token = await signIn(server, user, SAFARI_IPHONE);
    const path = `/api/auth/users/${encodeURIComponent(user.username)}`;
    const summary = await server.request({ path, token: root.token });
    assert.equal((summary.json as { lastSignInAt?: unknown }).lastSignInAt, Math.floor(server.clock.now() / 1000) * 1000);
    const listed = await server.request({ path: `${path}/sessions`, token: root.token });
    assert.equal(listed.status, 200, listed.text);
    const sessions = listed.json as SessionView[];
    assert.deepEqual(sessions.map((session) => [session.browser, session.current]), [['Safari on iOS', false], ['Unknown', false]]);
    const ended = await server.request({ method: 'DELETE', path: `${path}/sessions/${sessions[0]?.id ?? ''}`, token: root.token });
    assert.equal(ended.status, 200, ended.text);
    await assertRefusedEverywhere(server, token);
    await assertOpen(server, user.token);
  });

  it('lets administrators end every session of an account at once (tokens without a session id too)', async () => {
    const user = await createUser(server, root.token);
    const laptop = await signIn(server, user);
    const found = server.running.store.find(user.username);
    assert.ok(found !== undefined);
    const iat = Math.floor(server.clock.now() / 1000);
    const older = createTokenCodec(Buffer.from(TEST_SECRET)).sign({ username: user.username, iat, exp: iat + 3600, sid: found.sessionKey });
    const path = `/api/auth/users/${encodeURIComponent(user.username)}/sessions`;
    assert.equal((await server.request({ method: 'DELETE', path, token: user.token })).status, 403);
    const ended = await server.request({ method: 'DELETE', path, token: root.token });
    assert.equal(ended.status, 200, ended.text);
    for (const token of [user.token, laptop, older]) await assertRefusedEverywhere(server, token);
    assert.deepEqual((await server.request({ path, token: root.token })).json, []);
    await assertOpen(server, root.token);
    const unknown = await server.request({ method: 'DELETE', path: '/api/auth/users/nobody-at-all/sessions', token: root.token });
    assert.equal(codeOf(unknown), 'USER_NOT_FOUND');
  });

  it('refuses another account\'s sessions to anyone but administrators, and names no session of an unknown account', async () => {
    const user = await createUser(server, root.token);
    const other = await createUser(server, root.token);
    const path = `/api/auth/users/${encodeURIComponent(other.username)}/sessions`;
    assert.equal((await server.request({ path, token: user.token })).status, 403);
    assert.equal((await server.request({ path })).status, 401);
    const id = String(claimsOf(other.token)['ses']);
    assert.equal((await server.request({ method: 'DELETE', path: `${path}/${id}`, token: user.token })).status, 403);
    await assertOpen(server, other.token);
    const unknown = await server.request({ path: '/api/auth/users/nobody-at-all/sessions', token: root.token });
    assert.equal(unknown.status, 500);
    assert.equal(codeOf(unknown), 'USER_NOT_FOUND');
    const wrongAccount = await server.request({ method: 'DELETE', path: `/api/auth/users/${encodeURIComponent(user.username)}/sessions/${id}`, token: root.token });
    assert.equal(wrongAccount.status, 404);
    await assertOpen(server, other.token);
  });

  it('keeps a browser name short and printable whatever User-Agent says', async () => {
    const user = await createUser(server, root.token);
    // What Node's client lets through: a tab, markup, latin-1 (raw control characters never reach a handler).
    const token = await signIn(server, user, `\tevil<script>\u00e9${'x'.repeat(300)}/1.0`);
    const [session] = await sessionsOf(server, token);
    assert.ok(session !== undefined);
    assert.equal(session.browser, `evilscript${'x'.repeat(54)}`);
  });
});

describe('ended sessions across a restart', () => {
  const dirs: string[] = [];
  after(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('refuses an ended session after a restart, and opens the others', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-sessions-restart-'));
    dirs.push(dataDir);
    const first = await startTestServer({}, { dataDir });
    let laptop: string;
    let phone: string;
    try {
      const admin = await createUser(first, undefined, { level: 10 });
      const user = await createUser(first, admin.token);
      laptop = await signIn(first, user);
      phone = await signIn(first, user, SAFARI_IPHONE);
      assert.equal((await endSession(first, laptop, String(claimsOf(phone)['ses']))).status, 200);
    } finally {
      await first.close();
    }
    const stored = JSON.parse(await readFile(join(dataDir, 'sessions.json'), 'utf8')) as { sessions: Array<{ id: string }> };
    assert.ok(!stored.sessions.some((session) => session.id === claimsOf(phone)['ses']));
    const second = await startTestServer({}, { dataDir });
    try {
      await assertRefusedEverywhere(second, phone);
      await assertOpen(second, laptop);
    } finally {
      await second.close();
    }
  });
});

describe('logout and session records', () => {
  it('leaves the session record (a copy of the token goes on) unless --revoke-on-logout', async () => {
    const { server, root } = await startPopulatedServer();
    try {
      const user = await createUser(server, root.token);
      const token = await signIn(server, user);
      assert.equal((await server.request({ path: '/api/auth/logout', token })).status, 200);
      await assertOpen(server, token);
    } finally {
      await server.close();
    }
  });

  it('ends the session record on logout with --revoke-on-logout', async () => {
    const { server, root } = await startPopulatedServer({ GATEHOUSE_REVOKE_ON_LOGOUT: 'true' });
    try {
      const user = await createUser(server, root.token);
      const token = await signIn(server, user);
      const id = claimsOf(token)['ses'];
      assert.equal((await server.request({ path: '/api/auth/logout', token })).status, 200);
      await assertRefusedEverywhere(server, token);
      assert.ok(!(await sessionsOf(server, user.token)).some((session) => session.id === id));
    } finally {
      await server.close();
    }
  });
});
