import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertTokenRefused,
  assertTokenWorks,
  CONFIGS,
  createUser,
  deleteUser,
  listUsers,
  login,
  nowSeconds,
  signToken,
  startPopulatedServer,
  uniqueName,
  type TestUser,
} from '../helpers/api.js';
import type { TestServer } from '../helpers/server.js';

describe('session tokens', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const contentToken = (username: string): string => {
    const iat = nowSeconds(server);
    return signToken({ username, iat, exp: iat + 3600, hash: 'c0ffee0123456789abcdef0123456789abcdef01', indices: '0,2,5' });
  };
  const verifyWithHeaders = (headers: Record<string, string>, query = '') => server.request({ path: `/api/auth/verify${query}`, headers });

  it('accepts a content token with extra hash and indices claims in the cookie', async () => {
    const user = await createUser(server, root.token, { level: 'USER' });
    const res = await server.request({ path: '/api/auth/verify', token: contentToken(user.username) });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { initialUser: false, username: user.username, level: 'USER', configs: CONFIGS });
  });

  it('accepts a content token in the ?token= query parameter', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: `/api/auth/verify?token=${contentToken(user.username)}` });
    assert.equal(res.status, 200);
    assert.equal((res.json as { username: string }).username, user.username);
  });

  it('lets a content token of an administrator act as that administrator', async () => {
    const admin = await createUser(server, root.token, { level: 10 });
    assert.equal((await listUsers(server, contentToken(admin.username))).status, 200);
    const user = await createUser(server, root.token, { level: 5 });
    assertError(await listUsers(server, contentToken(user.username)), 403);
  });

  it('refuses a correctly signed token for a user that does not exist', async () => {
    const iat = nowSeconds(server);
    const token = signToken({ username: uniqueName('ghost'), iat, exp: iat + 3600 });
    await assertTokenRefused(server, token);
    assertError(await listUsers(server, token), 401);
    const query = await server.request({ path: `/api/auth/verify?token=${token}` });
    assert.equal(query.status, 401);
    assert.deepEqual(query.json, { configs: CONFIGS });
  });

  it('refuses a token signed with another secret', async () => {
    const user = await createUser(server, root.token);
    const iat = nowSeconds(server);
    await assertTokenRefused(server, signToken({ username: user.username, iat, exp: iat + 3600 }, 'another-secret-that-is-also-32-characters-long'));
  });

  it('refuses a token whose payload was changed after signing', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const [header, , signature] = user.token.split('.');
    const payload = Buffer.from(JSON.stringify({ username: root.username, iat: nowSeconds(server), exp: nowSeconds(server) + 3600 })).toString('base64url');
    await assertTokenRefused(server, `${header}.${payload}.${signature}`);
  });

  it('refuses a token issued before the user was created, even though the name exists now', async () => {
    const username = uniqueName('not-yet');
    const iat = nowSeconds(server);
    const early = signToken({ username, iat, exp: iat + 3600 });
    server.clock.advanceSeconds(1);
    await createUser(server, root.token, { username });
    await assertTokenRefused(server, early);
  });

  it('refuses the old token of a deleted user whose name was registered again later', async () => {
    const user = await createUser(server, root.token, { level: 10 });
    assert.equal((await deleteUser(server, root.token, user.username)).status, 200);
    server.clock.advanceSeconds(1);
    await createUser(server, root.token, { username: user.username, level: 10 });
    await assertTokenRefused(server, user.token);
    assertError(await listUsers(server, user.token), 401);
  });

  it('uses a valid cookie and ignores an invalid query token', async () => {
    const user = await createUser(server, root.token);
    for (const query of ['?token=garbage', '?token=a.b.c', `?token=${user.token}x`]) {
      const res = await server.request({ path: `/api/auth/verify${query}`, token: user.token });
      assert.equal(res.status, 200, query);
      assert.equal((res.json as { username: string }).username, user.username);
    }
  });

  it('uses a valid cookie and ignores a query token naming a user that does not exist', async () => {
    const iat = nowSeconds(server);
    const ghost = signToken({ username: uniqueName('ghost'), iat, exp: iat + 3600 });
    const res = await server.request({ path: `/api/auth/users?token=${ghost}`, token: root.token });
    assert.equal(res.status, 200);
    const logout = await server.request({ path: `/api/auth/logout?token=${ghost}`, token: root.token });
    assert.equal(logout.status, 200);
  });

  it('uses the cookie\'s user, not the query token\'s, when both are valid', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const res = await server.request({ path: `/api/auth/users?token=${root.token}`, token: user.token });
    assertError(res, 403);
    const check = await server.request({ path: `/api/auth/verify?token=${root.token}`, token: user.token });
    assert.equal((check.json as { username: string }).username, user.username);
  });

  it('accepts a whole Set-Cookie line echoed back as the Cookie header', async () => {
    const user = await createUser(server, root.token);
    const loggedIn = await login(server, user.username, user.password);
    const line = loggedIn.headers['set-cookie']?.[0];
    assert.ok(line !== undefined);
    const res = await verifyWithHeaders({ cookie: line });
    assert.equal(res.status, 200);
    assert.equal((res.json as { username: string }).username, user.username);
  });

  it('accepts the echoed form jwt=TOKEN; Path=/; Expires=...; HttpOnly; SameSite=Strict', async () => {
    const user = await createUser(server, root.token);
    const expires = new Date(server.clock.now() + 7 * 24 * 3600 * 1000).toUTCString();
    const res = await verifyWithHeaders({ cookie: `jwt=${user.token}; Path=/; Expires=${expires}; HttpOnly; SameSite=Strict` });
    assert.equal(res.status, 200);
    assert.equal((res.json as { username: string }).username, user.username);
  });

  it('finds the jwt cookie among other cookies', async () => {
    const user = await createUser(server, root.token);
    const res = await verifyWithHeaders({ cookie: `theme=dark; lang=en; jwt=${user.token}; other=x` });
    assert.equal(res.status, 200);
    assert.equal((res.json as { username: string }).username, user.username);
  });

  it('uses the first jwt cookie when there are several', async () => {
    const first = await createUser(server, root.token);
    const second = await createUser(server, root.token);
    const both = await verifyWithHeaders({ cookie: `jwt=${first.token}; jwt=${second.token}` });
    assert.equal((both.json as { username: string }).username, first.username);
    const validFirst = await verifyWithHeaders({ cookie: `jwt=${first.token}; jwt=garbage` });
    assert.equal(validFirst.status, 200);
    const invalidFirst = await verifyWithHeaders({ cookie: `jwt=garbage; jwt=${first.token}` });
    assert.equal(invalidFirst.status, 401);
    assert.deepEqual(invalidFirst.json, { configs: CONFIGS });
  });

  it('does not read attribute-like pairs as the jwt cookie', async () => {
    const user = await createUser(server, root.token);
    const res = await verifyWithHeaders({ cookie: `Path=/; Expires=Thu, 01 Jan 2099 00:00:00 GMT; jwt=${user.token}; HttpOnly` });
    assert.equal(res.status, 200);
  });

  it('treats a malformed Cookie header as no credential, never an error', async () => {
    for (const cookie of ['jwt', ';;;', '=', 'jwt=%E0%A4%A', '"', 'jwt="unterminated', `jwt=${'x'.repeat(5000)}`]) {
      const res = await verifyWithHeaders({ cookie });
      assert.equal(res.status, 401, cookie);
      assert.deepEqual(res.json, { configs: CONFIGS }, cookie);
    }
  });

  it('keeps a token valid until its seven days are over', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(7 * 24 * 3600 - 2);
    try {
      await assertTokenWorks(server, user.token, user.username);
    } finally {
      server.clock.advanceSeconds(-(7 * 24 * 3600 - 2));
    }
  });
});
