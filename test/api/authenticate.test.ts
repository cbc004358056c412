import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertJsonContentType,
  assertSessionCookie,
  claimsOf,
  createUser,
  login,
  nowSeconds,
  startPopulatedServer,
  TOKEN_TTL_SECONDS,
  uniqueName,
  verify,
  type TestUser,
} from '../helpers/api.js';
import type { TestServer } from '../helpers/server.js';

describe('POST /api/auth/authenticate', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const authenticate = (body: unknown) => server.request({ method: 'POST', path: '/api/auth/authenticate', body });

  it('answers 200 with exactly {success, username, level} and a session cookie', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const res = await login(server, user.username, user.password);
    assert.equal(res.status, 200);
    assertJsonContentType(res);
    assert.deepEqual(res.json, { success: true, username: user.username, level: 5 });
    assertSessionCookie(res, server);
  });

  it('issues a token naming the user that expires seven days after it was issued', async () => {
    const user = await createUser(server, root.token);
    const res = await login(server, user.username, user.password);
    const claims = claimsOf(assertSessionCookie(res, server));
    assert.equal(claims['username'], user.username);
    assert.equal(claims['iat'], nowSeconds(server));
    assert.equal(claims['exp'], nowSeconds(server) + TOKEN_TTL_SECONDS);
  });

  it('issues a cookie token that verify accepts for that user and level', async () => {
    const user = await createUser(server, root.token, { level: 'USER' });
    const res = await login(server, user.username, user.password);
    const token = assertSessionCookie(res, server);
    const check = await verify(server, token);
    assert.equal(check.status, 200);
    assert.deepEqual(check.json, { initialUser: false, username: user.username, level: 'USER', configs: { authMethod: 'default', pollInterval: 2000 } });
  });

  it('issues a token that also works in the ?token= query parameter', async () => {
    const user = await createUser(server, root.token);
    const token = assertSessionCookie(await login(server, user.username, user.password), server);
    const res = await server.request({ path: `/api/auth/verify?token=${token}` });
    assert.equal(res.status, 200);
    assert.equal((res.json as { username: string }).username, user.username);
  });

  it('needs no prior credentials and ignores an invalid cookie sent along', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password }, token: 'not.a.token' });
    assert.equal(res.status, 200);
    assertSessionCookie(res, server);
  });

  for (const [form, level] of [
    ['the number 10', 10],
    ['the number 5', 5],
    ['the string "ADMINISTRATOR"', 'ADMINISTRATOR'],
    ['the string "USER"', 'USER'],
  ] as const) {
    it(`reads the level back as ${form} when it was registered that way`, async () => {
      const user = await createUser(server, root.token, { level });
      const res = await login(server, user.username, user.password);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true, username: user.username, level });
    });
  }

  it('accepts extra fields in the body', async () => {
    const user = await createUser(server, root.token);
    const res = await authenticate({ username: user.username, password: user.password, remember: true, nested: { a: 1 }, level: 10 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { success: true, username: user.username, level: 5 });
    assertSessionCookie(res, server);
  });

  it('returns 400 when the username is missing', async () => {
    assertError(await authenticate({ password: 'some-password' }), 400);
  });

  it('returns 400 when the password is missing', async () => {
    const user = await createUser(server, root.token);
    assertError(await authenticate({ username: user.username }), 400);
  });

  it('returns 400 when both fields are missing', async () => {
    assertError(await authenticate({}), 400);
  });

  it('returns 400 when there is no body at all', async () => {
    assertError(await server.request({ method: 'POST', path: '/api/auth/authenticate' }), 400);
  });

  it('returns 400 when the username is not a string', async () => {
    assertError(await authenticate({ username: 42, password: 'some-password' }), 400);
    assertError(await authenticate({ username: ['a'], password: 'some-password' }), 400);
  });

  it('returns 400 when the password is not a string', async () => {
    const user = await createUser(server, root.token);
    assertError(await authenticate({ username: user.username, password: 12345678 }), 400);
    assertError(await authenticate({ username: user.username, password: null }), 400);
    assertError(await authenticate({ username: user.username, password: { value: user.password } }), 400);
  });

  it('returns 401 with {code, message} and no cookie for an unknown username', async () => {
    const res = await authenticate({ username: uniqueName('nobody'), password: 'whatever-password' });
    assertError(res, 401);
  });

  it('returns 401 with {code, message} and no cookie for a wrong password', async () => {
    const user = await createUser(server, root.token);
    const res = await authenticate({ username: user.username, password: `${user.password}x` });
    assertError(res, 401);
  });

  it('answers an unknown username and a wrong password with the same body', async () => {
    const user = await createUser(server, root.token);
    const wrongPassword = await authenticate({ username: user.username, password: 'wrong-password' });
    const unknownUser = await authenticate({ username: uniqueName('ghost'), password: 'wrong-password' });
    assert.equal(wrongPassword.status, 401);
    assert.equal(unknownUser.status, 401);
    assert.deepEqual(wrongPassword.json, unknownUser.json);
  });

  it('compares the username exactly, so a different case is an unknown user', async () => {
    const user = await createUser(server, root.token, { username: uniqueName('CaseSensitive') });
    assertError(await authenticate({ username: user.username.toLowerCase(), password: user.password }), 401);
    assertError(await authenticate({ username: ` ${user.username}`, password: user.password }), 401);
  });

  it('compares the password exactly, so surrounding spaces make it wrong', async () => {
    const user = await createUser(server, root.token);
    assertError(await authenticate({ username: user.username, password: ` ${user.password}` }), 401);
    assertError(await authenticate({ username: user.username, password: user.password.toUpperCase() }), 401);
  });

  it('still logs in with the right password after a wrong one', async () => {
    const user = await createUser(server, root.token);
    assertError(await authenticate({ username: user.username, password: 'wrong-password' }), 401);
    const res = await authenticate({ username: user.username, password: user.password });
    assert.equal(res.status, 200);
    assertSessionCookie(res, server);
  });
});

describe('POST /api/auth/authenticate after too many failures', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_THROTTLE_USER: '3', GATEHOUSE_THROTTLE_WINDOW: '60' }));
  });
  after(() => server.close());

  it('returns 429 with Retry-After and no cookie, even for the right password, until the window passes', async () => {
    const user = await createUser(server, root.token);
    for (let attempt = 0; attempt < 3; attempt++) assertError(await login(server, user.username, 'wrong-password'), 401);
    const refused = await login(server, user.username, user.password);
    assertError(refused, 429);
    assert.equal(refused.headers['cache-control'], 'no-store');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After was ${String(refused.headers['retry-after'])}`);
    server.clock.advanceSeconds(61);
    const res = await login(server, user.username, user.password);
    assert.equal(res.status, 200);
    assertSessionCookie(res, server);
  });

  it('does not throttle one user for another user\'s failures', async () => {
    const victim = await createUser(server, root.token);
    const other = await createUser(server, root.token);
    for (let attempt = 0; attempt < 3; attempt++) assertError(await login(server, victim.username, 'wrong-password'), 401);
    const res = await login(server, other.username, other.password);
    assert.equal(res.status, 200);
    assertError(await login(server, victim.username, victim.password), 429);
  });
});
