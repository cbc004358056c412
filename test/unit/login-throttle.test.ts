import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLoginThrottle, type ThrottleSettings } from '../../src/auth/login-throttle.js';

const T0 = 1_700_000_000_000;
const SETTINGS: ThrottleSettings = { maxFailuresPerUsername: 3, maxFailuresPerAddress: 5, windowSeconds: 60, maxEntries: 1000 };

function failTimes(throttle: ReturnType<typeof createLoginThrottle>, times: number, username: string, address: string, nowMs = T0): void {
  for (let i = 0; i < times; i++) throttle.recordFailure(username, address, nowMs);
}

describe('createLoginThrottle', () => {
  it('lets a username through until it reaches its failure limit', () => {
    const throttle = createLoginThrottle(SETTINGS);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0), 0);
    failTimes(throttle, 2, 'alice', '10.0.0.1');
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0), 0);
    throttle.recordFailure('alice', '10.0.0.1', T0);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0), 60);
  });

  it('blocks the username from every address, not only the one that failed', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 3, 'alice', '10.0.0.1');
    assert.ok(throttle.retryAfterSeconds('alice', '192.0.2.7', T0) > 0);
    assert.equal(throttle.retryAfterSeconds('bob', '192.0.2.7', T0), 0);
  });

  it('counts failures per username across addresses', () => {
    const throttle = createLoginThrottle(SETTINGS);
    throttle.recordFailure('alice', '10.0.0.1', T0);
    throttle.recordFailure('alice', '10.0.0.2', T0);
    throttle.recordFailure('alice', '10.0.0.3', T0);
    assert.ok(throttle.retryAfterSeconds('alice', '10.0.0.4', T0) > 0);
  });

  it('blocks an address after its failure limit, for any username', () => {
    const throttle = createLoginThrottle(SETTINGS);
    for (let i = 0; i < 4; i++) throttle.recordFailure(`user${i}`, '203.0.113.9', T0);
    assert.equal(throttle.retryAfterSeconds('fresh', '203.0.113.9', T0), 0);
    throttle.recordFailure('user4', '203.0.113.9', T0);
    assert.equal(throttle.retryAfterSeconds('fresh', '203.0.113.9', T0), 60);
    assert.equal(throttle.retryAfterSeconds('fresh', '203.0.113.10', T0), 0);
  });

  it('gives a retry-after that counts down with the injected clock', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 3, 'alice', '10.0.0.1');
    const steps: ReadonlyArray<[number, number]> = [
      [0, 60],
      [1, 60],
      [1_000, 59],
      [10_000, 50],
      [10_001, 50],
      [30_500, 30],
      [59_000, 1],
      [59_999, 1],
    ];
    for (const [elapsedMs, expected] of steps) {
      assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0 + elapsedMs), expected, `after ${elapsedMs} ms`);
    }
  });

  it('forgets the failures once the window has passed', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 5, 'alice', '10.0.0.1');
    assert.ok(throttle.retryAfterSeconds('alice', '10.0.0.1', T0 + 59_999) > 0);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0 + 60_000), 0);
  });

  it('starts a fresh window after expiry, so one more failure does not block again', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 3, 'alice', '10.0.0.1');
    const later = T0 + 60_000;
    throttle.recordFailure('alice', '10.0.0.1', later);
    throttle.recordFailure('alice', '10.0.0.1', later);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', later), 0);
    throttle.recordFailure('alice', '10.0.0.1', later);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', later), 60);
  });

  it('does not slide the window with each failure (a fixed window from the first failure)', () => {
    const throttle = createLoginThrottle(SETTINGS);
    throttle.recordFailure('alice', '10.0.0.1', T0);
    throttle.recordFailure('alice', '10.0.0.1', T0 + 30_000);
    throttle.recordFailure('alice', '10.0.0.1', T0 + 50_000);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0 + 50_000), 10);
  });

  it('clears the username on success but keeps the address count', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 3, 'alice', '10.0.0.1');
    failTimes(throttle, 2, 'mallory', '10.0.0.1');
    assert.ok(throttle.retryAfterSeconds('alice', '10.0.0.9', T0) > 0);
    throttle.recordSuccess('alice', '10.0.0.9');
    // The username block is gone (seen from an address with no failures)...
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.9', T0), 0);
    // ...but the address that made five failures stays blocked, for alice too.
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', T0), 60);
    assert.equal(throttle.retryAfterSeconds('someone', '10.0.0.1', T0), 60);
  });

  it('clears only the username that succeeded', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 3, 'alice', '10.0.0.1');
    failTimes(throttle, 3, 'bob', '10.0.0.2');
    throttle.recordSuccess('alice', '10.0.0.3');
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.3', T0), 0);
    assert.ok(throttle.retryAfterSeconds('bob', '10.0.0.3', T0) > 0);
  });

  it('answers the longer wait when both the username and the address are blocked', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 5, 'x', '10.0.0.1', T0);
    failTimes(throttle, 3, 'alice', '10.0.0.2', T0 + 20_000);
    const now = T0 + 20_000;
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.9', now), 60);
    assert.equal(throttle.retryAfterSeconds('y', '10.0.0.1', now), 40);
    assert.equal(throttle.retryAfterSeconds('alice', '10.0.0.1', now), 60);
  });

  it('stays bounded under 100,000 distinct usernames: the oldest entry is forgotten, a recent one kept', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 3, 'first-victim', '198.51.100.1');
    assert.ok(throttle.retryAfterSeconds('first-victim', '198.51.100.200', T0) > 0);
    for (let i = 0; i < 100_000; i++) throttle.recordFailure(`user-${i}`, '203.0.113.50', T0 + 1);
    failTimes(throttle, 3, 'last-victim', '198.51.100.2', T0 + 2);
    // All within the window: only eviction can have removed the first entry.
    assert.equal(throttle.retryAfterSeconds('first-victim', '198.51.100.200', T0 + 3), 0);
    assert.ok(throttle.retryAfterSeconds('last-victim', '198.51.100.200', T0 + 3) > 0);
  });

  it('keeps entries below maxEntries: with maxEntries 3, a fourth name evicts the first', () => {
    const throttle = createLoginThrottle({ ...SETTINGS, maxFailuresPerUsername: 1, maxEntries: 3 });
    for (const name of ['a', 'b', 'c']) throttle.recordFailure(name, `ip-${name}`, T0);
    for (const name of ['a', 'b', 'c']) assert.ok(throttle.retryAfterSeconds(name, 'other', T0) > 0, name);
    throttle.recordFailure('d', 'ip-d', T0);
    assert.equal(throttle.retryAfterSeconds('a', 'other', T0), 0);
    for (const name of ['b', 'c', 'd']) assert.ok(throttle.retryAfterSeconds(name, 'other', T0) > 0, name);
  });

  it('forgets the oldest address too when 1,000 distinct addresses have failed since', () => {
    const throttle = createLoginThrottle(SETTINGS);
    failTimes(throttle, 5, 'x', '198.51.100.1');
    assert.ok(throttle.retryAfterSeconds('y', '198.51.100.1', T0) > 0);
    for (let i = 0; i < SETTINGS.maxEntries; i++) throttle.recordFailure('x', `addr-${i}`, T0 + 1);
    assert.equal(throttle.retryAfterSeconds('y', '198.51.100.1', T0 + 2), 0);
  });

  it('evicts expired entries before live ones when full', () => {
    const throttle = createLoginThrottle({ ...SETTINGS, maxFailuresPerUsername: 1, maxEntries: 3 });
    throttle.recordFailure('old', 'ip-1', T0);
    throttle.recordFailure('b', 'ip-2', T0 + 30_000);
    throttle.recordFailure('c', 'ip-3', T0 + 30_000);
    const later = T0 + 61_000;
    throttle.recordFailure('d', 'ip-4', later);
    // "old" had expired; b and c are still live and must not have been evicted for d.
    for (const name of ['b', 'c', 'd']) assert.ok(throttle.retryAfterSeconds(name, 'other', later) > 0, name);
  });

  it('counts an attempt when it begins, so attempts still hashing cannot all pass the check', () => {
    const throttle = createLoginThrottle(SETTINGS);
    const waits = Array.from({ length: 6 }, () => throttle.beginAttempt('alice', '10.0.0.1', T0));
    assert.deepEqual(waits.slice(0, 3), [0, 0, 0]);
    for (const wait of waits.slice(3)) assert.ok(wait > 0, 'attempts past the limit wait');
  });

  it('gives back the address attempt on success but keeps earlier address failures', () => {
    const throttle = createLoginThrottle({ ...SETTINGS, maxFailuresPerAddress: 2 });
    assert.equal(throttle.beginAttempt('alice', '10.0.0.1', T0), 0);
    throttle.recordSuccess('alice', '10.0.0.1');
    assert.equal(throttle.beginAttempt('bob', '10.0.0.1', T0), 0);
    assert.equal(throttle.beginAttempt('carol', '10.0.0.1', T0), 0);
    assert.ok(throttle.beginAttempt('dave', '10.0.0.1', T0) > 0, 'two failures from the address block it');
  });

  it('does not count an attempt that was refused as throttled', () => {
    const throttle = createLoginThrottle({ ...SETTINGS, maxFailuresPerAddress: 2 });
    assert.equal(throttle.beginAttempt('a', '10.0.0.1', T0), 0);
    assert.equal(throttle.beginAttempt('b', '10.0.0.1', T0), 0);
    assert.equal(throttle.beginAttempt('c', '10.0.0.1', T0), 60);
    assert.equal(throttle.beginAttempt('d', '10.0.0.1', T0), 60);
    // Had the refused attempts been counted, one success would not bring the address below its limit.
    throttle.recordSuccess('b', '10.0.0.1');
    assert.equal(throttle.retryAfterSeconds('e', '10.0.0.1', T0), 0);
  });

  it('never takes an address below zero failures on success', () => {
    const throttle = createLoginThrottle({ ...SETTINGS, maxFailuresPerAddress: 2 });
    assert.equal(throttle.beginAttempt('a', '10.0.0.1', T0), 0);
    throttle.recordSuccess('a', '10.0.0.1');
    throttle.recordSuccess('a', '10.0.0.1');
    throttle.recordSuccess('a', '10.0.0.1');
    assert.equal(throttle.beginAttempt('x', '10.0.0.1', T0), 0);
    assert.equal(throttle.beginAttempt('y', '10.0.0.1', T0), 0);
    assert.ok(throttle.beginAttempt('z', '10.0.0.1', T0) > 0);
  });
});
