import { randomBytes } from 'node:crypto';
import { CHALLENGE_BYTES } from './verify.js';

// WebAuthn challenges (section 13.4.3): 32 random bytes, good for one use and five minutes,
// held in memory only. Memory is bounded whatever a flood of options requests does: each client
// key keeps at most `maxPerClient` outstanding (its oldest is dropped for a new one, so a flood
// from one place only spends its own), and the whole store at most `maxOutstanding`: when that is
// reached the oldest outstanding sign-in (`get`) challenge is dropped for the new one, or the oldest
// registration (`create`) one when no sign-in one is held. A full store never refuses, so a flood
// from many places cannot stop others from getting a challenge; registration challenges, asked
// for by signed-in callers only, outlive a flood of sign-in ones.

export type Ceremony = 'get' | 'create';

export interface ChallengeEntry {
  readonly ceremony: Ceremony;
  /** get: the username the options were asked for, if any; create: the signed-in account. */
  readonly username: string | undefined;
  /** create: the WebAuthn user.id the options named. */
  readonly userHandle: string | undefined;
}

export interface ChallengeStore {
  /** A fresh challenge for `entry`, never refused (see above). `client` is the asker's throttle key. */
  issue(entry: ChallengeEntry, client: string, nowMs: number): Buffer;
  /** Removes the challenge and returns what it was issued for; undefined when unknown, used or expired. */
  take(challenge: Buffer, nowMs: number): ChallengeEntry | undefined;
  readonly size: number;
}

export interface ChallengeLimits {
  readonly ttlMs: number;
  readonly maxOutstanding: number;
  readonly maxPerClient: number;
}

/** Five minutes (the options' `timeout`); 10,000 outstanding is a few MB at most. */
export const CHALLENGE_LIMITS: ChallengeLimits = Object.freeze({ ttlMs: 5 * 60_000, maxOutstanding: 10_000, maxPerClient: 64 });

interface Held extends ChallengeEntry {
  readonly expiresAt: number;
  readonly client: string;
}

export function createChallengeStore(limits: ChallengeLimits = CHALLENGE_LIMITS): ChallengeStore {
  // Insertion order is expiry order (one lifetime for all), so expired entries are at the front.
  const held = new Map<string, Held>();
  const byClient = new Map<string, string[]>();
  // The same keys by ceremony, each in insertion order: the eviction order when the store is full.
  const byCeremony: Record<Ceremony, Set<string>> = { get: new Set(), create: new Set() };

  const forget = (key: string, entry: Held): void => {
    held.delete(key);
    byCeremony[entry.ceremony].delete(key);
    const keys = byClient.get(entry.client);
    if (keys === undefined) return;
    const index = keys.indexOf(key);
    if (index >= 0) keys.splice(index, 1);
    if (keys.length === 0) byClient.delete(entry.client);
  };

  const prune = (nowMs: number): void => {
    for (const [key, entry] of held) {
      if (entry.expiresAt > nowMs) break;
      forget(key, entry);
    }
  };

  /** Drops the oldest sign-in challenge, or failing that the oldest registration one. */
  const evictOldest = (): void => {
    const keys = byCeremony.get.size > 0 ? byCeremony.get : byCeremony.create;
    const key: string | undefined = keys.values().next().value;
    if (key === undefined) return;
    const entry = held.get(key);
    if (entry === undefined) keys.delete(key);
    else forget(key, entry);
  };

  return {
    issue(entry, client, nowMs) {
      prune(nowMs);
      const mine = byClient.get(client);
      if (mine !== undefined && mine.length >= limits.maxPerClient) {
        const oldest = mine[0];
        const oldestEntry = oldest === undefined ? undefined : held.get(oldest);
        if (oldest !== undefined && oldestEntry !== undefined) forget(oldest, oldestEntry);
      }
      if (held.size >= limits.maxOutstanding) evictOldest();
      const challenge = randomBytes(CHALLENGE_BYTES);
      const key = challenge.toString('base64url');
      held.set(key, { ceremony: entry.ceremony, username: entry.username, userHandle: entry.userHandle, expiresAt: nowMs + limits.ttlMs, client });
      byCeremony[entry.ceremony].add(key);
      const keys = byClient.get(client) ?? [];
      keys.push(key);
      byClient.set(client, keys);
      return challenge;
    },
    take(challenge, nowMs) {
      const key = challenge.toString('base64url');
      const entry = held.get(key);
      if (entry === undefined) return undefined;
      // Single use: gone whether or not what follows verifies.
      forget(key, entry);
      if (entry.expiresAt <= nowMs) return undefined;
      return { ceremony: entry.ceremony, username: entry.username, userHandle: entry.userHandle };
    },
    get size() {
      return held.size;
    },
  };
}
