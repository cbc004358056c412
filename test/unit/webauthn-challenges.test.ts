import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createChallengeStore, type ChallengeEntry } from '../../src/webauthn/challenges.js';

const GET: ChallengeEntry = { ceremony: 'get', username: undefined, userHandle: undefined };
const CREATE: ChallengeEntry = { ceremony: 'create', username: 'alice', userHandle: 'aGFuZGxl' };
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

  it('never refuses when maxOutstanding are held: the oldest is dropped for the new one', () => {
    const store = createChallengeStore(LIMITS);
    const issued = Array.from({ length: 10 }, (_, i) => store.issue(GET, `client ${i}`, i));
    const late = store.issue(GET, 'late', 10);
    assert.equal(late.length, 32);
    assert.equal(store.size, 10);
    assert.equal(store.take(issued[0] ?? Buffer.alloc(0), 11), undefined, 'the oldest was dropped');
    assert.deepEqual(store.take(issued[1] ?? Buffer.alloc(0), 11), GET);
    assert.deepEqual(store.take(late, 11), GET);
  });

  it('drops sign-in challenges before registration ones when full, and the oldest registration one when all are', () => {
    const store = createChallengeStore(LIMITS);
    const create = store.issue(CREATE, 'signed in', 0);
    const gets = Array.from({ length: 9 }, (_, i) => store.issue(GET, `client ${i}`, 1 + i));
    for (let i = 0; i < 20; i++) store.issue(GET, `flood ${i}`, 10 + i);
    assert.equal(store.size, 10);
    assert.deepEqual(store.take(create, 30), CREATE, 'the older registration challenge outlived the flood');
    for (const get of gets) assert.equal(store.take(get, 30), undefined);

    const creates = Array.from({ length: 10 }, (_, i) => store.issue(CREATE, `account ${i}`, 40));
    assert.equal(store.size, 10, 'every sign-in challenge was dropped first');
    store.issue(CREATE, 'account late', 41);
    assert.equal(store.size, 10);
    assert.equal(store.take(creates[0] ?? Buffer.alloc(0), 42), undefined, 'the oldest registration challenge was dropped');
    assert.deepEqual(store.take(creates[1] ?? Buffer.alloc(0), 42), CREATE);
  });

  it('stays bounded under a flood of 100,000 requests from many clients, and still serves a newcomer', () => {
    const store = createChallengeStore({ ttlMs: 300_000, maxOutstanding: 1000, maxPerClient: 64 });
    for (let i = 0; i < 100_000; i++) assert.equal(store.issue(GET, `client ${i % 5000}`, i).length, 32);
    assert.equal(store.size, 1000);
    const honest = store.issue(GET, 'honest', 100_000);
    for (let i = 0; i < 500; i++) store.issue(GET, `client ${i}`, 100_001 + i);
    assert.equal(store.size, 1000);
    assert.deepEqual(store.take(honest, 100_600), GET, 'a challenge lasts while fewer than maxOutstanding newer ones are asked for');
  });
});
