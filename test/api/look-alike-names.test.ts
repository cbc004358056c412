// Look-alike usernames (docs/contract/access.md "Look-alike names", "Remote-User"): a name whose NFKC case-folded
// form without default-ignorable code points equals an existing account's is refused wherever an
// account is made or renamed over the API, as a taken name is (500 USERNAME_TAKEN); accounts that
// already look alike stay as they are. The offline command: test/cli/cli-users-names.test.ts.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newSessionKey } from '../../src/auth/session-key.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { openUserStore } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import { assertError, createUser, login, startPopulatedServer, uniqueName, updateUser, type TestUser } from '../helpers/api.js';
import { CLIENT_SETTINGS, startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

/** Names that look like `name` to a person: other case, width, invisible characters. */
const lookAlikesOf = (name: string): string[] => [
  name.toUpperCase(),
  `${name[0]?.toUpperCase()}${name.slice(1)}`,
  `${name}\u200b`,
  `\u00ad${name}`,
  [...name].map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0)).join(''), // fullwidth
];

describe('look-alike usernames', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const register = (username: string): Promise<TestResponse> =>
    server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: root.token, body: { username, password: 'pw-pw-pw', client: CLIENT_SETTINGS, level: 5 } });
  const addAccount = (username: string): Promise<TestResponse> =>
    server.request({ method: 'POST', path: '/api/auth/users', token: root.token, body: { username, password: 'pw-pw-pw-pw-pw', level: 'USER' } });

  it('gives every look-alike of "admin" the key of "admin" (the example names)', async () => {
    const admin = await createUser(server, root.token, { username: uniqueName('admin') });
    const fullwidth = lookAlikesOf(admin.username).at(-1) ?? '';
    assert.match(fullwidth, /^ａｄｍｉｎ/);
    for (const name of lookAlikesOf(admin.username)) {
      const res = await register(name);
      assertError(res, 500, 'USERNAME_TAKEN');
      assert.match((res.json as { message: string }).message, /case, width or invisible characters/);
    }
  });

  it('refuses a look-alike on register, on POST /api/auth/users and on a rename, and makes no account', async () => {
    const taken = await createUser(server, root.token, { username: uniqueName('carol') });
    const other = await createUser(server, root.token, { username: uniqueName('dave') });
    for (const name of lookAlikesOf(taken.username)) {
      assertError(await register(name), 500, 'USERNAME_TAKEN');
      assertError(await addAccount(name), 500, 'USERNAME_TAKEN');
      assertError(await updateUser(server, root.token, other.username, { username: name }), 500, 'USERNAME_TAKEN');
    }
    const names = (await server.request({ path: '/api/auth/users', token: root.token })).json as Array<{ username: string }>;
    const folded = names.filter((entry) => entry.username.toLowerCase().includes(taken.username.toLowerCase()));
    assert.deepEqual(folded.map((entry) => entry.username), [taken.username]);
    assert.equal((await login(server, other.username, other.password)).status, 200, 'the refused rename left the account as it was');
  });

  it('lets an account be renamed to a look-alike of its own name, and any name that only resembles another', async () => {
    const erin = await createUser(server, root.token, { username: uniqueName('erin') });
    const renamed = erin.username.toUpperCase();
    assert.equal((await updateUser(server, root.token, erin.username, { username: renamed })).status, 200);
    assert.equal((await login(server, renamed, erin.password)).status, 200);
    for (const name of [`${erin.username}1`, `${erin.username.replace('erin', 'erín')}`]) {
      assert.equal((await addAccount(name)).status, 200, name);
    }
  });
});

describe('accounts that already look alike', () => {
  let dataDir: string;
  let server: TestServer;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-look-alike-'));
    const first = await startTestServer({}, { dataDir });
    const root = await createUser(first, undefined, { username: 'root', password: 'root-password', level: 10 });
    await createUser(first, root.token, { username: 'dup', password: 'dup-password' });
    await first.close();
    // Made before look-alikes were refused: written into the users file past the rule.
    const store = await openUserStore(dataDir, realFileSystem, FEATURE_FIELDS);
    const dup = store.find('dup');
    assert.ok(dup !== undefined);
    await store.change((view) => view.set({ ...dup, username: 'DUP', sessionKey: newSessionKey() }));
    await store.close();
    server = await startTestServer({}, { dataDir });
  });
  after(async () => {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stay as they are: both sign in and can be changed, and neither can be renamed onto the other\'s look-alike', async () => {
    const root = (await login(server, 'root', 'root-password')).cookieToken ?? '';
    assert.equal((await login(server, 'dup', 'dup-password')).status, 200);
    assert.equal((await login(server, 'DUP', 'dup-password')).status, 200);
    assert.equal((await updateUser(server, root, 'DUP', { level: 'ADMINISTRATOR' })).status, 200);
    assert.equal((await updateUser(server, root, 'DUP', { password: 'new-password' })).status, 200);
    assertError(await updateUser(server, root, 'DUP', { username: 'Dup' }), 500, 'USERNAME_TAKEN');
    assert.equal((await server.request({ method: 'DELETE', path: '/api/auth/users/DUP', token: root })).status, 200);
    assert.equal((await login(server, 'dup', 'dup-password')).status, 200);
  });
});
