import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPasswordHasher } from '../../src/auth/password-hasher.js';
import {
  checkScryptCost,
  DEFAULT_SCRYPT_COST,
  hashPassword,
  parsePasswordHash,
  scryptMemoryBytes,
  verifyPassword,
  type ScryptCost,
} from '../../src/auth/password.js';

const CHEAP: ScryptCost = { N: 1024, r: 8, p: 1 };
const HASH_SHAPE = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

describe('hashPassword and verifyPassword', () => {
  it('verifies the password a hash was made from', async () => {
    const stored = await hashPassword('correct horse battery staple', CHEAP);
    assert.equal(await verifyPassword('correct horse battery staple', stored), true);
  });

  it('refuses a wrong password', async () => {
    const stored = await hashPassword('correct horse battery staple', CHEAP);
    const wrong = ['correct horse battery stapl', 'Correct horse battery staple', 'correct horse battery staple ', '', 'x'];
    for (const password of wrong) assert.equal(await verifyPassword(password, stored), false, JSON.stringify(password));
  });

  it('gives two different hashes for the same password (random salt)', async () => {
    const first = await hashPassword('same password', CHEAP);
    const second = await hashPassword('same password', CHEAP);
    assert.notEqual(first, second);
    assert.notEqual(first.match(HASH_SHAPE)?.[4], second.match(HASH_SHAPE)?.[4]);
  });

  it('writes its cost into the hash string as $scrypt$ln=10,r=8,p=1$salt$key', async () => {
    const stored = await hashPassword('pw', CHEAP);
    assert.ok(stored.startsWith('$scrypt$ln=10,r=8,p=1$'), stored);
    const match = HASH_SHAPE.exec(stored);
    assert.ok(match !== null, stored);
    assert.equal(Buffer.from(match[4] ?? '', 'base64url').length, 16);
    assert.equal(Buffer.from(match[5] ?? '', 'base64url').length, 32);
    const parsed = parsePasswordHash(stored);
    assert.deepEqual(parsed?.cost, { N: 1024, r: 8, p: 1 });
  });

  it('records another cost faithfully (N=2048, r=4, p=2)', async () => {
    const stored = await hashPassword('pw', { N: 2048, r: 4, p: 2 });
    assert.ok(stored.startsWith('$scrypt$ln=11,r=4,p=2$'), stored);
    assert.equal(await verifyPassword('pw', stored), true);
  });

  it('verifies with the cost stored in the hash, not a current default', async () => {
    const stored = await hashPassword('pw', CHEAP);
    // Same salt and key, but the string claims another cost: the derived key must differ.
    for (const lie of ['ln=11,r=8,p=1', 'ln=10,r=4,p=1', 'ln=10,r=8,p=2']) {
      const relabelled = stored.replace('ln=10,r=8,p=1', lie);
      assert.notEqual(relabelled, stored);
      assert.equal(await verifyPassword('pw', relabelled), false, lie);
    }
  });

  it('treats a password as its NFC form, so a composed and a decomposed é match', async () => {
    const stored = await hashPassword('caf\u00e9', CHEAP);
    assert.equal(await verifyPassword('cafe\u0301', stored), true);
  });

  it('hashes passwords with control characters and astral characters', async () => {
    const password = 'a\u0000b\u001f\u007f\u{1F600}';
    const stored = await hashPassword(password, CHEAP);
    assert.equal(await verifyPassword(password, stored), true);
    assert.equal(await verifyPassword('a', stored), false);
  });

  describe('returns false for a malformed stored hash', () => {
    // Made once from a real hash, so only the part under test is wrong.
    const realHash = hashPassword('pw', CHEAP);
    const cases: ReadonlyArray<{ name: string; make: (stored: string) => string }> = [
      { name: 'the empty string', make: () => '' },
      { name: 'a plain-text password', make: () => 'pw' },
      { name: 'another scheme prefix', make: (s) => s.replace('$scrypt$', '$argon2id$') },
      { name: 'no prefix', make: (s) => s.replace('$scrypt$', '') },
      { name: 'ln=0 (N=1)', make: (s) => s.replace('ln=10', 'ln=0') },
      { name: 'ln=23 (N above 2^22)', make: (s) => s.replace('ln=10', 'ln=23') },
      { name: 'ln with three digits', make: (s) => s.replace('ln=10', 'ln=100') },
      { name: 'r=0', make: (s) => s.replace('r=8', 'r=0') },
      { name: 'r=33', make: (s) => s.replace('r=8', 'r=33') },
      { name: 'p=0', make: (s) => s.replace('p=1', 'p=0') },
      { name: 'p=17', make: (s) => s.replace('p=1', 'p=17') },
      { name: 'a negative ln', make: (s) => s.replace('ln=10', 'ln=-1') },
      { name: 'parameters in another order', make: (s) => s.replace('ln=10,r=8,p=1', 'r=8,ln=10,p=1') },
      { name: 'an extra parameter', make: (s) => s.replace('p=1', 'p=1,x=1') },
      { name: 'a missing key', make: (s) => s.slice(0, s.lastIndexOf('$') + 1) },
      { name: 'a key one character short', make: (s) => s.slice(0, -1) },
      { name: 'a key one character long', make: (s) => `${s}A` },
      { name: 'a key with a non-base64url character', make: (s) => `${s.slice(0, -1)}+` },
      { name: 'a salt shorter than 16 characters', make: (s) => s.replace(/\$[A-Za-z0-9_-]+\$([A-Za-z0-9_-]+)$/, '$AAAAAAAAAAAAAAA$$$1') },
      { name: 'an empty salt', make: (s) => s.replace(/\$[A-Za-z0-9_-]+\$([A-Za-z0-9_-]+)$/, '$$$$$1') },
      { name: 'a trailing newline', make: (s) => `${s}\n` },
      { name: 'a leading space', make: (s) => ` ${s}` },
      { name: 'the hash in upper case', make: (s) => s.toUpperCase() },
    ];

    for (const { name, make } of cases) {
      it(`returns false for ${name}`, async () => {
        const stored = await realHash;
        const malformed = make(stored);
        assert.notEqual(malformed, stored);
        assert.equal(parsePasswordHash(malformed), undefined);
        assert.equal(await verifyPassword('pw', malformed), false);
      });
    }

    it('accepts the unmodified hash these cases were made from', async () => {
      assert.equal(await verifyPassword('pw', await realHash), true);
    });
  });
});

describe('DEFAULT_SCRYPT_COST', () => {
  // OWASP Password Storage Cheat Sheet: equal-strength scrypt settings.
  const OWASP = [
    { N: 2 ** 17, r: 8, p: 1 },
    { N: 2 ** 16, r: 8, p: 2 },
    { N: 2 ** 15, r: 8, p: 3 },
    { N: 2 ** 14, r: 8, p: 5 },
    { N: 2 ** 13, r: 8, p: 10 },
  ];

  // Equal strength per OWASP, though N*r*p differs between them (2^15*8*3 is 3/4 of 2^17*8*1):
  // membership in this list is the criterion, not a product.
  it('is one of the OWASP-recommended scrypt settings', () => {
    assert.ok(
      OWASP.some((c) => c.N === DEFAULT_SCRYPT_COST.N && c.r === DEFAULT_SCRYPT_COST.r && c.p === DEFAULT_SCRYPT_COST.p),
      JSON.stringify(DEFAULT_SCRYPT_COST),
    );
  });

  it('passes its own cost check', () => {
    assert.deepEqual(checkScryptCost(DEFAULT_SCRYPT_COST), { ...DEFAULT_SCRYPT_COST });
  });

  it('actually hashes and verifies once (Node maxmem is raised enough for it)', async () => {
    const stored = await hashPassword('default cost', DEFAULT_SCRYPT_COST);
    assert.ok(stored.startsWith(`$scrypt$ln=${Math.log2(DEFAULT_SCRYPT_COST.N)},r=${DEFAULT_SCRYPT_COST.r},p=${DEFAULT_SCRYPT_COST.p}$`));
    assert.equal(await verifyPassword('default cost', stored), true);
  });
});

describe('scryptMemoryBytes', () => {
  it('counts 128*r*(N+2) + 128*r*p bytes', () => {
    assert.equal(scryptMemoryBytes({ N: 1024, r: 8, p: 1 }), 128 * 8 * 1026 + 128 * 8);
    assert.equal(scryptMemoryBytes({ N: 2 ** 15, r: 8, p: 3 }), 128 * 8 * (2 ** 15 + 2) + 128 * 8 * 3);
  });

  it('exceeds the 32 MiB Node default for the default cost (so maxmem must be passed)', () => {
    assert.ok(scryptMemoryBytes(DEFAULT_SCRYPT_COST) > 32 * 1024 * 1024);
  });
});

describe('checkScryptCost', () => {
  const rejected: ReadonlyArray<{ name: string; cost: ScryptCost }> = [
    { name: 'N not a power of two', cost: { N: 1000, r: 8, p: 1 } },
    { name: 'N = 3', cost: { N: 3, r: 8, p: 1 } },
    { name: 'N = 1', cost: { N: 1, r: 8, p: 1 } },
    { name: 'N = 0', cost: { N: 0, r: 8, p: 1 } },
    { name: 'N negative', cost: { N: -1024, r: 8, p: 1 } },
    { name: 'N fractional', cost: { N: 1024.5, r: 8, p: 1 } },
    { name: 'N NaN', cost: { N: Number.NaN, r: 8, p: 1 } },
    { name: 'N Infinity', cost: { N: Number.POSITIVE_INFINITY, r: 8, p: 1 } },
    { name: 'N above 2^22', cost: { N: 2 ** 23, r: 8, p: 1 } },
    { name: 'r = 0', cost: { N: 1024, r: 0, p: 1 } },
    { name: 'r = 33', cost: { N: 1024, r: 33, p: 1 } },
    { name: 'r fractional', cost: { N: 1024, r: 1.5, p: 1 } },
    { name: 'p = 0', cost: { N: 1024, r: 8, p: 0 } },
    { name: 'p = 17', cost: { N: 1024, r: 8, p: 17 } },
    { name: 'p fractional', cost: { N: 1024, r: 8, p: 2.5 } },
    { name: 'p NaN', cost: { N: 1024, r: 8, p: Number.NaN } },
  ];
  for (const { name, cost } of rejected) {
    it(`throws a TypeError for ${name}`, () => {
      assert.throws(() => checkScryptCost(cost), TypeError);
    });
  }

  const accepted: readonly ScryptCost[] = [
    { N: 2, r: 1, p: 1 },
    { N: 2 ** 22, r: 8, p: 1 },
    { N: 1024, r: 32, p: 16 },
    { N: 2 ** 15, r: 8, p: 3 },
  ];
  for (const cost of accepted) {
    it(`accepts N=${cost.N}, r=${cost.r}, p=${cost.p} and returns a frozen copy`, () => {
      const checked = checkScryptCost(cost);
      assert.deepEqual(checked, cost);
      assert.ok(Object.isFrozen(checked));
    });
  }
});

describe('createPasswordHasher', () => {
  const KEY = { client: '192.0.2.1', network: '192.0.2.0/24' };
  const makeHasher = () => createPasswordHasher({ cost: CHEAP, maxConcurrent: 2, maxQueued: 10 });

  it('hashes with its configured cost and verifies the result', async () => {
    const hasher = makeHasher();
    const stored = await hasher.hash('secret', KEY);
    assert.ok(stored.startsWith('$scrypt$ln=10,r=8,p=1$'));
    assert.equal(await hasher.verify('secret', stored, KEY), true);
    assert.equal(await hasher.verify('Secret', stored, KEY), false);
  });

  it('counts one run per hash and per verify', async () => {
    const hasher = makeHasher();
    assert.equal(hasher.runs, 0);
    const stored = await hasher.hash('secret', KEY);
    assert.equal(hasher.runs, 1);
    await hasher.verify('secret', stored, KEY);
    assert.equal(hasher.runs, 2);
  });

  it('returns false for an unknown user (no stored hash) and still runs scrypt once', async () => {
    const hasher = makeHasher();
    assert.equal(await hasher.verify('anything', undefined, KEY), false);
    assert.equal(hasher.runs, 1);
    assert.equal(await hasher.verify('anything', undefined, KEY), false);
    assert.equal(hasher.runs, 2);
  });

  it('returns false for an unknown user even with the empty password', async () => {
    const hasher = makeHasher();
    assert.equal(await hasher.verify('', undefined, KEY), false);
    assert.equal(hasher.runs, 1);
  });

  it('after warming up, still runs scrypt once per unknown-user verify and returns false', async () => {
    const hasher = makeHasher();
    await hasher.warmUp();
    const before = hasher.runs;
    assert.equal(await hasher.verify('x', undefined, KEY), false);
    assert.equal(hasher.runs, before + 1);
  });
});
