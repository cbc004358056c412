import { randomBytes } from 'node:crypto';
import { CHALLENGE_BYTES } from './verify.js';

// WebAuthn challenges (section 13.4.3): 32 random bytes, good for one use and five minutes, held
// in memory only and bounded whatever a flood of options requests does. A client key keeps at most
// `maxPerClient` (its oldest dropped for a new one, so a flood from one place spends its own); the
// store at most `maxOutstanding`, when full dropping its oldest sign-in (`get`) challenge, else its
// oldest registration one. It never refuses, so a flood from many places cannot stop others getting
// a challenge, and registration challenges (signed-in callers only) outlive a flood of sign-in ones.

type Ceremony = 'get' | 'create';

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

type Held = { readonly entry: ChallengeEntry; readonly expiresAt: number; readonly client: string };
type ChallengeLimits = Readonly<Record<'ttlMs' | 'maxOutstanding' | 'maxPerClient', number>>;

/** Five minutes (the options' `timeout`); 10,000 outstanding is a few MB at most. */
export const CHALLENGE_LIMITS: ChallengeLimits = Object.freeze({
  ttlMs: 5 * 60_000, maxOutstanding: 10_000, maxPerClient: 64,
});

export function createChallengeStore(limits: ChallengeLimits = CHALLENGE_LIMITS): ChallengeStore {
  // Insertion order is expiry order (one lifetime for all), so expired entries are at the front.
  const held = new Map<string, Held>();
  const byClient = new Map<string, string[]>();
  // The same keys by ceremony, each in insertion order: the eviction order when the store is full.
  const byCeremony: Record<Ceremony, Set<string>> = { get: new Set(), create: new Set() };
  const oldest = (keys: Set<string>): string | undefined => keys.values().next().value;

  const forget = (key: string | undefined): void => {
    const found = key === undefined ? undefined : held.get(key);
    if (key === undefined || found === undefined) return;
    held.delete(key);
    byCeremony[found.entry.ceremony].delete(key);
    const keys = byClient.get(found.client) ?? [];
    keys.splice(keys.indexOf(key), 1); // every held key is in its client's list
    if (keys.length === 0) byClient.delete(found.client);
  };

  return {
    issue({ ceremony, username, userHandle }, client, nowMs) {
      for (const [key, found] of held) {
        if (found.expiresAt > nowMs) break;
        forget(key);
      }
      const mine = byClient.get(client) ?? [];
      if (mine.length >= limits.maxPerClient) forget(mine[0]);
      // Full: the oldest sign-in challenge goes, or failing that the oldest registration one.
      if (held.size >= limits.maxOutstanding) forget(oldest(byCeremony.get) ?? oldest(byCeremony.create));
      const challenge = randomBytes(CHALLENGE_BYTES);
      const key = challenge.toString('base64url');
      held.set(key, { entry: { ceremony, username, userHandle }, expiresAt: nowMs + limits.ttlMs, client });
      byCeremony[ceremony].add(key);
      byClient.set(client, [...mine, key]);
      return challenge;
    },
    take(challenge, nowMs) {
      const key = challenge.toString('base64url');
      const found = held.get(key);
      // Single use: gone whether or not what follows verifies.
      forget(key);
      return found !== undefined && found.expiresAt > nowMs ? found.entry : undefined;
    },
    get size() {
      return held.size;
    },
  };
}
