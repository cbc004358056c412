import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertJsonContentType,
  assertSessionCookie,
  assertTokenRefused,
  assertTokenWorks,
  CLEARED_COOKIE,
  createUser,
  login,
  signToken,
  startPopulatedServer,
  uniqueName,
  type TestUser,
} from '../helpers/api.js';
import type { TestServer } from '../helpers/server.js';

describe('GET /api/auth/logout', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('answers 200 {} and clears the jwt cookie', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: '/api/auth/logout', token: user.token });
    assert.equal(res.status, 200);
    assertJsonContentType(res);
    assert.deepEqual(res.json, {});
    assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
    assert.equal(res.cookieToken, '');
  });

  it('accepts the token in the ?token= query parameter', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: `/api/auth/logout?token=${user.token}` });
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
  });

  it('works for an administrator and a plain user alike', async () => {
    for (const level of [10, 'ADMINISTRATOR', 5, 'USER'] as const) {
      const user = await createUser(server, root.token, { level });
      const res = await server.request({ path: '/api/auth/logout', token: user.token });
      assert.equal(res.status, 200, String(level));
    }
  });

  it('returns 401 {code, message} without credentials', async () => {
    assertError(await server.request({ path: '/api/auth/logout' }), 401);
  });

  it('returns 401 for a token that is not valid', async () => {
    assertError(await server.request({ path: '/api/auth/logout', token: 'not.a.token' }), 401);
    assertError(await server.request({ path: '/api/auth/logout?token=not.a.token' }), 401);
  });

  it('returns 401 for a correctly signed token naming a user that does not exist', async () => {
    const iat = Math.floor(server.clock.now() / 1000);
    const token = signToken({ username: uniqueName('ghost'), iat, exp: iat + 3600 });
    assertError(await server.request({ path: '/api/auth/logout', token }), 401);
  });

  it('leaves a copy of the logged-out token working by default', async () => {
    const user = await createUser(server, root.token);
    const token = assertSessionCookie(await login(server, user.username, user.password), server);
    assert.equal((await server.request({ path: '/api/auth/logout', token })).status, 200);
    await assertTokenWorks(server, token, user.username);
    assert.equal((await server.request({ path: '/api/auth/logout', token })).status, 200);
  });
});

describe('GET /api/auth/logout with revoke-on-logout set', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REVOKE_ON_LOGOUT: 'true' }));
  });
  after(() => server.close());

  it('refuses the logged-out token afterwards but not the same user\'s other sessions', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    const first = assertSessionCookie(await login(server, user.username, user.password), server);
    server.clock.advanceSeconds(1);
    const second = assertSessionCookie(await login(server, user.username, user.password), server);
    assert.notEqual(first, second);
    const res = await server.request({ path: '/api/auth/logout', token: first });
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
    await assertTokenRefused(server, first);
    assertError(await server.request({ path: '/api/auth/logout', token: first }), 401);
    await assertTokenWorks(server, second, user.username);
  });
});
