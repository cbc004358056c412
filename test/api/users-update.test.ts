import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertJsonContentType,
  assertNoCookie,
  assertSessionCookie,
  assertTokenRefused,
  assertTokenWorks,
  createAdmin,
  createUser,
  listUsers,
  login,
  register,
  startPopulatedServer,
  uniqueName,
  updateUser,
  withServer,
  type TestUser,
} from '../helpers/api.js';
import { CLIENT_SETTINGS, type TestServer } from '../helpers/server.js';

const TCP_CLIENT = Object.freeze({ client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 5000 });

describe('PATCH /api/auth/users/{username}', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const levelOf = async (username: string): Promise<unknown> => {
    const list = (await listUsers(server, root.token)).json as Array<{ username: string; level: unknown }>;
    return list.find((entry) => entry.username === username)?.level;
  };

  it('answers 200 {} to a password change; the old password fails and the new one works', async () => {
    const user = await createUser(server, root.token);
    const res = await updateUser(server, root.token, user.username, { password: 'brand-new-password' });
    assert.equal(res.status, 200);
    assertJsonContentType(res);
    assert.deepEqual(res.json, {});
    assertNoCookie(res);
    assertError(await login(server, user.username, user.password), 401);
    const loggedIn = await login(server, user.username, 'brand-new-password');
    assert.deepEqual(loggedIn.json, { success: true, username: user.username, level: 5 });
  });

  it('changes only the level when only the level is sent', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const res = await updateUser(server, root.token, user.username, { level: 10 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {});
    const loggedIn = await login(server, user.username, user.password);
    assert.deepEqual(loggedIn.json, { success: true, username: user.username, level: 10 });
    const token = assertSessionCookie(loggedIn, server);
    assert.equal((await listUsers(server, token)).status, 200);
  });

  it('reads a changed level back in the form it was last written', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    assert.equal((await updateUser(server, root.token, user.username, { level: 'USER' })).status, 200);
    assert.equal(await levelOf(user.username), 'USER');
    assert.equal((await updateUser(server, root.token, user.username, { level: 'ADMINISTRATOR' })).status, 200);
    assert.equal(await levelOf(user.username), 'ADMINISTRATOR');
    assert.equal((await updateUser(server, root.token, user.username, { level: 10 })).status, 200);
    assert.equal(await levelOf(user.username), 10);
  });

  it('takes away administration when an admin is demoted', async () => {
    const admin = await createAdmin(server, root.token);
    assert.equal((await updateUser(server, root.token, admin.username, { level: 'USER' })).status, 200);
    const loggedIn = await login(server, admin.username, admin.password);
    assert.deepEqual(loggedIn.json, { success: true, username: admin.username, level: 'USER' });
    assertError(await listUsers(server, assertSessionCookie(loggedIn, server)), 403);
  });

  it('renames a user: the old name is gone and the new name logs in with the same password', async () => {
    const user = await createUser(server, root.token);
    const renamed = uniqueName('renamed');
    const res = await updateUser(server, root.token, user.username, { username: renamed });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {});
    assertError(await login(server, user.username, user.password), 401);
    const loggedIn = await login(server, renamed, user.password);
    assert.deepEqual(loggedIn.json, { success: true, username: renamed, level: 5 });
    const names = ((await listUsers(server, root.token)).json as Array<{ username: string }>).map((entry) => entry.username);
    assert.equal(names.includes(user.username), false);
    assert.equal(names.includes(renamed), true);
    assertError(await updateUser(server, root.token, user.username, { level: 5 }), 500, 'USER_NOT_FOUND');
  });

  it('changes several fields at once', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const renamed = uniqueName('multi');
    const res = await updateUser(server, root.token, user.username, { username: renamed, password: 'multi-password', level: 'ADMINISTRATOR', client: TCP_CLIENT });
    assert.equal(res.status, 200);
    const loggedIn = await login(server, renamed, 'multi-password');
    assert.deepEqual(loggedIn.json, { success: true, username: renamed, level: 'ADMINISTRATOR' });
  });

  it('changes the client settings and keeps the user\'s tokens valid', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    const res = await updateUser(server, root.token, user.username, { client: TCP_CLIENT });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {});
    await assertTokenWorks(server, user.token, user.username);
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('answers 200 {} to an empty body and changes nothing', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    const res = await updateUser(server, root.token, user.username, {});
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {});
    await assertTokenWorks(server, user.token, user.username);
    assert.equal(await levelOf(user.username), 5);
  });

  it('strips unknown top-level fields and applies the known ones', async () => {
    const user = await createUser(server, root.token);
    const res = await updateUser(server, root.token, user.username, { password: 'stripped-password', isAdmin: true, credentialsChangedAt: 0 });
    assert.equal(res.status, 200);
    assert.equal((await login(server, user.username, 'stripped-password')).status, 200);
    assert.equal(await levelOf(user.username), 5);
  });

  it('accepts renaming a user to its own name', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await updateUser(server, root.token, user.username, { username: user.username })).status, 200);
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('returns 500 USERNAME_TAKEN when renaming onto a taken name, and changes nothing', async () => {
    const user = await createUser(server, root.token);
    const other = await createUser(server, root.token);
    const res = await updateUser(server, root.token, user.username, { username: other.username, password: 'should-not-apply' });
    assertError(res, 500, 'USERNAME_TAKEN');
    assert.equal((await login(server, user.username, user.password)).status, 200);
    assert.equal((await login(server, other.username, other.password)).status, 200);
  });

  it('returns 500 USER_NOT_FOUND for a user that does not exist', async () => {
    assertError(await updateUser(server, root.token, uniqueName('missing'), { level: 5 }), 500, 'USER_NOT_FOUND');
  });

  it('returns 401 without credentials and changes nothing', async () => {
    const user = await createUser(server, root.token);
    assertError(await updateUser(server, undefined, user.username, { password: 'hijacked-password' }), 401);
    assertError(await updateUser(server, 'not.a.token', user.username, { password: 'hijacked-password' }), 401);
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('returns 403 when a non-admin updates a user, even themselves', async () => {
    const user = await createUser(server, root.token, { level: 'USER' });
    const other = await createUser(server, root.token);
    assertError(await updateUser(server, user.token, other.username, { password: 'hijacked-password' }), 403);
    assertError(await updateUser(server, user.token, user.username, { level: 'ADMINISTRATOR' }), 403);
    assert.equal(await levelOf(user.username), 'USER');
    assert.equal((await login(server, other.username, other.password)).status, 200);
  });

  it('returns 400 for invalid client settings and changes nothing', async () => {
    const user = await createUser(server, root.token);
    for (const client of [
      { ...CLIENT_SETTINGS, client: 'uTorrent' },
      { ...CLIENT_SETTINGS, extra: true },
      { ...CLIENT_SETTINGS, version: 2 },
      { client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 70000 },
      { client: 'qBittorrent', type: 'web', version: 1, url: 'ftp://x', username: 'u', password: 'p' },
      'rTorrent',
      null,
    ]) {
      assertError(await updateUser(server, root.token, user.username, { client, password: 'should-not-apply' }), 400);
    }
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('returns 400 for an invalid level, username or password', async () => {
    const user = await createUser(server, root.token);
    for (const patch of [
      { level: 'SUPERUSER' },
      { level: 1 },
      { level: null },
      { username: '' },
      { username: 'x'.repeat(257) },
      { username: 'bad\nname' },
      { username: 42 },
      { password: '' },
      { password: 'p'.repeat(1025) },
      { password: null },
    ]) {
      assertError(await updateUser(server, root.token, user.username, patch), 400);
    }
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('returns 400 for a body that is not a JSON object', async () => {
    const user = await createUser(server, root.token);
    assertError(await updateUser(server, root.token, user.username, [{ level: 10 }]), 400);
    assertError(await updateUser(server, root.token, user.username, 'null'), 400);
  });

  it('refuses the user\'s older tokens after a password change', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, user.username, { password: 'changed-password' })).status, 200);
    await assertTokenRefused(server, user.token);
    const fresh = assertSessionCookie(await login(server, user.username, 'changed-password'), server);
    await assertTokenWorks(server, fresh, user.username);
  });

  it('refuses the user\'s older tokens after a level change', async () => {
    const admin = await createAdmin(server, root.token);
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, admin.username, { level: 5 })).status, 200);
    await assertTokenRefused(server, admin.token);
    assertError(await listUsers(server, admin.token), 401);
  });

  it('refuses the user\'s older tokens after a promotion too', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, user.username, { level: 10 })).status, 200);
    await assertTokenRefused(server, user.token);
  });

  it('refuses the user\'s older tokens after a rename, also once the old name is registered again', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, user.username, { username: uniqueName('moved') })).status, 200);
    await assertTokenRefused(server, user.token);
    const reused = await register(server, { username: user.username, password: 'reused-password', client: CLIENT_SETTINGS, level: 10 }, { token: root.token, query: '?cookie=false' });
    assert.equal(reused.status, 200);
    await assertTokenRefused(server, user.token);
    assertError(await listUsers(server, user.token), 401);
  });

  // The session a change hands out works at once, even within the same second. A
  // token from just before the change, in that same second, is refused: every change replaces
  // the user's session key.
  it('accepts a login made in the same second right after a password change, and refuses one made just before it', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    const justBefore = assertSessionCookie(await login(server, user.username, user.password), server);
    assert.equal((await updateUser(server, root.token, user.username, { password: 'same-second-password' })).status, 200);
    const justAfter = assertSessionCookie(await login(server, user.username, 'same-second-password'), server);
    await assertTokenWorks(server, justAfter, user.username);
    await assertTokenRefused(server, justBefore);
    await assertTokenRefused(server, user.token);
  });

  it('keeps the user\'s tokens valid when only the client settings change', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, user.username, { client: TCP_CLIENT })).status, 200);
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, user.username, { client: CLIENT_SETTINGS })).status, 200);
    await assertTokenWorks(server, user.token, user.username);
  });

  // docs/contract/flood-api.md "Values": levels are compared through one internal enum, never by raw value, so
  // rewriting a level in its other form (10 -> "ADMINISTRATOR") is no level change.
  it('keeps the user\'s tokens valid when the level is only rewritten in its other form', async () => {
    const admin = await createUser(server, root.token, { level: 10 });
    const user = await createUser(server, root.token, { level: 5 });
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, admin.username, { level: 'ADMINISTRATOR' })).status, 200);
    assert.equal((await updateUser(server, root.token, user.username, { level: 'USER' })).status, 200);
    await assertTokenWorks(server, admin.token, admin.username);
    await assertTokenWorks(server, user.token, user.username);
  });

  it('leaves other users\' tokens valid when one user changes', async () => {
    const user = await createUser(server, root.token);
    const bystander = await createUser(server, root.token);
    server.clock.advanceSeconds(1);
    assert.equal((await updateUser(server, root.token, user.username, { password: 'other-change-password' })).status, 200);
    await assertTokenWorks(server, bystander.token, bystander.username);
    await assertTokenWorks(server, root.token, root.username);
  });

  it('addresses percent-encoded usernames with spaces and unicode', async () => {
    const user = await createUser(server, root.token, { username: uniqueName('Zoë Ölmez 名前') });
    const res = await server.request({ method: 'PATCH', path: `/api/auth/users/${encodeURIComponent(user.username)}`, body: { level: 'USER' }, token: root.token });
    assert.equal(res.status, 200);
    assert.equal(await levelOf(user.username), 'USER');
  });
});

describe('PATCH /api/auth/users/{username} and the last administrator', () => {
  const start = async (): Promise<{ server: TestServer; admin: TestUser }> => {
    const { server, root } = await startPopulatedServer();
    return { server, admin: root };
  };

  it('returns 409 LAST_ADMINISTRATOR when the only administrator is demoted, in either form', async () => {
    const { server, admin } = await start();
    try {
      const user = await createUser(server, admin.token, { level: 5 });
      for (const level of [5, 'USER'] as const) {
        assertError(await updateUser(server, admin.token, admin.username, { level }), 409, 'LAST_ADMINISTRATOR');
      }
      const loggedIn = await login(server, admin.username, admin.password);
      assert.deepEqual(loggedIn.json, { success: true, username: admin.username, level: 10 });
      assert.equal((await listUsers(server, admin.token)).status, 200);
      assertError(await listUsers(server, user.token), 403);
    } finally {
      await server.close();
    }
  });

  it('lets the only administrator change the form of its own level, which is no demotion', async () => {
    const { server, admin } = await start();
    try {
      const res = await updateUser(server, admin.token, admin.username, { level: 'ADMINISTRATOR' });
      assert.equal(res.status, 200);
      const loggedIn = await login(server, admin.username, admin.password);
      assert.deepEqual(loggedIn.json, { success: true, username: admin.username, level: 'ADMINISTRATOR' });
    } finally {
      await server.close();
    }
  });

  it('demotes an administrator while another one remains, then refuses the last', async () => {
    const { server, admin } = await start();
    try {
      const second = await createAdmin(server, admin.token);
      assert.equal((await updateUser(server, admin.token, second.username, { level: 'USER' })).status, 200);
      assertError(await updateUser(server, admin.token, admin.username, { level: 'USER' }), 409, 'LAST_ADMINISTRATOR');
    } finally {
      await server.close();
    }
  });

  it('lets the only administrator change its own password and name', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const renamed = uniqueName('renamed-admin');
      assert.equal((await updateUser(server, admin.token, admin.username, { username: renamed, password: 'admin-new-password' })).status, 200);
      const loggedIn = await login(server, renamed, 'admin-new-password');
      assert.deepEqual(loggedIn.json, { success: true, username: renamed, level: 10 });
    }));
});
