// Machine tokens: made and revoked by a session, shown once, stored as a digest; they pass the
// gate (Bearer, or Basic with the username) as their account and nothing else.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertError, CONFIGS, createUser, deleteUser, login, startPopulatedServer, uniqueName, updateUser, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const TOKEN_FORMAT = /^gh_[A-Za-z0-9_-]{43}$/;

interface Made {
  readonly id: string;
  readonly name: string;
  readonly token: string;
  readonly expiresAt: number | null;
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

describe('machine tokens', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  /** Makes a token on the account of `holder` (a session and the account's password: a token is a way in). */
  const makeToken = async (
    holder: { token: string; password: string }, body: Record<string, unknown> = { name: 'backup script' },
  ): Promise<Made> => {
    const res = await server.request({ method: 'POST', path: '/api/auth/account/tokens', body: { ...body, password: holder.password }, token: holder.token });
    assert.equal(res.status, 200, res.text);
    return res.json as Made;
  };
  const revoke = (session: string | undefined, id: string, headers: Record<string, string> = {}): Promise<TestResponse> =>
    server.request({ method: 'DELETE', path: `/api/auth/account/tokens/${id}`, headers, ...(session === undefined ? {} : { token: session }) });
  const gate = (authorization: string | undefined, query = '', headers: Record<string, string> = {}): Promise<TestResponse> =>
    server.request({ path: `/api/auth/forward${query}`, headers: { ...headers, ...(authorization === undefined ? {} : { authorization }) } });
  const account = async (groups?: string[]): Promise<TestUser> => {
    const user = await createUser(server, root.token, { level: 5 });
    if (groups !== undefined) assert.equal((await updateUser(server, root.token, user.username, { groups })).status, 200);
    return user;
  };
  const usersFile = (): Promise<string> => readFile(join(server.dataDir, 'users.json'), 'utf8');
  const storedTokens = async (username: string): Promise<Array<Record<string, unknown>>> =>
    ((JSON.parse(await usersFile()) as { users: Array<{ username: string; tokens?: Array<Record<string, unknown>> }> }).users.find((user) => user.username === username)?.tokens ?? []);

  describe('making and revoking', () => {
    it('answers {id, name, token, expiresAt} once, and stores only a digest', async () => {
      const user = await account();
      const made = await makeToken(user, { name: 'uptime monitor' });
      assert.deepEqual(Object.keys(made).sort(), ['expiresAt', 'id', 'name', 'token']);
      assert.match(made.token, TOKEN_FORMAT);
      assert.equal(made.name, 'uptime monitor');
      assert.equal(made.expiresAt, null);
      const file = await usersFile();
      assert.ok(!file.includes(made.token) && !file.includes(made.token.slice(3)), 'the token itself is not stored');
      const [stored] = await storedTokens(user.username);
      assert.deepEqual(Object.keys(stored ?? {}).sort(), ['createdAt', 'digest', 'id', 'name']);
      const summary = await server.request({ path: `/api/auth/users/${user.username}`, token: root.token });
      assert.equal((summary.json as { tokens: number }).tokens, 1);
    });

    it('lists the tokens in GET /api/auth/account, without the token or its digest', async () => {
      const user = await account();
      const made = await makeToken(user, { name: 'listed', days: 2 });
      const res = await server.request({ path: '/api/auth/account', token: user.token });
      assert.equal(res.status, 200, res.text);
      const createdAt = Math.floor(server.clock.now() / 1000) * 1000;
      assert.deepEqual((res.json as { tokens: unknown }).tokens, [{ id: made.id, name: 'listed', createdAt, expiresAt: made.expiresAt, lastUsedAt: null }]);
      assert.ok(!res.text.includes(made.token) && !res.text.includes('digest'));
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      await server.running.store.change(() => undefined);
      const used = await server.request({ path: '/api/auth/account', token: user.token });
      assert.equal((used.json as { tokens: Array<{ lastUsedAt: unknown }> }).tokens[0]?.lastUsedAt, createdAt);
      assertError(await server.request({ path: '/api/auth/account', headers: { authorization: `Bearer ${made.token}` } }), 401);
    });

    it('with days, expires that many days after it was made', async () => {
      const user = await account();
      const made = await makeToken(user, { name: 'week', days: 7 });
      assert.equal(made.expiresAt, (Math.floor(server.clock.now() / 1000) + 7 * 86_400) * 1000);
    });

    it('logs the id of a token it makes or revokes, never the token', async () => {
      const user = await account();
      const made = await makeToken(user);
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      assert.equal((await revoke(user.token, made.id)).status, 200);
      const logs = server.logs.join('\n');
      assert.ok(!logs.includes(made.token) && !logs.includes(made.token.slice(3)), 'the token is never logged');
      assert.ok(logs.includes(made.id), 'the log names the token by id');
    });

    it('refuses bad names, bad days and too many tokens', async () => {
      const user = await account();
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(65) }, { name: 'a\u0001b' }, { name: 7 }, { name: 'n', days: 0 }, { name: 'n', days: 3651 }, { name: 'n', days: 1.5 }, { name: 'n', days: '7' }]) {
        assertError(await server.request({ method: 'POST', path: '/api/auth/account/tokens', body: { ...body, password: user.password }, token: user.token }), 400, 'VALIDATION_FAILED');
      }
      for (let count = 0; count < 32; count++) await makeToken(user, { name: `t${count}` });
      assertError(await server.request({ method: 'POST', path: '/api/auth/account/tokens', body: { name: 'one too many', password: user.password }, token: user.token }), 409, 'TOO_MANY_TOKENS');
    });

    it('revokes only the caller\'s own tokens: 404 for an unknown id, a malformed id, or another account\'s token', async () => {
      const owner = await account();
      const other = await account();
      const made = await makeToken(owner);
      assertError(await revoke(other.token, made.id), 404, 'TOKEN_NOT_FOUND');
      assertError(await revoke(owner.token, 'AAAAAAAAAAAAAAAA'), 404, 'TOKEN_NOT_FOUND');
      assertError(await revoke(owner.token, '..'), 404);
      assertError(await revoke(owner.token, 'x'.repeat(10_000)), 404, 'TOKEN_NOT_FOUND');
      assertError(await revoke(undefined, made.id), 401);
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
    });
  });

  describe('at the gate', () => {
    it('Bearer passes as its account, with level and groups', async () => {
      const user = await account(['media']);
      const made = await makeToken(user);
      for (const scheme of ['Bearer', 'bearer']) {
        const res = await gate(`${scheme} ${made.token}`, '?group=media,wiki');
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['remote-user'], user.username);
        assert.equal(res.headers['remote-level'], 'USER');
        assert.equal(res.headers['remote-groups'], 'media');
      }
      assertError(await gate(`Bearer ${made.token}`, '?group=wiki'), 403, 'NOT_IN_GROUP');
      assertError(await gate(`Bearer ${made.token}`, '?level=ADMINISTRATOR'), 403, 'NOT_ADMINISTRATOR');
    });

    it('Basic passes with the username and a token as password, and only with that username', async () => {
      const user = await account();
      const other = await account();
      const made = await makeToken(user);
      const res = await gate(basic(user.username, made.token));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['remote-user'], user.username);
      assertError(await gate(basic(other.username, made.token)), 401);
      assertError(await gate(basic(user.username, user.password)), 401);
    });

    it('a Basic username may hold a colon: the token after the last one is the password', async () => {
      const username = uniqueName('a:b');
      const user = await createUser(server, root.token, { username, level: 5 });
      const made = await makeToken(user);
      assert.equal((await gate(basic(username, made.token))).status, 200);
    });

    it('a revoked token fails at once', async () => {
      const user = await account();
      const made = await makeToken(user);
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      assert.equal((await revoke(user.token, made.id)).status, 200);
      assertError(await gate(`Bearer ${made.token}`), 401);
    });

    it('an expired token fails at once', async () => {
      const user = await account();
      const made = await makeToken(user, { name: 'day', days: 1 });
      server.clock.advanceSeconds(86_400 - 1);
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      server.clock.advanceSeconds(1);
      assertError(await gate(`Bearer ${made.token}`), 401);
    });

    it('the account\'s deletion ends its tokens', async () => {
      const user = await account();
      const made = await makeToken(user);
      assert.equal((await deleteUser(server, root.token, user.username)).status, 200);
      assertError(await gate(`Bearer ${made.token}`), 401);
      assertError(await gate(basic(user.username, made.token)), 401);
      // The same name made again does not inherit them.
      await createUser(server, root.token, { username: user.username, level: 5 });
      assertError(await gate(`Bearer ${made.token}`), 401);
    });

    it('a password change or a rename ends the tokens; a level or group change does not, and counts at once', async () => {
      const user = await account();
      const kept = await makeToken(user);
      assert.equal((await updateUser(server, root.token, user.username, { groups: ['ops'] })).status, 200);
      assert.equal((await gate(`Bearer ${kept.token}`, '?group=ops')).status, 200);
      assert.equal((await updateUser(server, root.token, user.username, { level: 10 })).status, 200);
      assert.equal((await gate(`Bearer ${kept.token}`, '?level=ADMINISTRATOR')).status, 200);
      assert.equal((await updateUser(server, root.token, user.username, { level: 5 })).status, 200);
      assertError(await gate(`Bearer ${kept.token}`, '?level=ADMINISTRATOR'), 403, 'NOT_ADMINISTRATOR');
      assert.equal((await updateUser(server, root.token, user.username, { password: 'a-new-password' })).status, 200);
      assertError(await gate(`Bearer ${kept.token}`), 401);
      assert.deepEqual(await storedTokens(user.username), []);

      const session = (await login(server, user.username, 'a-new-password')).cookieToken ?? '';
      const renamed = await makeToken({ token: session, password: 'a-new-password' });
      const newName = uniqueName('renamed');
      assert.equal((await updateUser(server, root.token, user.username, { username: newName })).status, 200);
      assertError(await gate(`Bearer ${renamed.token}`), 401);
    });

    it('a machine token in a cookie, ?token= or the original URI is not a session', async () => {
      const user = await account();
      const made = await makeToken(user);
      assertError(await server.request({ path: '/api/auth/forward', token: made.token }), 401);
      assertError(await server.request({ path: `/api/auth/forward?token=${made.token}` }), 401);
      assertError(await server.request({ path: '/api/auth/forward', headers: { 'x-original-uri': `/app?token=${made.token}` } }), 401);
    });

    it('?basic=1 adds a Basic challenge to the 401 and never redirects', async () => {
      const res = await gate(undefined, '?basic=1&login=/login', { accept: 'text/html' });
      assertError(res, 401);
      assert.equal(res.headers['www-authenticate'], 'Basic realm="Gatehouse"');
      assert.equal(res.headers.location, undefined);
      const plain = await gate(undefined, '?login=/login', { accept: 'text/html' });
      assert.equal(plain.status, 302);
      assert.equal(plain.headers['www-authenticate'], undefined);
    });

    it('with mfa=1, passes a token only where the forward URL also says tokens=1', async () => {
      const user = await account();
      const made = await makeToken(user);
      for (const authorization of [`Bearer ${made.token}`, basic(user.username, made.token)]) {
        assertError(await gate(authorization, '?mfa=1'), 401);
        assertError(await gate(authorization, '?mfa=1&tokens=0'), 401);
        const challenged = await gate(authorization, '?mfa=1&basic=1');
        assertError(challenged, 401);
        assert.equal(challenged.headers['www-authenticate'], 'Basic realm="Gatehouse"');
        const res = await gate(authorization, '?mfa=1&tokens=1');
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['remote-user'], user.username);
      }
      // tokens=1 alone lets no one in without credentials, and no one-factor session past mfa=1.
      assertError(await gate(undefined, '?mfa=1&tokens=1'), 401);
      assertError(await server.request({ path: '/api/auth/forward?mfa=1&tokens=1', token: user.token }), 401);
    });

    it('records last use at most once an hour per token', async () => {
      const user = await account();
      const made = await makeToken(user);
      assert.equal((await storedTokens(user.username))[0]?.['lastUsedAt'], undefined);
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      await server.running.store.change(() => undefined);
      const first = (await storedTokens(user.username))[0]?.['lastUsedAt'];
      assert.equal(typeof first, 'number');
      const before = await usersFile();
      server.clock.advanceSeconds(3599);
      for (let count = 0; count < 5; count++) assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      await server.running.store.change(() => undefined);
      assert.equal(await usersFile(), before, 'no write within the hour');
      server.clock.advanceSeconds(1);
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200);
      await server.running.store.change(() => undefined);
      assert.equal((await storedTokens(user.username))[0]?.['lastUsedAt'], (first as number) + 3600);
    });
  });

  describe('refused everywhere but the gate', () => {
    let made: Made;
    before(async () => {
      made = await makeToken(root, { name: 'root script' });
    });

    for (const [what, authorization] of [
      ['Bearer', (): string => `Bearer ${made.token}`],
      ['Basic', (): string => basic(root.username, made.token)],
    ] as const) {
      it(`${what}: the users list, a user change, verify and the account routes answer 401`, async () => {
        const headers = { authorization: authorization() };
        assertError(await server.request({ path: '/api/auth/users', headers }), 401);
        assertError(await server.request({ path: `/api/auth/users/${root.username}`, headers }), 401);
        assertError(await server.request({ method: 'PATCH', path: `/api/auth/users/${root.username}`, headers, body: { level: 5 } }), 401);
        assertError(await server.request({ method: 'DELETE', path: `/api/auth/users/${root.username}`, headers }), 401);
        assertError(await server.request({ method: 'POST', path: '/api/auth/users', headers, body: { username: uniqueName('x'), password: 'pw', level: 10 } }), 401);
        assertError(await server.request({ method: 'POST', path: '/api/auth/account/tokens', headers, body: { name: 'more', password: root.password } }), 401);
        assertError(await revoke(undefined, made.id, headers), 401);
        const verified = await server.request({ path: '/api/auth/verify', headers });
        assert.equal(verified.status, 401);
        assert.deepEqual(verified.json, { configs: CONFIGS });
        assert.equal((await gate(authorization())).status, 200, 'still good at the gate');
      });
    }

    it('a machine token as ?token= or cookie on an account route is refused', async () => {
      assertError(await server.request({ path: '/api/auth/users', token: made.token }), 401);
      assertError(await server.request({ path: `/api/auth/users?token=${made.token}` }), 401);
      assertError(await server.request({ method: 'POST', path: '/api/auth/account/tokens', body: { name: 'x', password: root.password }, token: made.token }), 401);
    });
  });

  describe('hostile Authorization headers', () => {
    it('answers 401, never 500, and never crashes', async () => {
      const user = await account();
      const made = await makeToken(user);
      const headers = [
        `Bearer gh_${'A'.repeat(10 * 1024)}`,
        `Bearer ${'x'.repeat(10 * 1024)}`,
        `Bearer gh_${'A'.repeat(43)}`,
        `Bearer ${made.token}x`,
        `Bearer ${made.token.slice(0, -1)}!`,
        'Bearer gh_',
        'Basic !!!not base64!!!',
        'Basic ====',
        'Basic Zg',
        `Basic ${'A'.repeat(10 * 1024)}`,
        `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x67, 0x68, 0x5f]).toString('base64')}`,
        `Basic ${Buffer.from(`${user.username}${made.token}`).toString('base64')}`,
        `Basic ${Buffer.from(`:${made.token}`).toString('base64')}`,
        'Basic',
        'Bearer',
        'Digest username="x"',
      ];
      for (const authorization of headers) {
        const res = await gate(authorization);
        assert.equal(res.status, 401, `${authorization.slice(0, 40)}: ${res.status} ${res.text}`);
      }
      assert.equal((await gate(`Bearer ${made.token}`)).status, 200, 'the service is still up');
    });

    it('an Authorization that is not a machine token leaves the session cookie to be judged', async () => {
      const user = await account();
      for (const authorization of ['Basic !!!not base64!!!', basic(user.username, 'the app\'s own password'), 'Bearer an-apps-own-token']) {
        const res = await server.request({ path: '/api/auth/forward', token: user.token, headers: { authorization } });
        assert.equal(res.status, 200, authorization);
        assert.equal(res.headers['remote-auth'], 'session', 'the app may keep its own Authorization');
      }
    });

    it('the 200 says in Remote-Auth which credential passed: session for the cookie, token for Bearer and Basic', async () => {
      const user = await account();
      const made = await makeToken(user);
      const session = await server.request({ path: '/api/auth/forward', token: user.token, headers: { 'remote-auth': 'token' } });
      assert.equal(session.status, 200, session.text);
      assert.equal(session.headers['remote-auth'], 'session');
      for (const authorization of [`Bearer ${made.token}`, basic(user.username, made.token)]) {
        // A client's own Remote-Auth changes nothing: the answer is Gatehouse's.
        const res = await gate(authorization, '', { 'remote-auth': 'session' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['remote-auth'], 'token', authorization.slice(0, 6));
        assert.equal(res.headers['remote-user'], user.username);
      }
      // The same account through the cookie again: the answers are kept apart.
      assert.equal((await server.request({ path: '/api/auth/forward', token: user.token })).headers['remote-auth'], 'session');
    });
  });
});
