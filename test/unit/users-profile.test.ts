// Accounts' e-mail address, display name and OpenID Connect subject in the users file: format 2
// only while an account holds one, kept through renames and credential changes, removable.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { newSessionKey } from '../../src/auth/session-key.js';
import { addUser, changeUser } from '../../src/store/account-rules.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { openUserStore, StoreCorrupt, USERS_FILE, type StoredUser } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import { checkDisplayName, checkEmail } from '../../src/validate/profile.js';

const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' } as const;
const SUB = 'AAAAAAAAAAAAAAAAAAAAAA';
let HASH = '';
before(async () => {
  HASH = await hashPassword('x', { N: 1024, r: 8, p: 1 });
});
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-profile-'));
  dirs.push(dir);
  return dir;
}

function account(username: string, overrides: Partial<StoredUser> = {}): StoredUser {
  return { username, level: 10, passwordHash: HASH, client: CLIENT, credentialsChangedAt: 1, sessionKey: newSessionKey(), ...overrides };
}

const formatOf = async (dir: string): Promise<unknown> =>
  (JSON.parse(await readFile(join(dir, USERS_FILE), 'utf8')) as { format: unknown }).format;

describe('profile fields in the users file', () => {
  it('keeps format 1 while no account has them, and goes to format 2 for one that does', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => addUser(view, account('ada')));
    assert.equal(await formatOf(dir), 1);
    await store.change((view) => changeUser(view, 'ada', { name: 'Ada L.' }, 2));
    assert.equal(await formatOf(dir), 2);
    await store.change((view) => changeUser(view, 'ada', { name: null }, 3));
    assert.equal(await formatOf(dir), 1);
  });

  it('reads back e-mail, its verification, name and sub as written', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => addUser(view, account('ada', { email: 'ada@example.org', emailVerified: true, name: 'Ada', sub: SUB })));
    const reopened = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const stored = reopened.find('ada');
    assert.equal(stored?.email, 'ada@example.org');
    assert.equal(stored?.emailVerified, true);
    assert.equal(stored?.name, 'Ada');
    assert.equal(stored?.sub, SUB);
  });

  it('refuses a file where emailVerified and email do not come together, or a malformed sub', async () => {
    for (const extra of [{ emailVerified: true }, { email: 'a@b.c' }, { sub: 'short' }, { email: 'not an address', emailVerified: false }]) {
      const dir = await tempDir();
      const entry = { ...account('ada'), ...extra };
      await writeFile(join(dir, USERS_FILE), JSON.stringify({ format: 2, users: [entry] }), { mode: 0o600 });
      await assert.rejects(openUserStore(dir, realFileSystem, FEATURE_FIELDS), StoreCorrupt, JSON.stringify(extra));
    }
  });

  it('keeps sub, e-mail and name through a rename and a new password, which end the sessions', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const original = account('ada', { email: 'ada@example.org', emailVerified: false, name: 'Ada', sub: SUB });
    await store.change((view) => addUser(view, original));
    await store.change((view) => changeUser(view, 'ada', { username: 'ada2', passwordHash: HASH }, 5));
    const renamed = store.find('ada2');
    assert.equal(renamed?.sub, SUB);
    assert.equal(renamed?.email, 'ada@example.org');
    assert.equal(renamed?.emailVerified, false);
    assert.equal(renamed?.name, 'Ada');
    assert.notEqual(renamed?.sessionKey, original.sessionKey);
  });

  it('sets an address verified or not as told, removes it with null, and keeps the sessions', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const original = account('ada');
    await store.change((view) => addUser(view, original));
    await store.change((view) => changeUser(view, 'ada', { email: { address: 'a@example.org', isVerified: true } }, 2));
    assert.equal(store.find('ada')?.emailVerified, true);
    await store.change((view) => changeUser(view, 'ada', { email: { address: 'b@example.org', isVerified: false } }, 3));
    assert.equal(store.find('ada')?.email, 'b@example.org');
    assert.equal(store.find('ada')?.emailVerified, false);
    await store.change((view) => changeUser(view, 'ada', { email: null }, 4));
    assert.equal(store.find('ada')?.email, undefined);
    assert.equal(Object.hasOwn(store.find('ada') ?? {}, 'emailVerified'), false);
    assert.equal(store.find('ada')?.sessionKey, original.sessionKey);
  });
});

describe('profile validators', () => {
  it('accepts ordinary addresses and refuses what is not one', () => {
    for (const good of ['ada@example.org', 'a.b+c@sub.example.co.uk', 'ünï@example.org']) assert.ok(checkEmail(good, 'email').ok, good);
    for (const bad of ['', 'ada', '@example.org', 'ada@', 'a b@example.org', 'a@b@c', 'a\u0000@b.c', 7, `${'a'.repeat(250)}@b.cd`]) {
      assert.equal(checkEmail(bad, 'email').ok, false, String(bad));
    }
  });

  it('accepts display names of 1 to 128 characters that are not only spaces', () => {
    assert.ok(checkDisplayName('Ada Lovelace', 'name').ok);
    for (const bad of ['', '   ', 'a'.repeat(129), 'a\nb', null]) assert.equal(checkDisplayName(bad, 'name').ok, false, String(bad));
  });
});
