import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DECOY_LENGTHS, decoyCredentialIds, decoyKeyOf, MAX_DECOYS } from '../../src/passkeys/decoys.js';

const KEY = decoyKeyOf(Buffer.from('a token secret of at least thirty-two bytes'));
const NAMES = Array.from({ length: 20_000 }, (_, i) => `name-${i}`);

describe('decoy credential ids', () => {
  it('gives the same name the same ids every time, and another key other ids', () => {
    for (const name of ['alice', 'Alice', 'ａｌｉｃｅ', '']) {
      assert.deepEqual(decoyCredentialIds(KEY, name), decoyCredentialIds(KEY, name), name);
      assert.notDeepEqual(decoyCredentialIds(KEY, name), decoyCredentialIds(decoyKeyOf(Buffer.from('another secret, also long enough!!')), name), name);
    }
    assert.notDeepEqual(decoyCredentialIds(KEY, 'alice'), decoyCredentialIds(KEY, 'Alice'));
  });

  it('gives each name 1 to 16 distinct ids of the lengths real credential ids have', () => {
    assert.equal(MAX_DECOYS, 16);
    for (const name of NAMES.slice(0, 2000)) {
      const ids = decoyCredentialIds(KEY, name);
      assert.ok(ids.length >= 1 && ids.length <= MAX_DECOYS, `${name}: ${ids.length}`);
      assert.equal(new Set(ids).size, ids.length);
      for (const id of ids) assert.ok((DECOY_LENGTHS as readonly number[]).includes(Buffer.from(id, 'base64url').length), id);
    }
  });

  it('gives small numbers most often, yet 3, 5 and more to many names: half 1, a quarter 2, an eighth 3', () => {
    const counts = new Map<number, number>();
    for (const name of NAMES) {
      const n = decoyCredentialIds(KEY, name).length;
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    const share = (n: number): number => (counts.get(n) ?? 0) / NAMES.length;
    // Each share within a tenth of 2^-n (binomial spread on 20,000 names is far smaller).
    for (const n of [1, 2, 3, 4, 5]) {
      assert.ok(Math.abs(share(n) - 2 ** -n) < 0.1 * 2 ** -n, `share of ${n}: ${share(n)}`);
    }
    assert.ok([...counts.keys()].some((n) => n >= 10), `counts seen: ${[...counts.keys()].sort((a, b) => a - b).join(', ')}`);
    assert.ok(Math.max(...counts.keys()) <= 16);
  });

  it('uses every length real credential ids have', () => {
    const lengths = new Set(NAMES.slice(0, 500).flatMap((name) => decoyCredentialIds(KEY, name).map((id) => Buffer.from(id, 'base64url').length)));
    assert.deepEqual([...lengths].sort((a, b) => a - b), [...DECOY_LENGTHS]);
  });
});
