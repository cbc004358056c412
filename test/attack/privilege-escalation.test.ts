import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertServerAnswers, craftToken, HS256_HEADER, liveClaims } from '../helpers/attack.js';
import { CLIENT_SETTINGS, registerUser, startTestServer, type TestServer } from '../helpers/server.js';

// A USER-level caller, a demoted or deleted account, or a racing request trying to end up
// with administrator rights, or to leave the service with no administrator at all.

interface Entry {
  readonly username: string;
  readonly level: unknown;
}

async function listUsers(server: TestServer, token: string): Promise<Entry[]> {
  const res = await server.request({ path: '/api/auth/users', token });
  assert.equal(res.status, 200, res.text);
  return res.json as Entry[];
}

async function login(server: TestServer, username: string, password: string): Promise<{ status: number; token: string | undefined }> {
  const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username, password } });
  return { status: res.status, token: res.cookieToken };
}

const codeOf = (json: unknown): unknown => (json as { code?: unknown } | undefined)?.code;

describe('attack: privilege escalation', () => {
  describe('with two administrators and a user', () => {
    let server: TestServer;
    let adminToken: string;
    let userToken: string;

    before(async () => {
      server = await startTestServer();
      adminToken = await registerUser(server, 'pe-admin', { level: 10, password: 'pe-admin-password' });
      await registerUser(server, 'pe-admin2', { level: 'ADMINISTRATOR', asToken: adminToken });
      userToken = await registerUser(server, 'pe-user', { level: 5, password: 'pe-user-password', asToken: adminToken });
      await registerUser(server, 'pe-other', { level: 'USER', asToken: adminToken });
    });
    after(() => server.close());

    it('refuses every administrator action to a USER token with 403, in the cookie and in ?token=', async () => {
      const register = { username: 'pe-sneaky', password: 'pw', client: CLIENT_SETTINGS, level: 10 };
      const attempts = [
        { method: 'POST', path: '/api/auth/register', body: register },
        { method: 'POST', path: '/api/auth/register?cookie=false', body: register },
        { method: 'GET', path: '/api/auth/users' },
        { method: 'PATCH', path: '/api/auth/users/pe-other', body: { level: 10 } },
        { method: 'PATCH', path: '/api/auth/users/pe-admin', body: { password: 'taken-over' } },
        { method: 'DELETE', path: '/api/auth/users/pe-other' },
        { method: 'DELETE', path: '/api/auth/users/pe-admin' },
      ];
      for (const attempt of attempts) {
        const viaCookie = await server.request({ ...attempt, token: userToken });
        assert.equal(viaCookie.status, 403, `${attempt.method} ${attempt.path}: ${viaCookie.text}`);
        assert.equal(viaCookie.cookieToken, undefined);
        const separator = attempt.path.includes('?') ? '&' : '?';
        const viaQuery = await server.request({ ...attempt, path: `${attempt.path}${separator}token=${userToken}` });
        assert.equal(viaQuery.status, 403, `${attempt.method} ${attempt.path} with ?token=: ${viaQuery.text}`);
      }
      const names = (await listUsers(server, adminToken)).map((user) => user.username);
      assert.equal(names.includes('pe-sneaky'), false);
      assert.ok(names.includes('pe-other'));
      assert.equal((await login(server, 'pe-admin', 'pe-admin-password')).status, 200);
      assert.equal((await login(server, 'pe-admin', 'taken-over')).status, 401);
    });

    it('refuses a USER who PATCHes themself to level 10 or "ADMINISTRATOR", and the level stays USER', async () => {
      for (const level of [10, 'ADMINISTRATOR']) {
        const res = await server.request({ method: 'PATCH', path: '/api/auth/users/pe-user', body: { level }, token: userToken });
        assert.equal(res.status, 403, res.text);
      }
      const me = (await listUsers(server, adminToken)).find((user) => user.username === 'pe-user');
      assert.equal(me?.level, 5);
      const verify = await server.request({ path: '/api/auth/verify', token: userToken });
      assert.equal((verify.json as { level?: unknown }).level, 5);
    });

    it("refuses a USER token whose payload was edited to an administrator's username", async () => {
      const [header = '', , signature = ''] = userToken.split('.');
      const payload = JSON.parse(Buffer.from(userToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
      const edited = `${header}.${Buffer.from(JSON.stringify({ ...payload, username: 'pe-admin' })).toString('base64url')}.${signature}`;
      assert.equal((await server.request({ path: '/api/auth/verify', token: edited })).status, 401);
      assert.equal((await server.request({ path: '/api/auth/users', token: edited })).status, 401);
      assert.equal((await server.request({ method: 'DELETE', path: '/api/auth/users/pe-other', token: edited })).status, 401);
      await assertServerAnswers(server, adminToken, 'pe-admin');
    });

    const badLevels: readonly unknown[] = ['ADMINISTRATOR ', ' ADMINISTRATOR', 'administrator', 'Administrator', 'ADMIN', 10.0001, 9.5, '10', '5', 11, 0, -10, 100, true, null, [10], { level: 10 }, 'USER '];
    it('refuses to register a user with a level that merely resembles one (400), and creates nobody', async () => {
      for (const [index, level] of badLevels.entries()) {
        const res = await server.request({
          method: 'POST',
          path: '/api/auth/register?cookie=false',
          body: { username: `pe-level-${index}`, password: 'pw', client: CLIENT_SETTINGS, level },
          token: adminToken,
        });
        assert.equal(res.status, 400, `level ${JSON.stringify(level)}: ${res.text}`);
      }
      const names = (await listUsers(server, adminToken)).map((user) => user.username);
      assert.deepEqual(names.filter((name) => name.startsWith('pe-level-')), []);
    });

    it('refuses to PATCH a user to a level that merely resembles one (400), and the level is unchanged', async () => {
      for (const level of badLevels) {
        const res = await server.request({ method: 'PATCH', path: '/api/auth/users/pe-other', body: { level }, token: adminToken });
        assert.equal(res.status, 400, `level ${JSON.stringify(level)}: ${res.text}`);
      }
      assert.equal((await listUsers(server, adminToken)).find((user) => user.username === 'pe-other')?.level, 'USER');
    });

    it('treats "pe-admin " (trailing space) as a different, USER-level account', async () => {
      const lookalike = await registerUser(server, 'pe-admin ', { level: 5, asToken: adminToken });
      const verify = await server.request({ path: '/api/auth/verify', token: lookalike });
      assert.equal(verify.status, 200);
      assert.equal((verify.json as { username?: unknown }).username, 'pe-admin ');
      assert.equal((verify.json as { level?: unknown }).level, 5);
      assert.equal((await server.request({ path: '/api/auth/users', token: lookalike })).status, 403);
    });

    it("refuses to rename a user onto an administrator's name with 500 USERNAME_TAKEN, leaving both accounts as they were", async () => {
      const res = await server.request({ method: 'PATCH', path: '/api/auth/users/pe-user', body: { username: 'pe-admin', password: 'hijack' }, token: adminToken });
      assert.equal(res.status, 500);
      assert.equal(codeOf(res.json), 'USERNAME_TAKEN');
      assert.equal((await login(server, 'pe-admin', 'hijack')).status, 401);
      assert.equal((await login(server, 'pe-admin', 'pe-admin-password')).status, 200);
      assert.equal((await login(server, 'pe-user', 'pe-user-password')).status, 200);
      const users = await listUsers(server, adminToken);
      assert.equal(users.find((user) => user.username === 'pe-admin')?.level, 10);
      assert.equal(users.find((user) => user.username === 'pe-user')?.level, 5);
    });

    it("refuses a demoted administrator's old token on the users list, and a fresh login gets 403", async () => {
      const demotee = await registerUser(server, 'pe-demotee', { level: 10, password: 'pe-demotee-password', asToken: adminToken });
      assert.equal((await server.request({ path: '/api/auth/users', token: demotee })).status, 200);
      server.clock.advanceSeconds(1);
      const demote = await server.request({ method: 'PATCH', path: '/api/auth/users/pe-demotee', body: { level: 'USER' }, token: adminToken });
      assert.equal(demote.status, 200, demote.text);
      assert.equal((await server.request({ path: '/api/auth/users', token: demotee })).status, 401);
      assert.equal((await server.request({ method: 'DELETE', path: '/api/auth/users/pe-other', token: demotee })).status, 401);
      const fresh = await login(server, 'pe-demotee', 'pe-demotee-password');
      assert.equal(fresh.status, 200);
      assert.equal((await server.request({ path: '/api/auth/users', token: fresh.token ?? '' })).status, 403);
    });

    it("never treats a demoted administrator's token as an administrator, even within the same second", async () => {
      const demotee = await registerUser(server, 'pe-demotee-fast', { level: 10, asToken: adminToken });
      const demote = await server.request({ method: 'PATCH', path: '/api/auth/users/pe-demotee-fast', body: { level: 5 }, token: adminToken });
      assert.equal(demote.status, 200);
      const res = await server.request({ path: '/api/auth/users', token: demotee });
      assert.ok(res.status === 401 || res.status === 403, `answered ${res.status}`);
    });

    it("refuses a deleted user's token after a new user is registered with the same name", async () => {
      const old = await registerUser(server, 'pe-reborn', { level: 10, asToken: adminToken });
      const gone = await server.request({ method: 'DELETE', path: '/api/auth/users/pe-reborn', token: adminToken });
      assert.equal(gone.status, 200);
      assert.equal((await server.request({ path: '/api/auth/verify', token: old })).status, 401);
      server.clock.advanceSeconds(1);
      await registerUser(server, 'pe-reborn', { level: 10, asToken: adminToken });
      assert.equal((await server.request({ path: '/api/auth/verify', token: old })).status, 401);
      assert.equal((await server.request({ path: '/api/auth/users', token: old })).status, 401);
    });

    it("refuses a renamed user's old token after someone else takes the old name", async () => {
      const old = await registerUser(server, 'pe-rename-src', { level: 10, asToken: adminToken });
      const rename = await server.request({ method: 'PATCH', path: '/api/auth/users/pe-rename-src', body: { username: 'pe-rename-dst' }, token: adminToken });
      assert.equal(rename.status, 200);
      server.clock.advanceSeconds(1);
      await registerUser(server, 'pe-rename-src', { level: 5, asToken: adminToken });
      assert.equal((await server.request({ path: '/api/auth/verify', token: old })).status, 401);
    });

    it("refuses a correctly signed token whose iat predates the user's creation", async () => {
      const token = craftToken(HS256_HEADER, { ...liveClaims(server, 'pe-user'), iat: Math.floor(server.clock.now() / 1000) - 3600 });
      assert.equal((await server.request({ path: '/api/auth/verify', token })).status, 401);
    });
  });

  describe('with exactly one administrator', () => {
    let server: TestServer;
    let adminToken: string;

    before(async () => {
      server = await startTestServer();
      adminToken = await registerUser(server, 'solo-admin', { level: 'ADMINISTRATOR' });
      await registerUser(server, 'solo-user', { level: 5, asToken: adminToken });
    });
    after(() => server.close());

    it('refuses to delete the last administrator (409 LAST_ADMINISTRATOR), even when it deletes itself', async () => {
      const res = await server.request({ method: 'DELETE', path: '/api/auth/users/solo-admin', token: adminToken });
      assert.equal(res.status, 409);
      assert.equal(codeOf(res.json), 'LAST_ADMINISTRATOR');
      await assertServerAnswers(server, adminToken, 'solo-admin');
    });

    it('refuses to demote the last administrator (409), by number or by name', async () => {
      for (const level of [5, 'USER']) {
        const res = await server.request({ method: 'PATCH', path: '/api/auth/users/solo-admin', body: { level }, token: adminToken });
        assert.equal(res.status, 409, `level ${JSON.stringify(level)}`);
        assert.equal(codeOf(res.json), 'LAST_ADMINISTRATOR');
      }
      assert.equal((await listUsers(server, adminToken)).find((user) => user.username === 'solo-admin')?.level, 'ADMINISTRATOR');
    });

    it('never falls back to the initial condition, so an anonymous register is still refused', async () => {
      const verify = await server.request({ path: '/api/auth/verify' });
      assert.equal(verify.status, 401);
      const res = await server.request({ method: 'POST', path: '/api/auth/register', body: { username: 'squatter', password: 'pw', client: CLIENT_SETTINGS, level: 10 } });
      assert.equal(res.status, 401);
      assert.equal(res.cookieToken, undefined);
    });
  });

  describe('racing requests', () => {
    it('lets exactly one of two simultaneous first registrations through', async () => {
      const server = await startTestServer();
      try {
        const body = (username: string) => ({ username, password: 'pw', client: CLIENT_SETTINGS, level: 10 });
        const results = await Promise.all([
          server.request({ method: 'POST', path: '/api/auth/register', body: body('race-first-a') }),
          server.request({ method: 'POST', path: '/api/auth/register', body: body('race-first-b') }),
        ]);
        const statuses = results.map((res) => res.status).sort();
        assert.deepEqual(statuses, [200, 401]);
        const winner = results.find((res) => res.status === 200);
        const users = await listUsers(server, winner?.cookieToken ?? '');
        assert.equal(users.length, 1);
      } finally {
        await server.close();
      }
    });

    for (const action of ['demote', 'delete'] as const) {
      it(`keeps an administrator when the only two ${action} each other at the same moment`, async () => {
        const server = await startTestServer();
        try {
          const aToken = await registerUser(server, 'race-a', { level: 10 });
          const bToken = await registerUser(server, 'race-b', { level: 10, asToken: aToken });
          server.clock.advanceSeconds(1);
          const request = (target: string, token: string) =>
            action === 'demote'
              ? server.request({ method: 'PATCH', path: `/api/auth/users/${target}`, body: { level: 5 }, token })
              : server.request({ method: 'DELETE', path: `/api/auth/users/${target}`, token });
          const results = await Promise.all([request('race-b', aToken), request('race-a', bToken)]);
          assert.equal(results.filter((res) => res.status === 200).length, 1, `answers ${results.map((res) => `${res.status} ${res.text}`).join(', ')}`);
          for (const res of results) assert.notEqual(res.status, 500);
          const survivor = results[0]?.status === 200 ? aToken : bToken;
          const users = await listUsers(server, survivor);
          assert.equal(users.filter((user) => user.level === 10).length, 1);
        } finally {
          await server.close();
        }
      });
    }
  });
});
