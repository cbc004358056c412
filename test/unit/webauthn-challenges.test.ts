import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { TooManyChallenges } from '../../src/errors.js';
import { throttleKeyOf } from '../../src/http/client-address.js';
import { CHALLENGE_LIMITS, createChallengeStore, type ChallengeEntry, type ChallengeStore } from '../../src/passkeys/challenges.js';

const GET: ChallengeEntry = { ceremony: 'get', username: undefined, userHandle: undefined };
const CREATE: ChallengeEntry = { ceremony: 'create', username: 'alice', userHandle: 'aGFuZGxl' };
const LIMITS = { ttlMs: 1000, maxPerNetwork: 3, maxPerWideNetwork: 6, maxSignIn: 10, maxRegistration: 4 };
const NONE = Buffer.alloc(0);

/** The client key of an IPv6 address, as the routes pass it (its /64). */
const v6 = (address: string): string => throttleKeyOf(address);

/** Whether `challenge` is still held, taking it (so each may be asked once). */
const isHeld = (store: ChallengeStore, challenge: Buffer | undefined, nowMs: number): boolean =>
  store.take(challenge ?? NONE, nowMs) !== undefined;

describe('passkey challenges', () => {
  it('issues 32 random bytes that can be taken once, with what they were issued for', () => {
    const store = createChallengeStore(LIMITS);
    const challenge = store.issue(CREATE, '192.0.2.1', 0);
    assert.equal(challenge.length, 32);
    assert.deepEqual(store.take(challenge, 10), CREATE);
    assert.equal(store.take(challenge, 10), undefined);
    assert.equal(store.take(randomBytes(32), 10), undefined);
    assert.equal(store.size, 0);
  });

  it('refuses a challenge at its expiry, and forgets expired ones when issuing', () => {
    const store = createChallengeStore(LIMITS);
    const first = store.issue(GET, '192.0.2.1', 0);
    assert.equal(store.take(first, 1000), undefined);
    store.issue(GET, '192.0.2.2', 0);
    store.issue(GET, '192.0.2.3', 500);
    assert.equal(store.size, 2);
    store.issue(GET, '192.0.2.4', 1000);
    assert.equal(store.size, 2, 'the one issued at 0 is gone at 1000');
  });

  it('keeps at most 64 per network by default: an IPv4 address, an IPv6 /56', () => {
    assert.equal(CHALLENGE_LIMITS.maxPerNetwork, 64);
    assert.equal(CHALLENGE_LIMITS.ttlMs, 5 * 60_000);
    const store = createChallengeStore();
    // One home /56 rotating through its 256 /64s, as a flood from one household can.
    const flood = Array.from({ length: 65 }, (_, i) => store.issue(GET, v6(`2001:db8:a:${(0x1200 + i).toString(16)}::1`), i));
    assert.equal(store.size, 64);
    assert.equal(isHeld(store, flood[0], 100), false, 'its 65th dropped its own oldest');
    for (const challenge of flood.slice(1)) assert.equal(isHeld(store, challenge, 100), true);
    const address = Array.from({ length: 65 }, (_, i) => store.issue(GET, '198.51.100.7', 200 + i));
    assert.equal(isHeld(store, address[0], 300), false);
    assert.equal(isHeld(store, address[1], 300), true);
  });

  it('drops a network\'s own oldest, of either ceremony, for its next one, and nobody else\'s', () => {
    const store = createChallengeStore(LIMITS);
    const honest = store.issue(GET, v6('2001:db8:b::1'), 0);
    const own = [store.issue(CREATE, v6('2001:db8:a:1::1'), 1), store.issue(GET, v6('2001:db8:a:2::1'), 2), store.issue(GET, v6('2001:db8:a:3::1'), 3)];
    const next = store.issue(GET, v6('2001:db8:a:ff::1'), 4);
    assert.equal(isHeld(store, own[0], 5), false, 'the registration challenge of the same /56 was its oldest');
    assert.equal(isHeld(store, honest, 5), true, 'another /56 of the same /48 keeps its challenge');
    for (const challenge of [own[1], own[2], next]) assert.equal(isHeld(store, challenge, 5), true);
  });

  it('refuses, never drops another network\'s challenge, once the sign-in pool is full; a network at its cap still rotates', () => {
    const store = createChallengeStore(LIMITS);
    const held = Array.from({ length: 10 }, (_, i) => store.issue(GET, `192.0.${i}.1`, i));
    assert.equal(store.size, 10);
    assert.throws(() => store.issue(GET, '198.51.100.1', 10), (error: unknown) => {
      assert.ok(error instanceof TooManyChallenges);
      assert.equal(error.status, 503);
      assert.equal(error.retryAfterSeconds, 1, 'the oldest expires at 1000 ms, 990 ms from now');
      return true;
    });
    // A network holding its 3 in a full store may still replace its own oldest.
    const full = createChallengeStore({ ...LIMITS, maxSignIn: 3 });
    const mine = [0, 1, 2].map((i) => full.issue(GET, '192.0.2.1', i));
    assert.throws(() => full.issue(GET, '192.0.2.2', 3), TooManyChallenges);
    const rotated = full.issue(GET, '192.0.2.1', 4);
    assert.equal(isHeld(full, mine[0], 5), false);
    assert.equal(isHeld(full, rotated, 5), true);
    for (const challenge of held) assert.equal(isHeld(store, challenge, 11), true, 'every challenge of the full store was kept');
  });

  it('gives the seconds until the oldest held challenge expires as the refusal\'s Retry-After', () => {
    const store = createChallengeStore({ ...LIMITS, ttlMs: 300_000 });
    for (let i = 0; i < 10; i++) store.issue(GET, `192.0.${i}.1`, 1000 * i);
    assert.throws(() => store.issue(GET, '198.51.100.1', 100_500), (error: unknown) => error instanceof TooManyChallenges && error.retryAfterSeconds === 200);
  });

  it('keeps registration challenges in a pool of their own: a full sign-in pool does not stop them, nor the reverse', () => {
    const store = createChallengeStore(LIMITS);
    for (let i = 0; i < 10; i++) store.issue(GET, `192.0.${i}.1`, 0);
    const creates = Array.from({ length: 4 }, (_, i) => store.issue(CREATE, `198.51.${i}.1`, 1));
    assert.throws(() => store.issue(CREATE, '198.51.100.9', 2), TooManyChallenges);
    assert.throws(() => store.issue(GET, '198.51.100.9', 2), TooManyChallenges);
    for (const challenge of creates) assert.equal(isHeld(store, challenge, 3), true);
    assert.equal(store.issue(CREATE, '198.51.100.9', 4).length, 32, 'a place taken is a place free again');
  });

  it('refuses growth beyond maxPerWideNetwork to one IPv4 /24 or IPv6 /48, whose /56s or addresses each still rotate', () => {
    const store = createChallengeStore(LIMITS);
    const a = [0, 1, 2].map((i) => store.issue(GET, v6(`2001:db8:a:${i}::1`), i));
    const b = [0, 1, 2].map((i) => store.issue(GET, v6(`2001:db8:a:${(0x100 + i).toString(16)}::1`), 3 + i));
    assert.throws(() => store.issue(GET, v6('2001:db8:a:200::1'), 6), TooManyChallenges);
    assert.equal(store.issue(GET, v6('2001:db8:b::1'), 6).length, 32, 'another /48 is not affected');
    const rotated = store.issue(GET, v6('2001:db8:a:5::1'), 7);
    assert.equal(isHeld(store, a[0], 8), false);
    for (const challenge of [...a.slice(1), ...b, rotated]) assert.equal(isHeld(store, challenge, 8), true);
    const v4 = createChallengeStore(LIMITS);
    for (let i = 0; i < 6; i++) v4.issue(GET, `203.0.113.${i}`, i);
    assert.throws(() => v4.issue(GET, '203.0.113.200', 6), TooManyChallenges);
    assert.equal(v4.issue(GET, '203.0.114.1', 6).length, 32);
  });

  it('under a flood of 100,000 requests from 5,000 networks in 100 /48s stays bounded and keeps every earlier challenge', () => {
    const store = createChallengeStore({ ...CHALLENGE_LIMITS, ttlMs: 300_000 });
    const honest = store.issue(GET, '192.0.2.1', 0);
    const registering = store.issue(CREATE, '192.0.2.2', 0);
    let refused = 0;
    for (let i = 0; i < 100_000; i++) {
      const network = i % 5000;
      const client = v6(`2001:db8:${(network % 100).toString(16)}:${(Math.floor(network / 100) << 8).toString(16)}::1`);
      try {
        store.issue(GET, client, 1 + i);
      } catch (error) {
        assert.ok(error instanceof TooManyChallenges);
        refused += 1;
      }
    }
    assert.ok(store.size <= CHALLENGE_LIMITS.maxSignIn + CHALLENGE_LIMITS.maxRegistration, `${store.size} held`);
    assert.ok(refused > 0, 'the flood was refused once the pool was full');
    assert.equal(isHeld(store, honest, 100_001), true, 'a challenge issued before the flood is never dropped for it');
    assert.equal(isHeld(store, registering, 100_001), true);
    // Within its 5 minutes, no network's challenge was dropped for another's: every refusal was a
    // request that found the pool full.
    assert.equal(store.size, CHALLENGE_LIMITS.maxSignIn - 1);
  });

  it('serves newcomers again once the flood\'s challenges expire', () => {
    const store = createChallengeStore(LIMITS);
    for (let i = 0; i < 10; i++) store.issue(GET, `192.0.${i}.1`, 0);
    assert.throws(() => store.issue(GET, '198.51.100.1', 999), TooManyChallenges);
    const later = store.issue(GET, '198.51.100.1', 1000);
    assert.equal(isHeld(store, later, 1001), true);
  });
});
