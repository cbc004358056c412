import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createChallengeStore, type ChallengeEntry } from '../../src/webauthn/challenges.js';

const GET: ChallengeEntry = { ceremony: 'get', username: undefined, userHandle: undefined };
const LIMITS = { ttlMs: 1000, maxOutstanding: 10, maxPerClient: 3 };

describe('passkey challenges', () => {
  it('issues 32 random bytes that can be taken once, with what they were issued for', () => {
    const store = createChallengeStore(LIMITS);
    const entry: ChallengeEntry = { ceremony: 'create', username: 'alice', userHandle: 'aGFuZGxl' };
    const challenge = store.issue(entry, 'a', 0);
    assert.equal(challenge?.length, 32);
    assert.deepEqual(store.take(challenge ?? Buffer.alloc(0), 10), entry);
    assert.equal(store.take(challenge ?? Buffer.alloc(0), 10), undefined);
    assert.equal(store.take(randomBytes(32), 10), undefined);
    assert.equal(store.size, 0);
  });

  it('refuses a challenge at its expiry, and forgets expired ones when issuing', () => {
    const store = createChallengeStore(LIMITS);
    const first = store.issue(GET, 'a', 0) ?? Buffer.alloc(0);
    assert.equal(store.take(first, 1000), undefined);
    store.issue(GET, 'b', 0);
    store.issue(GET, 'c', 500);
    assert.equal(store.size, 2);
    store.issue(GET, 'd', 1000);
    assert.equal(store.size, 2, 'the one issued at 0 is gone at 1000');
  });

  it('keeps at most maxPerClient per client, dropping that client oldest', () => {
    const store = createChallengeStore(LIMITS);
    const issued = [0, 1, 2, 3].map((i) => store.issue(GET, 'flood', i) ?? Buffer.alloc(0));
    const other = store.issue(GET, 'honest', 4) ?? Buffer.alloc(0);
    assert.equal(store.size, 4);
    assert.equal(store.take(issued[0] ?? Buffer.alloc(0), 5), undefined, 'the oldest of the flooding client was dropped');
    assert.deepEqual(store.take(issued[3] ?? Buffer.alloc(0), 5), GET);
    assert.deepEqual(store.take(other, 5), GET, 'another client keeps its challenge');
  });

  it('refuses new challenges once maxOutstanding are held, until some expire', () => {
    const store = createChallengeStore(LIMITS);
    for (let i = 0; i < 10; i++) assert.ok(store.issue(GET, `client ${i}`, 0) !== undefined);
    assert.equal(store.issue(GET, 'late', 1), undefined);
    assert.equal(store.size, 10);
    assert.ok(store.issue(GET, 'late', 1000) !== undefined);
    assert.equal(store.size, 1);
  });

  it('stays bounded under a flood of 100,000 requests from many clients', () => {
    const store = createChallengeStore({ ttlMs: 300_000, maxOutstanding: 1000, maxPerClient: 64 });
    let refused = 0;
    for (let i = 0; i < 100_000; i++) if (store.issue(GET, `client ${i % 5000}`, i) === undefined) refused++;
    assert.equal(store.size, 1000);
    assert.ok(refused > 0);
  });
});
