import assert from 'node:assert/strict';
import { newSessionKey } from '../../src/auth/session-key.js';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { LastAdministrator, StoreWriteFailed, UsernameLookAlike, UsernameTaken, UserNotFound, StoreOutcomeUnknown, StoreClosed } from '../../src/errors.js';
import { addUser, changeUser, removeUser } from '../../src/store/account-rules.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';
import { openUserStore, StoreCorrupt, StoreTooNew, USERS_FILE, type StoredUser, type UserStore } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import type { ClientSettings } from '../../src/validate/client-settings.js';
import type { AccessLevel } from '../../src/validate/level.js';

const CLIENT: ClientSettings = { client: 'rTorrent', type: 'socket', version: 1, socket: '/run/rtorrent.sock' };
const OTHER_CLIENT: ClientSettings = { client: 'Deluge', type: 'rpc', version: 1, host: 'localhost', port: 58846, username: 'u', password: 'p' };
const CREATED_AT = 1_000_000;

let HASH = '';
let OTHER_HASH = '';
before(async () => {
  [HASH, OTHER_HASH] = await Promise.all([hashPassword('x', { N: 1024, r: 8, p: 1 }), hashPassword('y', { N: 1024, r: 8, p: 1 })]);
});

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-users-'));
  dirs.push(dir);
  return dir;
}

function user(username: string, level: AccessLevel = 5, overrides: Partial<StoredUser> = {}): StoredUser {
  return { username, level, passwordHash: HASH, client: CLIENT, credentialsChangedAt: CREATED_AT, sessionKey: newSessionKey(), ...overrides };
}

/** realFileSystem that counts renames (one per committed write) and can be told to fail them. */
function countingFileSystem(): StoreFileSystem & { writes: number; failRenames: boolean; failDirectorySync: boolean; failRestore: boolean } {
  const fs = {
    writes: 0,
    failRenames: false,
    failDirectorySync: false,
    failRestore: false,
    ...realFileSystem,
    async link(existing: string, newPath: string) {
      // The rollback after a failed directory fsync links users.json.prev back into place.
      if (fs.failRestore && existing.endsWith('.prev')) throw Object.assign(new Error('simulated EIO'), { code: 'EIO' });
      await realFileSystem.link(existing, newPath);
    },
    async open(path: string, flags: string, mode?: number) {
      const handle = await realFileSystem.open(path, flags, mode);
      if (flags !== 'r') return handle;
      return {
        write: handle.write.bind(handle),
        stat: handle.stat.bind(handle),
        close: handle.close.bind(handle),
        sync: async () => {
          if (fs.failDirectorySync) throw Object.assign(new Error('simulated EIO'), { code: 'EIO' });
          await handle.sync();
        },
      };
    },
    async rename(from: string, to: string) {
      if (fs.failRenames) throw Object.assign(new Error('simulated EIO'), { code: 'EIO' });
      fs.writes++;
      await realFileSystem.rename(from, to);
    },
  };
  return fs;
}

async function storeWith(users: readonly StoredUser[], fs: StoreFileSystem = realFileSystem): Promise<{ dir: string; store: UserStore }> {
  const dir = await tempDir();
  const seed = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
  for (const u of users) await seed.change((view) => addUser(view, u));
  return { dir, store: await openUserStore(dir, fs, FEATURE_FIELDS) };
}

async function reopened(dir: string): Promise<UserStore> {
  return openUserStore(dir, realFileSystem, FEATURE_FIELDS);
}

const names = (store: UserStore): string[] => [...store.list()].map((u) => u.username).sort();

async function rejectsWith(promise: Promise<unknown>, errorClass: new (...args: never[]) => Error, code?: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${String(error)}`);
    if (code !== undefined) assert.equal((error as { code?: unknown }).code, code);
    return true;
  });
}

describe('openUserStore', () => {
  it('reads the fields features keep with the checks the features give, and refuses what a check refuses', async () => {
    const totp = { sealedSeed: 'made by a feature', lastUsedStep: 7, recoveryDigests: [] };
    const loose = { ...FEATURE_FIELDS, totp: (input: unknown) => ({ ok: true as const, value: input as typeof totp }) };
    const dir = await tempDir();
    const seed = await openUserStore(dir, realFileSystem, loose);
    await seed.change((view) => addUser(view, user('alice', 5, { totp })));
    assert.deepEqual((await openUserStore(dir, realFileSystem, loose)).find('alice')?.totp, totp);
    // TOTP's own check (src/totp/stored.ts) refuses a seed not sealed in its format.
    await assert.rejects(openUserStore(dir, realFileSystem, FEATURE_FIELDS), (error: unknown) =>
      error instanceof StoreCorrupt && error.message.includes('users[0].totp.sealedSeed'));
    const refusing = { ...FEATURE_FIELDS, totp: (_input: unknown, path: string) => ({ ok: false as const, problems: [{ path, message: 'is refused by its feature' }] }) };
    await assert.rejects(openUserStore(dir, realFileSystem, refusing), (error: unknown) =>
      error instanceof StoreCorrupt && error.message.includes('users[0].totp is refused by its feature'));
  });

  it('starts empty when there is no users file, without creating one', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    assert.equal(store.size, 0);
    assert.deepEqual([...store.list()], []);
    assert.deepEqual(await readdir(dir), []);
  });

  it('resolves a change only once the file holds it', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const alice = user('alice', 10);
    await store.change((view) => addUser(view, alice));
    assert.deepEqual((await reopened(dir)).find('alice'), alice);
    const document = JSON.parse(await readFile(join(dir, USERS_FILE), 'utf8')) as { format: number; users: unknown[] };
    assert.equal(document.format, 1);
    assert.deepEqual(document.users, [alice]);
  });

  it('writes the users file with mode 0600 and keeps the previous version as .prev', async () => {
    const { dir, store } = await storeWith([user('alice', 10)]);
    await store.change((view) => addUser(view, user('bob')));
    assert.equal((await stat(join(dir, USERS_FILE))).mode & 0o777, 0o600);
    const previous = JSON.parse(await readFile(join(dir, `${USERS_FILE}.prev`), 'utf8')) as { users: Array<{ username: string }> };
    assert.deepEqual(previous.users.map((u) => u.username), ['alice']);
    assert.deepEqual((await readdir(dir)).sort(), [USERS_FILE, `${USERS_FILE}.prev`]);
  });

  it('resolves with what the change returned', async () => {
    const { store } = await storeWith([]);
    assert.equal(await store.change((view) => (addUser(view, user('a', 10)), 'done')), 'done');
  });

  it('does not write when a change changes nothing', async () => {
    const fs = countingFileSystem();
    const { dir, store } = await storeWith([], fs);
    assert.equal(await store.change((view) => view.size), 0);
    assert.equal(fs.writes, 0);
    assert.deepEqual(await readdir(dir), []);
  });

  it('rejects a throwing change with its own error and keeps nothing it did, even when batched with others', async () => {
    const fs = countingFileSystem();
    const { dir, store } = await storeWith([], fs);
    const thrown = new RangeError('refused by the change itself');
    // The first change occupies the writer, so the next three are committed as one batch.
    const first = store.change((view) => addUser(view, user('warm', 10)));
    const x = store.change((view) => addUser(view, user('x')));
    const y = store.change((view) => {
      addUser(view, user('y'));
      view.delete('x');
      view.set(user('warm', 5));
      throw thrown;
    });
    const z = store.change((view) => {
      addUser(view, user('z'));
      return { seesX: view.has('x'), seesY: view.has('y'), warmLevel: view.get('warm')?.level, size: view.size };
    });
    const [firstOutcome, xOutcome, yOutcome, zOutcome] = await Promise.allSettled([first, x, y, z]);
    assert.equal(firstOutcome.status, 'fulfilled');
    assert.equal(xOutcome.status, 'fulfilled');
    assert.ok(yOutcome.status === 'rejected' && yOutcome.reason === thrown);
    assert.deepEqual(zOutcome.status === 'fulfilled' ? zOutcome.value : zOutcome.reason, { seesX: true, seesY: false, warmLevel: 10, size: 3 });
    assert.equal(fs.writes, 2, 'the three queued changes were committed together');
    for (const store2 of [store, await reopened(dir)]) {
      assert.deepEqual(names(store2), ['warm', 'x', 'z']);
      assert.equal(store2.find('warm')?.level, 10);
      assert.equal(store2.find('y'), undefined);
    }
  });

  it('writes every one of 50 concurrent changes, grouping them into few writes', async () => {
    const fs = countingFileSystem();
    const { dir, store } = await storeWith([], fs);
    const added = Array.from({ length: 50 }, (_, i) => store.change((view) => addUser(view, user(`user-${String(i).padStart(2, '0')}`))));
    await Promise.all(added);
    assert.equal(store.size, 50);
    const again = await reopened(dir);
    assert.equal(again.size, 50);
    assert.deepEqual(names(again), Array.from({ length: 50 }, (_, i) => `user-${String(i).padStart(2, '0')}`));
    // One write for the first change, one for the 49 queued behind it.
    assert.ok(fs.writes <= 2, `${fs.writes} writes`);
  });

  it('lets a queued change see the changes queued before it (two adds of one name: one wins)', async () => {
    const { dir, store } = await storeWith([]);
    const results = await Promise.allSettled([
      store.change((view) => addUser(view, user('same', 10))),
      store.change((view) => addUser(view, user('same', 5))),
      store.change((view) => addUser(view, user('same', 5))),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected']);
    for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof UsernameTaken);
    assert.equal((await reopened(dir)).find('same')?.level, 10);
  });

  // Only a bug can make a batch throw outside its write (here: a value JSON cannot hold). It must
  // fail that batch, not leave every later change waiting forever.
  it('rejects a batch that cannot be serialized, and later changes still commit', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const broken = { ...user('broken'), credentialsChangedAt: 1n } as unknown as StoredUser;
    await assert.rejects(store.change((view) => view.set(broken)), TypeError);
    assert.equal(store.find('broken'), undefined);
    await store.change((view) => view.set(user('after')));
    assert.notEqual(store.find('after'), undefined);
    await store.close();
  });

  it('resolves close() once every queued change is written, and refuses later changes', async () => {
    const { dir, store } = await storeWith([]);
    void store.change((view) => addUser(view, user('a', 10)));
    void store.change((view) => addUser(view, user('b')));
    await store.close();
    assert.deepEqual(names(await reopened(dir)), ['a', 'b']);
    await rejectsWith(store.change((view) => addUser(view, user('c'))), StoreClosed);
  });

  describe('when the write fails', () => {
    it('rejects with StoreWriteFailed and leaves memory equal to the file', async () => {
      const fs = countingFileSystem();
      const { dir, store } = await storeWith([user('alice', 10), user('carol', 5)], fs);
      fs.failRenames = true;
      await rejectsWith(store.change((view) => addUser(view, user('bob'))), StoreWriteFailed, 'STORE_WRITE_FAILED');
      await rejectsWith(store.change((view) => changeUser(view, 'alice', { passwordHash: OTHER_HASH }, CREATED_AT + 10)), StoreWriteFailed);
      await rejectsWith(store.change((view) => removeUser(view, 'carol')), StoreWriteFailed);
      assert.equal(store.find('bob'), undefined);
      assert.equal(store.find('alice')?.passwordHash, HASH);
      assert.equal(store.find('alice')?.credentialsChangedAt, CREATED_AT);
      assert.ok(store.find('carol') !== undefined);
      assert.equal(store.size, 2);
      assert.deepEqual(names(store), ['alice', 'carol']);
      assert.deepEqual(names(await reopened(dir)), ['alice', 'carol']);
      assert.equal((await readdir(dir)).some((name) => name.endsWith('.tmp')), false);
    });

    it('rejects every change of the failed batch, and later changes do not resurrect them', async () => {
      const fs = countingFileSystem();
      const { dir, store } = await storeWith([user('alice', 10)], fs);
      fs.failRenames = true;
      const batch = [
        store.change((view) => addUser(view, user('b'))),
        store.change((view) => addUser(view, user('c'))),
      ];
      const settled = await Promise.allSettled(batch);
      for (const r of settled) assert.ok(r.status === 'rejected' && r.reason instanceof StoreWriteFailed);
      fs.failRenames = false;
      await store.change((view) => addUser(view, user('d')));
      assert.deepEqual(names(store), ['alice', 'd']);
      assert.deepEqual(names(await reopened(dir)), ['alice', 'd']);
    });

    it('rejects with StoreWriteFailed when only the directory fsync failed, and puts the previous file back', async () => {
      const fs = countingFileSystem();
      const { dir, store } = await storeWith([user('alice', 10)], fs);
      fs.failDirectorySync = true;
      await rejectsWith(store.change((view) => addUser(view, user('bob'))), StoreWriteFailed);
      const onDisk = await reopened(dir);
      assert.deepEqual(names(onDisk), ['alice']);
      assert.deepEqual(names(store), names(onDisk));
    });

    it('rejects with StoreOutcomeUnknown when the directory fsync and the rollback both failed, with memory following the file', async () => {
      const fs = countingFileSystem();
      const { dir, store } = await storeWith([user('alice', 10)], fs);
      fs.failDirectorySync = true;
      fs.failRestore = true;
      await rejectsWith(store.change((view) => addUser(view, user('bob'))), StoreOutcomeUnknown);
      const onDisk = await reopened(dir);
      assert.deepEqual(names(onDisk), ['alice', 'bob']);
      assert.deepEqual(names(store), names(onDisk));
    });
  });

  describe('refuses a users file it cannot trust, with StoreCorrupt, and leaves it unchanged', () => {
    const goodUser = (): Record<string, unknown> => ({ ...user('alice', 10) });
    const documents: ReadonlyArray<{ name: string; text: () => string; mentions?: RegExp }> = [
      { name: 'invalid JSON', text: () => '{"format":1,"users":[' },
      { name: 'an empty file', text: () => '' },
      { name: 'a JSON array', text: () => '[]' },
      { name: 'a missing format', text: () => JSON.stringify({ users: [] }) },
      { name: 'format 0', text: () => JSON.stringify({ format: 0, users: [] }) },
      { name: 'format "1" as a string', text: () => JSON.stringify({ format: '1', users: [] }) },
      { name: 'a missing users array', text: () => JSON.stringify({ format: 1 }) },
      { name: 'users that is an object', text: () => JSON.stringify({ format: 1, users: {} }) },
      { name: 'a duplicate username', text: () => JSON.stringify({ format: 1, users: [goodUser(), goodUser()] }) },
      { name: 'a user with level 7', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), level: 7 }] }) },
      { name: 'a user with level "admin"', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), level: 'admin' }] }) },
      { name: 'a user without a password hash', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), passwordHash: undefined }] }) },
      { name: 'a user with a plain-text password hash', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), passwordHash: 'hunter2' }] }) },
      { name: 'a user with an empty username', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), username: '' }] }) },
      { name: 'a user with a control character in the username', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), username: 'a\u0000' }] }) },
      { name: 'a user with an invalid client', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), client: { client: 'uTorrent' } }] }) },
      { name: 'a user with a negative credentialsChangedAt', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), credentialsChangedAt: -1 }] }) },
      { name: 'a user with an unknown field', text: () => JSON.stringify({ format: 1, users: [{ ...goodUser(), isAdmin: true }] }) },
      { name: 'a user with an unknown field in format 2', text: () => JSON.stringify({ format: 2, users: [{ ...goodUser(), isAdmin: true }] }) },
      { name: 'a user with an empty groups list', text: () => JSON.stringify({ format: 2, users: [{ ...goodUser(), groups: [] }] }) },
      { name: 'a user with a bad group name', text: () => JSON.stringify({ format: 2, users: [{ ...goodUser(), groups: ['Staff'] }] }) },
      { name: 'a user that is not an object', text: () => JSON.stringify({ format: 1, users: ['alice'] }) },
    ];
    for (const { name, text, mentions } of documents) {
      it(`refuses ${name}`, async () => {
        const dir = await tempDir();
        const path = join(dir, USERS_FILE);
        const content = text();
        await writeFile(path, content, { mode: 0o600 });
        await assert.rejects(openUserStore(dir, realFileSystem, FEATURE_FIELDS), (error: unknown) => {
          assert.ok(error instanceof StoreCorrupt, `expected StoreCorrupt, got ${String(error)}`);
          if (mentions !== undefined) assert.match(error.message, mentions);
          return true;
        });
        assert.equal(await readFile(path, 'utf8'), content);
      });
    }

    it('refuses format 3, from a newer version, with StoreTooNew saying so and leaves it unchanged', async () => {
      const dir = await tempDir();
      const content = JSON.stringify({ format: 3, users: [{ ...goodUser(), passkeys2: [] }] });
      await writeFile(join(dir, USERS_FILE), content, { mode: 0o600 });
      await assert.rejects(openUserStore(dir, realFileSystem, FEATURE_FIELDS), (error: unknown) => {
        assert.ok(error instanceof StoreTooNew, `expected StoreTooNew, got ${String(error)}`);
        assert.match(error.message, /newer Gatehouse \(format 3\)/);
        assert.doesNotMatch(error.message, /cp /);
        return true;
      });
      assert.equal(await readFile(join(dir, USERS_FILE), 'utf8'), content);
    });

    it('accepts the same document when it is valid (levels in both forms)', async () => {
      const dir = await tempDir();
      const users = [user('alice', 10), user('bob', 'USER'), user('carol', 'ADMINISTRATOR'), user('dave', 5)];
      await writeFile(join(dir, USERS_FILE), JSON.stringify({ format: 1, users }), { mode: 0o600 });
      const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
      assert.deepEqual([...store.list()], users);
    });
  });
});

describe('the users file format', () => {
  const formatOf = async (dir: string): Promise<unknown> => (JSON.parse(await readFile(join(dir, USERS_FILE), 'utf8')) as { format: unknown }).format;

  it('loads a format 1 file unchanged and writes format 1 back while every account has client settings and nothing newer', async () => {
    const dir = await tempDir();
    const users = [user('alice', 10), user('bob', 'USER')];
    await writeFile(join(dir, USERS_FILE), JSON.stringify({ format: 1, users }), { mode: 0o600 });
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    assert.deepEqual([...store.list()], users);
    await store.change((view) => addUser(view, user('carol')));
    assert.equal(await formatOf(dir), 1);
    assert.deepEqual([...(await openUserStore(dir, realFileSystem, FEATURE_FIELDS)).list()].map((u) => u.username), ['alice', 'bob', 'carol']);
  });

  it('writes format 2 once an account has no client settings, and format 1 again once it is gone', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => addUser(view, user('alice', 10)));
    assert.equal(await formatOf(dir), 1);
    const { client: _client, ...withoutClient } = user('wiki');
    await store.change((view) => addUser(view, withoutClient));
    assert.equal(await formatOf(dir), 2);
    const reopened = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    assert.deepEqual(reopened.find('wiki'), withoutClient);
    assert.equal(Object.hasOwn(reopened.find('wiki') ?? {}, 'client'), false);
    await store.change((view) => removeUser(view, 'wiki'));
    assert.equal(await formatOf(dir), 1);
  });

  it('writes format 2 while an account has groups, and keeps them across a reload', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => addUser(view, user('alice', 10, { groups: ['family', 'media-2'] })));
    assert.equal(await formatOf(dir), 2);
    assert.deepEqual((await openUserStore(dir, realFileSystem, FEATURE_FIELDS)).find('alice')?.groups, ['family', 'media-2']);
    await store.change((view) => changeUser(view, 'alice', { groups: [] }, CREATED_AT));
    assert.equal(await formatOf(dir), 1);
    assert.equal(Object.hasOwn((await openUserStore(dir, realFileSystem, FEATURE_FIELDS)).find('alice') ?? {}, 'groups'), false);
  });
});

describe('account rules', () => {
  it('refuses to add a username that is taken', async () => {
    const { store } = await storeWith([user('alice', 10)]);
    await rejectsWith(store.change((view) => addUser(view, user('alice'))), UsernameTaken, 'USERNAME_TAKEN');
  });

  it('refuses a username that differs from an existing one only in case, as taken (USERNAME_TAKEN), and keeps a case-only rename of itself', async () => {
    const { store } = await storeWith([user('alice', 10)]);
    await rejectsWith(store.change((view) => addUser(view, user('Alice'))), UsernameLookAlike, 'USERNAME_TAKEN');
    assert.deepEqual(names(store), ['alice']);
    await store.change((view) => changeUser(view, 'alice', { username: 'Alice' }, CREATED_AT + 1));
    assert.deepEqual(names(store), ['Alice']);
  });

  it('refuses to update or remove a user that does not exist', async () => {
    const { store } = await storeWith([user('alice', 10)]);
    await rejectsWith(store.change((view) => changeUser(view, 'ghost', { level: 5 }, CREATED_AT + 1)), UserNotFound, 'USER_NOT_FOUND');
    await rejectsWith(store.change((view) => removeUser(view, 'ghost')), UserNotFound, 'USER_NOT_FOUND');
  });

  it('refuses to remove the last administrator', async () => {
    const { store } = await storeWith([user('admin', 10), user('bob', 5)]);
    await rejectsWith(store.change((view) => removeUser(view, 'admin')), LastAdministrator, 'LAST_ADMINISTRATOR');
    assert.ok(store.find('admin') !== undefined);
  });

  const demotions: ReadonlyArray<[AccessLevel, AccessLevel]> = [
    [10, 5],
    [10, 'USER'],
    ['ADMINISTRATOR', 5],
    ['ADMINISTRATOR', 'USER'],
  ];
  for (const [from, to] of demotions) {
    it(`refuses to demote the last administrator from ${JSON.stringify(from)} to ${JSON.stringify(to)}`, async () => {
      const { store } = await storeWith([user('admin', from)]);
      await rejectsWith(store.change((view) => changeUser(view, 'admin', { level: to }, CREATED_AT + 1)), LastAdministrator);
      assert.equal(store.find('admin')?.level, from);
    });
  }

  it('allows re-spelling the last administrator\'s level (10 to "ADMINISTRATOR")', async () => {
    const { dir, store } = await storeWith([user('admin', 10)]);
    await store.change((view) => changeUser(view, 'admin', { level: 'ADMINISTRATOR' }, CREATED_AT + 1));
    assert.equal(store.find('admin')?.level, 'ADMINISTRATOR');
    assert.equal((await reopened(dir)).find('admin')?.level, 'ADMINISTRATOR');
  });

  it('allows removing or demoting an administrator when another remains, counting both spellings', async () => {
    const { store } = await storeWith([user('a', 10), user('b', 'ADMINISTRATOR'), user('c', 10)]);
    await store.change((view) => removeUser(view, 'a'));
    await store.change((view) => changeUser(view, 'b', { level: 'USER' }, CREATED_AT + 1));
    await rejectsWith(store.change((view) => removeUser(view, 'c')), LastAdministrator);
    assert.deepEqual(names(store), ['b', 'c']);
  });

  it('keeps one administrator when two concurrent changes each remove one of the last two', async () => {
    const { store } = await storeWith([user('a', 10), user('b', 10), user('filler', 5)]);
    void store.change((view) => addUser(view, user('occupy-writer')));
    const results = await Promise.allSettled([
      store.change((view) => removeUser(view, 'a')),
      store.change((view) => changeUser(view, 'b', { level: 5 }, CREATED_AT + 1)),
    ]);
    assert.equal(results[0]?.status, 'fulfilled');
    assert.ok(results[1]?.status === 'rejected' && results[1].reason instanceof LastAdministrator);
    assert.equal(store.find('b')?.level, 10);
  });

  it('removes a user that is not an administrator', async () => {
    const { dir, store } = await storeWith([user('admin', 10), user('bob', 5)]);
    await store.change((view) => removeUser(view, 'bob'));
    assert.deepEqual(names(await reopened(dir)), ['admin']);
  });

  it('refuses to rename a user onto a taken username', async () => {
    const { store } = await storeWith([user('admin', 10), user('bob', 5)]);
    await rejectsWith(store.change((view) => changeUser(view, 'bob', { username: 'admin' }, CREATED_AT + 1)), UsernameTaken);
    assert.deepEqual(names(store), ['admin', 'bob']);
  });

  it('renames a user, keeping the rest of the record', async () => {
    const bob = user('bob', 5, { client: OTHER_CLIENT });
    const { dir, store } = await storeWith([user('admin', 10), bob]);
    await store.change((view) => changeUser(view, 'bob', { username: 'robert' }, CREATED_AT + 50));
    const again = await reopened(dir);
    assert.equal(again.find('bob'), undefined);
    const { sessionKey, ...rest } = again.find('robert') ?? assert.fail('robert is missing');
    assert.deepEqual(rest, { username: 'robert', level: 5, passwordHash: HASH, client: OTHER_CLIENT, credentialsChangedAt: CREATED_AT + 50 });
    assert.notEqual(sessionKey, bob.sessionKey, 'a rename is a credential change: the session key is replaced');
  });

  it('renames the last administrator without tripping the last-administrator rule', async () => {
    const { store } = await storeWith([user('admin', 10)]);
    await store.change((view) => changeUser(view, 'admin', { username: 'root' }, CREATED_AT + 1));
    assert.equal(store.find('root')?.level, 10);
  });

  describe('credentialsChangedAt and the session key', () => {
    const NOW = CREATED_AT + 500;
    const cases: ReadonlyArray<{ name: string; changes: () => Parameters<typeof changeUser>[2]; bumped: boolean }> = [
      { name: 'a password change', changes: () => ({ passwordHash: OTHER_HASH }), bumped: true },
      { name: 'a level change', changes: () => ({ level: 10 }), bumped: true },
      { name: 'a username change', changes: () => ({ username: 'bobby' }), bumped: true },
      { name: 'a password and client change', changes: () => ({ passwordHash: OTHER_HASH, client: OTHER_CLIENT }), bumped: true },
      { name: 'a client-only change', changes: () => ({ client: OTHER_CLIENT }), bumped: false },
      { name: 'a level re-spelled with the same role (5 to "USER")', changes: () => ({ level: 'USER' }), bumped: false },
      { name: 'a "change" to the same level and username', changes: () => ({ level: 5, username: 'bob' }), bumped: false },
    ];
    for (const { name, changes, bumped } of cases) {
      it(`${bumped ? 'moves to now, with a new session key,' : 'stays, with the same session key,'} on ${name}`, async () => {
        const bob = user('bob', 5);
        const { dir, store } = await storeWith([user('admin', 10), bob]);
        const update = changes();
        await store.change((view) => changeUser(view, 'bob', update, NOW));
        const after = (await reopened(dir)).find(update.username ?? 'bob');
        assert.ok(after !== undefined);
        assert.equal(after.credentialsChangedAt, bumped ? NOW : CREATED_AT);
        assert.equal(after.sessionKey === bob.sessionKey, !bumped);
        if (update.client !== undefined) assert.deepEqual(after.client, update.client);
        if (update.passwordHash !== undefined) assert.equal(after.passwordHash, update.passwordHash);
        if (update.level !== undefined) assert.equal(after.level, update.level);
      });
    }

    it('never moves backwards when the clock is behind the last change', async () => {
      const { store } = await storeWith([user('admin', 10), user('bob', 5)]);
      await store.change((view) => changeUser(view, 'bob', { passwordHash: OTHER_HASH }, CREATED_AT - 100));
      assert.equal(store.find('bob')?.credentialsChangedAt, CREATED_AT);
    });

    it('writes nothing for an empty update', async () => {
      const fs = countingFileSystem();
      const { store } = await storeWith([user('admin', 10)], fs);
      await store.change((view) => changeUser(view, 'admin', {}, NOW));
      assert.equal(fs.writes, 0);
      assert.equal(store.find('admin')?.credentialsChangedAt, CREATED_AT);
    });
  });
});
