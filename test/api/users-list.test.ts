import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertJsonContentType,
  createUser,
  listUsers,
  register,
  signToken,
  startPopulatedServer,
  uniqueName,
  type TestUser,
} from '../helpers/api.js';
import { CLIENT_SETTINGS, type TestServer } from '../helpers/server.js';

interface Entry {
  readonly username: string;
  readonly level: unknown;
}

describe('GET /api/auth/users', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  async function entries(token: string): Promise<Entry[]> {
    const res = await listUsers(server, token);
    assert.equal(res.status, 200, res.text);
    assertJsonContentType(res);
    assert.ok(Array.isArray(res.json), res.text);
    return res.json as Entry[];
  }

  it('answers 200 with an array of {username, level} and nothing else per entry', async () => {
    await createUser(server, root.token);
    const list = await entries(root.token);
    assert.ok(list.length >= 2);
    for (const entry of list) {
      assert.deepEqual(Object.keys(entry).sort(), ['level', 'username'], JSON.stringify(entry));
      assert.equal(typeof entry.username, 'string');
      assert.ok([10, 5, 'ADMINISTRATOR', 'USER'].includes(entry.level as never), JSON.stringify(entry));
    }
  });

  it('lists each user once, with the level in the form it was written', async () => {
    const users = await Promise.all(([10, 5, 'ADMINISTRATOR', 'USER'] as const).map((level) => createUser(server, root.token, { level })));
    const list = await entries(root.token);
    for (const user of users) {
      assert.deepEqual(list.filter((entry) => entry.username === user.username), [{ username: user.username, level: user.level }]);
    }
    assert.equal(new Set(list.map((entry) => entry.username)).size, list.length);
  });

  it('includes users added with ?cookie=false', async () => {
    const username = uniqueName('quiet');
    const res = await register(server, { username, password: 'quiet-password', client: CLIENT_SETTINGS, level: 5 }, { token: root.token, query: '?cookie=false' });
    assert.equal(res.status, 200);
    assert.deepEqual((await entries(root.token)).filter((entry) => entry.username === username), [{ username, level: 5 }]);
  });

  it('never includes password hashes or client settings', async () => {
    const user = await createUser(server, root.token);
    const res = await listUsers(server, root.token);
    assert.equal(res.text.includes(user.password), false);
    assert.equal(res.text.includes('scrypt'), false);
    assert.equal(res.text.includes(CLIENT_SETTINGS.socket), false);
    assert.equal(res.text.includes('password'), false);
  });

  it('answers administrators whose level is written either way', async () => {
    for (const level of [10, 'ADMINISTRATOR'] as const) {
      const admin = await createUser(server, root.token, { level });
      const list = await entries(admin.token);
      assert.ok(list.some((entry) => entry.username === admin.username));
    }
  });

  it('accepts the token in the ?token= query parameter', async () => {
    const res = await server.request({ path: `/api/auth/users?token=${root.token}` });
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.json));
  });

  it('returns 401 {code, message} without credentials', async () => {
    const res = await server.request({ path: '/api/auth/users' });
    assertError(res, 401, 'AUTH_REQUIRED');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });

  it('returns 401 for an invalid token', async () => {
    assertError(await listUsers(server, 'not.a.token'), 401, 'AUTH_REQUIRED');
    assertError(await listUsers(server, `${root.token}x`), 401, 'AUTH_REQUIRED');
  });

  it('returns 401 for a correctly signed token naming a user that does not exist', async () => {
    const iat = Math.floor(server.clock.now() / 1000);
    assertError(await listUsers(server, signToken({ username: uniqueName('ghost'), iat, exp: iat + 3600 })), 401);
  });

  it('returns 403 when a non-admin lists users', async () => {
    for (const level of [5, 'USER'] as const) {
      const user = await createUser(server, root.token, { level });
      const res = await listUsers(server, user.token);
      assertError(res, 403, 'NOT_ADMINISTRATOR');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    }
  });
});
