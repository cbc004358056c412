import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeBase32, encodeBase32, MAX_BASE32_LENGTH } from '../../src/totp/base32.js';
import { createSealer } from '../../src/totp/seal.js';
import {
  findRecoveryDigest,
  hotp,
  matchTotpStep,
  newRecoveryCodes,
  otpauthUri,
  recoveryDigest,
  RECOVERY_DIGEST_FORMAT,
  totpCode,
  totpStep,
} from '../../src/totp/codes.js';
import { SEALED_FORMAT } from '../../src/totp/seal.js';

describe('base32 (RFC 4648 section 10 vectors)', () => {
  const vectors: Array<[string, string]> = [
    ['', ''],
    ['f', 'MY======'],
    ['fo', 'MZXQ===='],
    ['foo', 'MZXW6==='],
    ['foob', 'MZXW6YQ='],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI======'],
  ];
  for (const [plain, encoded] of vectors) {
    it(`encodes ${JSON.stringify(plain)} and decodes it back, padded or not`, () => {
      assert.equal(encodeBase32(Buffer.from(plain)), encoded.replace(/=+$/, ''));
      assert.equal(decodeBase32(encoded)?.toString(), plain);
      assert.equal(decodeBase32(encoded.replace(/=+$/, ''))?.toString(), plain);
      assert.equal(decodeBase32(encoded.toLowerCase())?.toString(), plain);
    });
  }

  const refused: Array<[string, string]> = [
    ['a character outside the alphabet', 'MZXW6YT1'],
    ['a space', 'MZXW 6YTB'],
    ['a length no byte count encodes (1 left over)', 'MZXW6YTBM'],
    ['a length no byte count encodes (3 left over)', 'MZX'],
    ['non-zero leftover bits', 'MZ'],
    ['padding in the middle', 'MY======MY======'],
    ['too much padding', 'MY======='],
    ['too little padding', 'MY====='],
    ['padding after a whole group', 'MZXW6YTB========'],
    ['only padding', '========'],
    ['a non-ASCII letter', 'MZXW6YTÄ'],
  ];
  for (const [what, text] of refused) {
    it(`refuses ${what}`, () => assert.equal(decodeBase32(text), undefined));
  }

  it('refuses input over its length limit before decoding', () => {
    assert.equal(decodeBase32('A'.repeat(MAX_BASE32_LENGTH + 8)), undefined);
    assert.notEqual(decodeBase32('A'.repeat(MAX_BASE32_LENGTH)), undefined);
  });

  it('round-trips random bytes of every length up to 64', () => {
    for (let length = 0; length <= 64; length++) {
      const bytes = randomBytes(length);
      assert.deepEqual(decodeBase32(encodeBase32(bytes)), bytes);
    }
  });

  it('fuzz: hostile strings never throw and decode only to what re-encodes to the same text', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcxyz=018 -\u0000\u00e9\ud800';
    for (let round = 0; round < 20_000; round++) {
      const length = Math.floor(Math.random() * 40);
      let text = '';
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(Math.random() * alphabet.length)];
      const decoded = decodeBase32(text);
      if (decoded !== undefined) assert.equal(encodeBase32(decoded), text.toUpperCase().replace(/=+$/, ''), text);
    }
  });
});

describe('TOTP (RFC 6238 appendix B, SHA-1 rows)', () => {
  // The SHA-1 seed of appendix B is the ASCII of "12345678901234567890"; the codes have 8 digits.
  const seed = Buffer.from('12345678901234567890', 'ascii');
  const rows: Array<[number, string]> = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];
  for (const [seconds, code] of rows) {
    it(`gives ${code} at T = ${seconds}`, () => {
      assert.equal(totpCode(seed, seconds * 1000, 8), code);
      // A 6-digit code is the same number modulo 10^6: the last six digits.
      assert.equal(totpCode(seed, seconds * 1000), code.slice(2));
    });
  }

  it('gives the RFC 4226 appendix D HOTP values', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => assert.equal(hotp(seed, counter), code));
  });

  it('accepts the current code and one step either side, no further', () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    for (const offset of [-1, 0, 1]) assert.equal(matchTotpStep(seed, hotp(seed, step + offset), now, 0), step + offset);
    for (const offset of [-2, 2, 3]) assert.equal(matchTotpStep(seed, hotp(seed, step + offset), now, 0), undefined);
  });

  it('refuses a code whose step is not later than the last used one', () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    assert.equal(matchTotpStep(seed, hotp(seed, step), now, step), undefined);
    assert.equal(matchTotpStep(seed, hotp(seed, step - 1), now, step - 1), undefined);
    assert.equal(matchTotpStep(seed, hotp(seed, step + 1), now, step), step + 1);
  });

  it('refuses anything but six ASCII digits', () => {
    const now = 59_000;
    const code = totpCode(seed, now);
    for (const bad of ['', ` ${code}`, `${code}0`, code.slice(1), '٢٨٧٠٨٢', '12345a', `${code}\n`]) {
      assert.equal(matchTotpStep(seed, bad, now, 0), undefined, JSON.stringify(bad));
    }
  });

  it('writes the Key URI an authenticator app reads', () => {
    const uri = otpauthUri('Gatehouse', 'alice smith', seed);
    assert.equal(uri, 'otpauth://totp/Gatehouse:alice%20smith?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30');
    const long = otpauthUri('Gatehouse', 'é'.repeat(300), seed);
    assert.ok(long.length < 600, 'a long username is shortened in the label');
  });
});

describe('recovery codes', () => {
  it('makes ten distinct codes of 80 bits each, whose SHA-256 digests are what is stored', () => {
    const { codes, digests } = newRecoveryCodes();
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const [index, code] of codes.entries()) {
      assert.match(code, /^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
      assert.equal(decodeBase32(code.replace(/-/g, '').toUpperCase())?.length, 10, '80 bits');
      assert.equal(digests[index], createHash('sha256').update(`gatehouse recovery code\0${code.replace(/-/g, '')}`).digest('base64url'));
      assert.match(digests[index] ?? '', RECOVERY_DIGEST_FORMAT);
      assert.equal(recoveryDigest(code), digests[index]);
      assert.ok(!(digests[index] ?? '').includes(code.replace(/-/g, '')));
    }
  });

  it('takes a code typed in capitals, without dashes or with spaces', () => {
    const { codes, digests } = newRecoveryCodes();
    const code = codes[3] ?? '';
    for (const typed of [code.toUpperCase(), code.replace(/-/g, ''), code.replace(/-/g, ' ')]) {
      assert.equal(findRecoveryDigest(digests, recoveryDigest(typed) ?? ''), 3);
    }
  });

  it('refuses what cannot be a code, and a code of another set', () => {
    const { digests } = newRecoveryCodes();
    const other = newRecoveryCodes().codes[0] ?? '';
    assert.equal(findRecoveryDigest(digests, recoveryDigest(other) ?? ''), -1);
    for (const bad of ['', 'abcd-efgh', 'abcd-efgh-ijkl-mno1', 'x'.repeat(65), 'abcd-efgh-ijkl-mnop-qrst']) assert.equal(recoveryDigest(bad), undefined, bad);
  });
});

describe('sealing the seed', () => {
  const key = randomBytes(32);
  it('opens what it sealed, and nothing sealed with another key or changed', () => {
    const sealer = createSealer(key);
    const seed = randomBytes(20);
    const sealed = sealer.seal(seed);
    assert.match(sealed, SEALED_FORMAT);
    assert.ok(!sealed.includes(encodeBase32(seed)));
    assert.deepEqual(sealer.open(sealed), seed);
    assert.notEqual(sealer.seal(seed), sealed, 'every seal has its own IV');
    assert.equal(createSealer(randomBytes(32)).open(sealed), undefined);
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const changed = Buffer.from(bytes);
      changed[i] = (changed[i] ?? 0) ^ 1;
      assert.equal(sealer.open(`v1.${changed.toString('base64url')}`), undefined, `byte ${i}`);
    }
    for (const bad of ['', 'v1.', 'v2.' + sealed.slice(3), sealed + 'A'.repeat(300), 'v1.AAAA']) assert.equal(sealer.open(bad), undefined);
  });

  it('refuses a key of the wrong size', () => {
    assert.throws(() => createSealer(randomBytes(16)), TypeError);
  });
});
