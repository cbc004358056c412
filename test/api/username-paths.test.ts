import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { newSessionKey } from '../../src/auth/session-key.js';
import { assertError, createUser, listUsers, login, register, startPopulatedServer, uniqueName, updateUser, withServer, type TestUser } from '../helpers/api.js';
import { CLIENT_SETTINGS, startTestServer, type TestServer } from '../helpers/server.js';

// Every username that can be registered can be managed over the API. The path
// segment after /api/auth/users/ is percent-decoded exactly once, so %2F is part of the name;
// "." and ".." cannot be registered or renamed to (no client can send them as a path segment).

const names = async (server: TestServer, token: string): Promise<string[]> => ((await listUsers(server, token)).json as Array<{ username: string }>).map((user) => user.username);

describe('usernames with dots and slashes over the API', () => {
  let server: TestServer;
  let root: TestUser;

  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  for (const shape of ['a/b', '../x', '...', '.hidden', '/', 'x/..', './x', 'a/../b', '%2F']) {
    it(`registers, updates, renames and deletes a user named like ${JSON.stringify(shape)}`, async () => {
      const exact = shape;
      const user = await createUser(server, root.token, { username: exact });

      const patched = await updateUser(server, root.token, exact, { level: 10 });
      assert.equal(patched.status, 200, patched.text);
      const renamedTo = `${exact}/renamed`;
      const renamed = await updateUser(server, root.token, exact, { username: renamedTo });
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal((await login(server, renamedTo, user.password)).status, 200);

      const deleted = await server.request({ method: 'DELETE', path: `/api/auth/users/${encodeURIComponent(renamedTo)}`, token: root.token });
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(deleted.json, { username: renamedTo });
      assert.equal((await names(server, root.token)).includes(renamedTo), false);
    });
  }

  it('decodes %2F (either case) as part of the name, exactly once', async () => {
    const user = await createUser(server, root.token, { username: uniqueName('p/q') });
    const [head, tail] = user.username.split('/') as [string, string];
    const res = await server.request({ method: 'PATCH', path: `/api/auth/users/${head}%2f${tail}`, body: { level: 10 }, token: root.token });
    assert.equal(res.status, 200, res.text);
    // %252F decodes once to "%2F", a name nobody has: the contract's 500 USER_NOT_FOUND, and the user stays.
    assertError(await server.request({ method: 'DELETE', path: `/api/auth/users/${head}%252F${tail}`, token: root.token }), 500, 'USER_NOT_FOUND');
    assert.ok((await names(server, root.token)).includes(user.username));
  });

  it('keeps a bad escape a 400', async () => {
    for (const path of ['/api/auth/users/%zz', '/api/auth/users/a%2', '/api/auth/users/%E0%A4']) {
      assertError(await server.request({ method: 'DELETE', path, token: root.token }), 400, 'INVALID_PATH_PARAMETER');
    }
  });

  for (const username of ['.', '..']) {
    it(`refuses to register ${JSON.stringify(username)} with 400 saying it is a dot segment`, async () => {
      const res = await register(server, { username, password: 'dot-password', client: CLIENT_SETTINGS, level: 5 }, { token: root.token, query: '?cookie=false' });
      assertError(res, 400, 'VALIDATION_FAILED');
      assert.match((res.json as { message: string }).message, /dot segment/);
      assert.equal((await names(server, root.token)).includes(username), false);
    });

    it(`refuses to rename a user to ${JSON.stringify(username)} with 400, leaving the user as it was`, async () => {
      const user = await createUser(server, root.token);
      const res = await updateUser(server, root.token, user.username, { username });
      assertError(res, 400, 'VALIDATION_FAILED');
      assert.match((res.json as { message: string }).message, /dot segment/);
      assert.ok((await names(server, root.token)).includes(user.username));
    });
  }

  it('refuses the first registration of ".." too', () =>
    withServer(async (own) => {
      assertError(await register(own, { username: '..', password: 'dot-password', client: CLIENT_SETTINGS, level: 10 }), 400, 'VALIDATION_FAILED');
      assert.equal((await own.request({ path: '/api/auth/verify' })).status, 200, 'still in the initial condition');
    }));
});

describe('a users file from an older version holding "." and ".."', () => {
  it('still loads: those users log in, are listed, and their paths answer 400', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-dots-'));
    const passwordHash = await hashPassword('old-password', { N: 1024, r: 8, p: 1 });
    const user = (username: string, level: number) => ({ username, level, passwordHash, client: CLIENT_SETTINGS, credentialsChangedAt: 1_700_000_000, sessionKey: newSessionKey() });
    await writeFile(join(dir, 'users.json'), JSON.stringify({ format: 1, users: [user('admin', 10), user('.', 5), user('..', 5)] }), { mode: 0o600 });
    const server = await startTestServer({}, { dataDir: dir });
    try {
      const admin = await login(server, 'admin', 'old-password');
      assert.equal(admin.status, 200);
      const token = admin.cookieToken ?? '';
      assert.deepEqual((await names(server, token)).sort(), ['.', '..', 'admin']);
      assert.equal((await login(server, '..', 'old-password')).status, 200);
      for (const path of ['/api/auth/users/..', '/api/auth/users/%2E%2E', '/api/auth/users/.', '/api/auth/users/%2e']) {
        assertError(await server.request({ method: 'DELETE', path, token }), 400, 'INVALID_PATH_PARAMETER');
      }
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// Names that differ only by an invisible format character (U+200B, U+FEFF, U+00AD, U+2060, ...)
// or a Hangul filler look the same: a second one is refused as taken
// (docs/contract/access.md "Look-alike names"; test/api/look-alike-names.test.ts). A name holding
// one is still stored, listed and signed
// in exactly as sent; logs and `users list` escape those characters (test/unit/log-escaping.test.ts,
// test/cli/cli-users-names.test.ts).
describe('usernames with invisible characters over the API', () => {
  let server: TestServer;
  let root: TestUser;

  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('keeps a name with an invisible character exactly, and refuses the names that differ from it only by such characters', async () => {
    const base = uniqueName('look');
    const shapes = [`${base.slice(0, 2)}\u200b${base.slice(2)}`, base, `${base}\ufeff`, `\u00ad${base}`, `${base}\u2060`, `\u3164${base}`, `${base}\u{e0020}`];
    const kept = await createUser(server, root.token, { username: shapes[0] ?? '' });
    for (const username of shapes.slice(1)) {
      assertError(await register(server, { username, password: 'pw-pw-pw', client: CLIENT_SETTINGS, level: 5 }, { token: root.token, query: '?cookie=false' }), 500, 'USERNAME_TAKEN');
    }
    const listed = await names(server, root.token);
    assert.ok(listed.includes(kept.username), `${JSON.stringify(kept.username)} is listed exactly`);
    assert.deepEqual(listed.filter((name) => name.includes(base.slice(2))), [kept.username]);
    assert.equal((await login(server, kept.username, kept.password)).status, 200);
    assertError(await login(server, base, kept.password), 401, 'INVALID_CREDENTIALS');
  });
});
