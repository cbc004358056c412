// The OpenID Connect signing keys file: made on first start (0600 from creation), read back the same,
// rotated with the old public keys kept for an id_token's lifetime, and refused (never rewritten)
// when it cannot be used.
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { inspectJws, signJwt } from '../../src/oidc/jws.js';
import { ID_TOKEN_TTL_SECONDS } from '../../src/oidc/limits.js';
import {
  loadOrCreateSigningKeys, rotateSigningKeys, SIGNING_KEYS_FILE, SigningKeysInvalid,
} from '../../src/oidc/signing-keys.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';

const NOW = 1_800_000_000;
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-keys-'));
  dirs.push(dir);
  return dir;
}

// An RSA key takes a good part of a second to make under load, and each rotation makes one: the
// tests of rotating or refusing a keys file start from a copy of one made once (the tests of
// making keys make their own).
const madeOnce = (async () => {
  const dir = await dataDir();
  await loadOrCreateSigningKeys(realFileSystem, dir, NOW);
  return dir;
})();

/** A data directory holding a copy of the keys file made once, at NOW. */
async function dataDirWithKeys(): Promise<string> {
  const dir = await dataDir();
  await copyFile(join(await madeOnce, SIGNING_KEYS_FILE), join(dir, SIGNING_KEYS_FILE));
  return dir;
}

type StoredKey = Record<string, unknown> & { kid: string; alg: string };
async function storedKeys(dir: string): Promise<StoredKey[]> {
  return (JSON.parse(await readFile(join(dir, SIGNING_KEYS_FILE), 'utf8')) as { keys: StoredKey[] }).keys;
}

describe('loadOrCreateSigningKeys', () => {
  it('makes an RSA (2048 bits) and a P-256 key on first start, in a file of mode 0600 created that way', async () => {
    const dir = await dataDir();
    const opened: Array<{ path: string; flags: string; mode: number | undefined }> = [];
    const watching: StoreFileSystem = {
      ...realFileSystem,
      open: (path, flags, mode) => {
        opened.push({ path, flags, mode });
        return realFileSystem.open(path, flags, mode);
      },
    };
    const keys = await loadOrCreateSigningKeys(watching, dir, NOW);
    assert.equal((await stat(join(dir, SIGNING_KEYS_FILE))).mode & 0o777, 0o600);
    // The temp file the key is written to is created exclusively with 0600: never readable by others, not even briefly.
    const created = opened.filter((entry) => entry.flags !== 'r');
    assert.ok(created.length > 0 && created.every((entry) => entry.flags === 'wx' && entry.mode === 0o600), JSON.stringify(created));
    assert.equal(keys.signingKey('RS256').publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert.equal(keys.signingKey('ES256').publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    const listed = keys.jwks(NOW).keys;
    assert.deepEqual(listed.map((jwk) => jwk['alg']), ['RS256', 'ES256']);
    for (const jwk of listed) assert.equal(Object.hasOwn(jwk, 'd'), false);
  });

  it('reads the same keys back on the next start', async () => {
    const dir = await dataDir();
    const first = await loadOrCreateSigningKeys(realFileSystem, dir, NOW);
    const again = await loadOrCreateSigningKeys(realFileSystem, dir, NOW + 86_400);
    assert.deepEqual(again.jwks(NOW).keys, first.jwks(NOW).keys);
    const token = signJwt(first.signingKey('ES256'), { sub: 'a' });
    assert.ok(inspectJws(token, (kid) => again.find(kid, NOW)).ok);
  });
});

describe('rotateSigningKeys', () => {
  it('puts new keys in force and keeps the old public keys until every id_token they signed has expired', async () => {
    const dir = await dataDirWithKeys();
    const before = await loadOrCreateSigningKeys(realFileSystem, dir, NOW);
    const oldToken = signJwt(before.signingKey('RS256'), { sub: 'a' });
    const { added, retired } = await rotateSigningKeys(realFileSystem, dir, NOW + 100);
    assert.deepEqual(retired, [before.signingKey('RS256').kid, before.signingKey('ES256').kid]);
    const afterwards = await loadOrCreateSigningKeys(realFileSystem, dir, NOW + 100);
    assert.deepEqual([afterwards.signingKey('RS256').kid, afterwards.signingKey('ES256').kid], added);
    assert.deepEqual(afterwards.jwks(NOW + 100).keys.map((jwk) => jwk['kid']), [...added, ...retired]);
    // Still verifiable while an id_token it signed may live, and gone from the JWKS after.
    const lastMoment = NOW + 100 + ID_TOKEN_TTL_SECONDS - 1;
    assert.ok(inspectJws(oldToken, (kid) => afterwards.find(kid, lastMoment)).ok);
    assert.deepEqual(afterwards.jwks(lastMoment + 1).keys.map((jwk) => jwk['kid']), added);
    assert.equal(inspectJws(oldToken, (kid) => afterwards.find(kid, lastMoment + 1)).ok, false);
  });

  it('drops the private half of a retired key from the file at once', async () => {
    const dir = await dataDirWithKeys();
    await rotateSigningKeys(realFileSystem, dir, NOW + 1);
    const keys = await storedKeys(dir);
    assert.equal(keys.length, 4);
    assert.equal(keys.filter((key) => Object.hasOwn(key, 'private')).length, 2);
    for (const key of keys.filter((entry) => Object.hasOwn(entry, 'retiredAt'))) {
      assert.equal(Object.hasOwn(key['public'] as object, 'd'), false);
    }
    // No copy of the file is kept beside it.
    await assert.rejects(stat(join(dir, `${SIGNING_KEYS_FILE}.prev`)), { code: 'ENOENT' });
  });

  it('forgets retired keys at the next rotation once they are no longer kept', async () => {
    const dir = await dataDirWithKeys();
    await rotateSigningKeys(realFileSystem, dir, NOW + 1);
    await rotateSigningKeys(realFileSystem, dir, NOW + 2);
    assert.equal((await storedKeys(dir)).length, 6);
    await rotateSigningKeys(realFileSystem, dir, NOW + 2 + ID_TOKEN_TTL_SECONDS);
    assert.equal((await storedKeys(dir)).length, 4);
  });

  it('keeps the file one it would load after many rotations within an id_token\'s lifetime, the newest retired keys kept', async () => {
    const dir = await dataDirWithKeys();
    let lastRetired: readonly string[] = [];
    for (let rotation = 1; rotation <= 34; rotation += 1) {
      ({ retired: lastRetired } = await rotateSigningKeys(realFileSystem, dir, NOW + rotation));
    }
    const keys = await loadOrCreateSigningKeys(realFileSystem, dir, NOW + 35);
    const kids = (keys.jwks(NOW + 35) as { keys: { kid: string }[] }).keys.map((jwk) => jwk.kid);
    assert.ok(kids.length <= 64, `${kids.length} keys`);
    for (const kid of lastRetired) assert.ok(kids.includes(kid), 'the keys retired last are still published');
  });

  it('makes keys when there were none', async () => {
    const dir = await dataDir();
    const { added, retired } = await rotateSigningKeys(realFileSystem, dir, NOW);
    assert.equal(added.length, 2);
    assert.deepEqual(retired, []);
  });
});

describe('a keys file that cannot be used', () => {
  const cases: ReadonlyArray<readonly [string, (keys: StoredKey[]) => unknown]> = [
    ['not JSON', () => '{"format":1,'],
    ['no format', (keys) => ({ keys })],
    ['a key whose kid is not its thumbprint', (keys) => ({ format: 1, keys: keys.map((key, i) => (i === 0 ? { ...key, kid: 'x' } : key)) })],
    ['a key whose alg is not its own', (keys) => ({ format: 1, keys: keys.map((key, i) => (i === 0 ? { ...key, alg: 'ES256' } : key)) })],
    ['two RSA keys in force', (keys) => ({ format: 1, keys: [keys[0], keys[0], keys[1]] })],
    ['no P-256 key', (keys) => ({ format: 1, keys: [keys[0]] })],
    ['a private key whose public members are another key', (keys) => {
      const [rsa, ec] = keys as [StoredKey, StoredKey];
      const jwk = ec['private'] as Record<string, string>;
      return { format: 1, keys: [rsa, { ...ec, private: { ...jwk, x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' } }] };
    }],
    ['a retired key without a time', (keys) => ({ format: 1, keys: [...keys, { ...keys[0], retiredAt: 'soon', keepUntil: 1, public: {} }] })],
  ];
  for (const [name, edit] of cases) {
    it(`refuses ${name} at start, naming the file, and leaves it as it was`, async () => {
      const dir = await dataDirWithKeys();
      const edited = edit(await storedKeys(dir));
      const text = typeof edited === 'string' ? edited : JSON.stringify(edited);
      await writeFile(join(dir, SIGNING_KEYS_FILE), text, { mode: 0o600 });
      await assert.rejects(loadOrCreateSigningKeys(realFileSystem, dir, NOW), (error: unknown) =>
        error instanceof SigningKeysInvalid && error.message.includes(join(dir, SIGNING_KEYS_FILE)));
      assert.equal(await readFile(join(dir, SIGNING_KEYS_FILE), 'utf8'), text);
    });
  }

  it('refuses a file written by a newer Gatehouse, saying so', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, SIGNING_KEYS_FILE), '{"format":2,"keys":[]}', { mode: 0o600 });
    await assert.rejects(loadOrCreateSigningKeys(realFileSystem, dir, NOW), /newer Gatehouse/);
  });
});
