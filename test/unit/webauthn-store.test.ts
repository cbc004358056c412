import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { newSessionKey } from '../../src/auth/session-key.js';
import { PasskeyTaken } from '../../src/errors.js';
import { changeUser } from '../../src/store/account-rules.js';
import { addPasskey } from '../../src/passkeys/rules.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { openUserStore, StoreCorrupt, USERS_FILE, type StoredUser } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import { encodeCbor, SoftAuthenticator } from '../helpers/soft-authenticator.js';

let HASH = '';
before(async () => {
  HASH = await hashPassword('x', { N: 1024, r: 8, p: 1 });
});
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-passkey-store-'));
  dirs.push(dir);
  return dir;
}

describe('the passkeys field of a stored account', () => {
  const authenticator = new SoftAuthenticator({ algorithm: 'RS256' });
  const passkey = {
    id: authenticator.id,
    name: 'laptop',
    publicKey: authenticator.coseKey().toString('base64url'),
    algorithm: -257 as const,
    signCount: 3,
    userHandle: 'AAAAAAAAAAAAAAAAAAAAAA',
    createdAt: 1_700_000_000,
  };
  const withPasskey = (username: string): StoredUser => ({
    username,
    level: 5,
    passwordHash: HASH,
    client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' },
    credentialsChangedAt: 1,
    sessionKey: newSessionKey(),
    passkeys: [passkey],
  });

  it('is written and read back, and survives a rename and a password change', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => view.set(withPasskey('alice')));
    await store.change((view) => changeUser(view, 'alice', { username: 'alicia', passwordHash: HASH }, 5));
    await store.close();
    const reopened = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    assert.deepEqual(reopened.find('alicia')?.passkeys, [passkey]);
    assert.ok((await readFile(join(dir, USERS_FILE), 'utf8')).startsWith('{"format":2'));
  });

  it('refuses a credential id another account holds, even when that account is renamed in the same batch', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const { passkeys: _passkeys, ...bob } = withPasskey('bob');
    await store.change((view) => {
      view.set(withPasskey('alice'));
      view.set(bob);
    });
    // While one change is being written, the next two queue and run as one batch.
    const writing = store.change((view) => view.set({ ...bob, username: 'carol' }));
    const renamed = store.change((view) => changeUser(view, 'alice', { username: 'alicia' }, 5));
    const added = store.change((view) => addPasskey(view, 'bob', { ...passkey, name: 'copy' }, 5));
    await Promise.all([writing, renamed, assert.rejects(added, PasskeyTaken)]);
    assert.ok(store.find('alicia')?.passkeys !== undefined);
    assert.equal(store.find('bob')?.passkeys, undefined);
    await store.close();
  });

  const hostile: Array<[string, unknown]> = [
    ['an unknown key', [{ ...passkey, extra: 1 }]],
    ['a key that is not COSE', [{ ...passkey, publicKey: Buffer.from('hello').toString('base64url') }]],
    ['a COSE key of an algorithm not offered', [{ ...passkey, publicKey: encodeCbor(new Map([[1, 2], [3, -35]])).toString('base64url') }]],
    ['an algorithm not offered', [{ ...passkey, algorithm: -35 }]],
    ['an algorithm other than its key', [{ ...passkey, algorithm: -7 }]],
    ['a sign count beyond 32 bits', [{ ...passkey, signCount: 2 ** 32 }]],
    ['an empty name', [{ ...passkey, name: '' }]],
    ['a repeated id', [passkey, { ...passkey, name: 'again' }]],
    ['seventeen passkeys', Array.from({ length: 17 }, (_, i) => ({ ...passkey, id: Buffer.from([i + 1]).toString('base64url') }))],
    ['an empty list', []],
  ];
  for (const [what, value] of hostile) {
    it(`refuses a users file whose passkeys have ${what}`, async () => {
      const dir = await tempDir();
      const { passkeys: _, ...plain } = withPasskey('dave');
      await writeFile(join(dir, USERS_FILE), JSON.stringify({ format: 2, users: [{ ...plain, passkeys: value }] }), { mode: 0o600 });
      await assert.rejects(openUserStore(dir, realFileSystem, FEATURE_FIELDS), StoreCorrupt);
    });
  }
});
