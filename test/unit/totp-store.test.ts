import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeBase32 } from '../../src/totp/base32.js';
import { hashPassword } from '../../src/auth/password.js';
import { createSealer } from '../../src/totp/seal.js';
import { newSessionKey } from '../../src/auth/session-key.js';
import { newRecoveryCodes } from '../../src/totp/codes.js';
import { changeUser } from '../../src/store/account-rules.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { openUserStore, StoreCorrupt, USERS_FILE, type StoredUser } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';

let HASH = '';
before(async () => {
  HASH = await hashPassword('x', { N: 1024, r: 8, p: 1 });
});
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-totp-store-'));
  dirs.push(dir);
  return dir;
}

describe('the totp field of a stored account', () => {
  const sealer = createSealer(randomBytes(32));
  const seed = randomBytes(20);
  const totp = { sealedSeed: sealer.seal(seed), lastUsedStep: 56_666_666, recoveryDigests: newRecoveryCodes().digests };
  const withTotp = (username: string): StoredUser => ({
    username,
    level: 5,
    passwordHash: HASH,
    client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' },
    credentialsChangedAt: 1,
    sessionKey: newSessionKey(),
    totp,
  });

  it('is written and read back, and the file holds no seed in the clear', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => view.set(withTotp('alice')));
    await store.close();
    const text = await readFile(join(dir, USERS_FILE), 'utf8');
    assert.ok(!text.includes(encodeBase32(seed)) && !text.includes(seed.toString('base64url')) && !text.includes(seed.toString('hex')));
    const reopened = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    assert.deepEqual(reopened.find('alice')?.totp, totp);
    assert.deepEqual(sealer.open(reopened.find('alice')?.totp?.sealedSeed ?? ''), seed);
  });

  it('stays absent for an account without it', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    const { totp: _, ...plain } = withTotp('bob');
    await store.change((view) => view.set(plain));
    await store.close();
    assert.ok(!(await readFile(join(dir, USERS_FILE), 'utf8')).includes('totp'));
    assert.equal((await openUserStore(dir, realFileSystem, FEATURE_FIELDS)).find('bob')?.totp, undefined);
  });

  it('survives a rename and a password change', async () => {
    const dir = await tempDir();
    const store = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await store.change((view) => view.set(withTotp('carol')));
    await store.change((view) => changeUser(view, 'carol', { username: 'caroline', passwordHash: HASH }, 5));
    assert.deepEqual(store.find('caroline')?.totp, totp);
  });

  const hostile: Array<[string, unknown]> = [
    ['an unknown key', { ...totp, extra: 1 }],
    ['a seed in the clear', { ...totp, sealedSeed: encodeBase32(seed) }],
    ['a negative step', { ...totp, lastUsedStep: -1 }],
    ['eleven recovery digests', { ...totp, recoveryDigests: [...totp.recoveryDigests, totp.recoveryDigests[0]] }],
    ['a recovery code kept in the clear', { ...totp, recoveryDigests: ['abcd-efgh-ijkl-mnop'] }],
    ['no step', { sealedSeed: totp.sealedSeed, recoveryDigests: [] }],
    ['not an object', 'yes'],
  ];
  for (const [what, value] of hostile) {
    it(`refuses a users file whose totp has ${what}`, async () => {
      const dir = await tempDir();
      const { totp: _, ...plain } = withTotp('dave');
      await writeFile(join(dir, USERS_FILE), JSON.stringify({ format: 2, users: [{ ...plain, totp: value }] }), { mode: 0o600 });
      await assert.rejects(openUserStore(dir, realFileSystem, FEATURE_FIELDS), StoreCorrupt);
    });
  }
});
