import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertJsonContentType,
  assertNoCookie,
  assertTokenRefused,
  assertTokenWorks,
  createAdmin,
  createUser,
  deleteUser,
  listUsers,
  login,
  startPopulatedServer,
  uniqueName,
  withServer,
  type TestUser,
} from '../helpers/api.js';
import type { TestServer } from '../helpers/server.js';

describe('DELETE /api/auth/users/{username}', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const names = async (): Promise<string[]> => ((await listUsers(server, root.token)).json as Array<{ username: string }>).map((entry) => entry.username);

  it('answers 200 {username} and removes the user', async () => {
    const user = await createUser(server, root.token);
    const res = await deleteUser(server, root.token, user.username);
    assert.equal(res.status, 200);
    assertJsonContentType(res);
    assert.deepEqual(res.json, { username: user.username });
    assertNoCookie(res);
    assert.equal((await names()).includes(user.username), false);
  });

  it('refuses the deleted user\'s token and login with 401', async () => {
    const user = await createUser(server, root.token, { level: 10 });
    assert.equal((await deleteUser(server, root.token, user.username)).status, 200);
    await assertTokenRefused(server, user.token);
    assertError(await listUsers(server, user.token), 401);
    assertError(await login(server, user.username, user.password), 401);
  });

  it('leaves other users alone', async () => {
    const doomed = await createUser(server, root.token);
    const bystander = await createUser(server, root.token);
    assert.equal((await deleteUser(server, root.token, doomed.username)).status, 200);
    await assertTokenWorks(server, bystander.token, bystander.username);
    assert.equal((await login(server, bystander.username, bystander.password)).status, 200);
  });

  it('returns 500 USER_NOT_FOUND for a user that does not exist', async () => {
    assertError(await deleteUser(server, root.token, uniqueName('missing')), 500, 'USER_NOT_FOUND');
  });

  it('returns 500 USER_NOT_FOUND when the same user is deleted twice', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await deleteUser(server, root.token, user.username)).status, 200);
    assertError(await deleteUser(server, root.token, user.username), 500, 'USER_NOT_FOUND');
  });

  it('matches the name exactly: a different case is a different (missing) user', async () => {
    const user = await createUser(server, root.token, { username: uniqueName('MixedCase') });
    assertError(await deleteUser(server, root.token, user.username.toLowerCase()), 500, 'USER_NOT_FOUND');
    assert.equal((await names()).includes(user.username), true);
  });

  it('lets the same name be registered again after a delete, as a new user', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await deleteUser(server, root.token, user.username)).status, 200);
    const again = await createUser(server, root.token, { username: user.username, password: 'second-life-password', level: 'USER' });
    assertError(await login(server, user.username, user.password), 401);
    assert.deepEqual((await login(server, again.username, 'second-life-password')).json, { success: true, username: user.username, level: 'USER' });
  });

  it('deletes an administrator while another one remains', async () => {
    const admin = await createAdmin(server, root.token);
    const res = await deleteUser(server, root.token, admin.username);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username: admin.username });
  });

  it('lets an administrator delete itself while another one remains', async () => {
    const admin = await createAdmin(server, root.token, { level: 'ADMINISTRATOR' });
    const res = await deleteUser(server, admin.token, admin.username);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username: admin.username });
    await assertTokenRefused(server, admin.token);
  });

  it('returns 401 without credentials and deletes nothing', async () => {
    const user = await createUser(server, root.token);
    assertError(await deleteUser(server, undefined, user.username), 401);
    assertError(await deleteUser(server, 'not.a.token', user.username), 401);
    assert.equal((await names()).includes(user.username), true);
  });

  it('returns 403 when a non-admin deletes a user, even themselves', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const other = await createUser(server, root.token, { level: 'USER' });
    assertError(await deleteUser(server, user.token, other.username), 403);
    assertError(await deleteUser(server, user.token, user.username), 403);
    assertError(await deleteUser(server, other.token, root.username), 403);
    const remaining = await names();
    assert.equal(remaining.includes(user.username), true);
    assert.equal(remaining.includes(other.username), true);
  });

  it('addresses percent-encoded usernames with spaces and unicode', async () => {
    const spaced = await createUser(server, root.token, { username: uniqueName('Zoë Ölmez 名前 😀') });
    const res = await server.request({ method: 'DELETE', path: `/api/auth/users/${encodeURIComponent(spaced.username)}`, token: root.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username: spaced.username });
    assert.equal((await names()).includes(spaced.username), false);
  });

  it('decodes the path exactly once: "%2520" names a user with a literal "%20"', async () => {
    const base = uniqueName('pct');
    const spaced = await createUser(server, root.token, { username: `${base} x` });
    const literal = await createUser(server, root.token, { username: `${base}%20x` });
    const res = await server.request({ method: 'DELETE', path: `/api/auth/users/${base}%2520x`, token: root.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username: literal.username });
    const remaining = await names();
    assert.equal(remaining.includes(literal.username), false);
    assert.equal(remaining.includes(spaced.username), true);
  });

  it('reads "+" in the path as a plus sign, not a space', async () => {
    const base = uniqueName('plus');
    const plus = await createUser(server, root.token, { username: `${base}+x` });
    const spaced = await createUser(server, root.token, { username: `${base} x` });
    const res = await server.request({ method: 'DELETE', path: `/api/auth/users/${base}+x`, token: root.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username: plus.username });
    assert.equal((await names()).includes(spaced.username), true);
  });

  it('addresses names with "?" and "#" when they are percent-encoded', async () => {
    const user = await createUser(server, root.token, { username: uniqueName('what?#now') });
    const res = await deleteUser(server, root.token, user.username);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username: user.username });
  });

  // Names with "/" or dots, and "." / ".." refused: test/api/username-paths.test.ts.
});

describe('DELETE /api/auth/users/{username} and the last administrator', () => {
  it('returns 409 LAST_ADMINISTRATOR when the only administrator deletes itself', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const user = await createUser(server, admin.token, { level: 5 });
      assertError(await deleteUser(server, admin.token, admin.username), 409, 'LAST_ADMINISTRATOR');
      await assertTokenWorks(server, admin.token, admin.username);
      assert.equal((await login(server, admin.username, admin.password)).status, 200);
      assertError(await deleteUser(server, user.token, admin.username), 403);
    }));

  it('returns 409 for the last administrator after the others are deleted, whatever form its level has', () =>
    withServer(async (server) => {
      const first = await createUser(server, undefined, { level: 10 });
      const last = await createUser(server, first.token, { level: 'ADMINISTRATOR' });
      assert.equal((await deleteUser(server, last.token, first.username)).status, 200);
      assertError(await deleteUser(server, last.token, last.username), 409, 'LAST_ADMINISTRATOR');
      const check = await server.request({ path: '/api/auth/verify' });
      assert.equal(check.status, 401, 'the service must not fall back to its initial condition');
    }));

  it('deletes the only user-level accounts, which is no threat to the last administrator', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 'ADMINISTRATOR' });
      const user = await createUser(server, admin.token, { level: 'USER' });
      assert.equal((await deleteUser(server, admin.token, user.username)).status, 200);
      assert.deepEqual((await listUsers(server, admin.token)).json, [{ username: admin.username, level: 'ADMINISTRATOR' }]);
    }));
});
