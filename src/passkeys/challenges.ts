import { randomBytes } from 'node:crypto';
import { TooManyChallenges } from '../errors.js';
import { homeNetworkKeyOf, networkKeyOf } from '../http/network-key.js';
import { CHALLENGE_BYTES } from './verify.js';
import type { EpochMs } from '../time.js';

// WebAuthn challenges (section 13.4.3): 32 random bytes, good for one use and five minutes, held
// in memory only, bounded whatever a flood of options requests does
// (docs/contract/access.md "Decoys"). One network (an IPv4 address, an IPv6 /56: what one home is
// given) holds at most `maxPerNetwork`, its next one dropping its own oldest, so a flood from one
// home spends only its own. No challenge is ever dropped for another network's before it expires:
// when a pool is full, or a wider network (IPv4 /24, IPv6 /48) holds `maxPerWideNetwork`, a new
// challenge is refused (503) instead. Registration challenges (signed-in callers only) have a pool
// of their own, so a flood of sign-in options cannot stop anyone adding a passkey.

type Ceremony = 'get' | 'create';

export interface ChallengeEntry {
  readonly ceremony: Ceremony;
  /** get: the username the options were asked for, if any; create: the signed-in account. */
  readonly username: string | undefined;
  /** create: the WebAuthn user.id the options named. */
  readonly userHandle: string | undefined;
}

export interface ChallengeStore {
  /** A fresh challenge for `entry`; `client` is the asker's throttle key. Throws TooManyChallenges (see above). */
  issue(entry: ChallengeEntry, client: string, nowMs: EpochMs): Buffer;
  /** Removes the challenge and returns what it was issued for; undefined when unknown, used or expired. */
  take(challenge: Buffer, nowMs: EpochMs): ChallengeEntry | undefined;
  readonly size: number;
}

type Held = { readonly entry: ChallengeEntry; readonly expiresAt: EpochMs; readonly network: string; readonly wide: string };
type ChallengeLimits = Readonly<
  Record<'ttlMs' | 'maxPerNetwork' | 'maxPerWideNetwork' | 'maxSignIn' | 'maxRegistration', number>
>;

/**
 * Five minutes (the options' `timeout`). 64 per home, 1,024 per /24 or /48 (so it takes at least
 * ten of those to fill the sign-in pool), 10,000 sign-in and 1,000 registration challenges: about
 * 750 bytes each when every one comes from a network of its own, so under 9 MB in all.
 */
export const CHALLENGE_LIMITS: ChallengeLimits = Object.freeze({
  ttlMs: 5 * 60_000, maxPerNetwork: 64, maxPerWideNetwork: 1024, maxSignIn: 10_000, maxRegistration: 1000,
});

export function createChallengeStore(limits: ChallengeLimits = CHALLENGE_LIMITS): ChallengeStore {
  // Insertion order is expiry order (one lifetime for all), so expired entries are at the front;
  // each set below keeps the same order.
  const held = new Map<string, Held>();
  const byNetwork = new Map<string, Set<string>>();
  const byWide = new Map<string, Set<string>>();
  const byCeremony: Record<Ceremony, Set<string>> = { get: new Set(), create: new Set() };
  const poolLimit: Record<Ceremony, number> = { get: limits.maxSignIn, create: limits.maxRegistration };

  const oldest = (keys: Set<string> | undefined): string | undefined => keys?.values().next().value;
  const add = (sets: Map<string, Set<string>>, name: string, key: string): void => {
    const keys = sets.get(name);
    if (keys === undefined) sets.set(name, new Set([key]));
    else keys.add(key);
  };
  const remove = (sets: Map<string, Set<string>>, name: string, key: string): void => {
    const keys = sets.get(name);
    keys?.delete(key);
    if (keys?.size === 0) sets.delete(name);
  };
  const forget = (key: string | undefined): void => {
    const found = key === undefined ? undefined : held.get(key);
    if (key === undefined || found === undefined) return;
    held.delete(key);
    byCeremony[found.entry.ceremony].delete(key);
    remove(byNetwork, found.network, key);
    remove(byWide, found.wide, key);
  };
  /** A refusal whose Retry-After is when the oldest of `keys` (which is full) expires. */
  const refusal = (keys: Set<string> | undefined, nowMs: EpochMs): TooManyChallenges => {
    const expiresAt = held.get(oldest(keys) ?? '')?.expiresAt ?? nowMs + limits.ttlMs;
    return new TooManyChallenges(Math.max(1, Math.ceil((expiresAt - nowMs) / 1000)));
  };

  return {
    issue({ ceremony, username, userHandle }, client, nowMs) {
      for (const [key, found] of held) {
        if (found.expiresAt > nowMs) break;
        forget(key);
      }
      const network = homeNetworkKeyOf(client);
      const wide = networkKeyOf(client);
      const mine = byNetwork.get(network);
      // The network's own oldest goes for this one; the limits below are judged without it.
      const ownOldest = (mine?.size ?? 0) >= limits.maxPerNetwork ? oldest(mine) : undefined;
      const freed = ownOldest === undefined ? undefined : held.get(ownOldest);
      const wideHeld = (byWide.get(wide)?.size ?? 0) - (freed === undefined ? 0 : 1);
      if (wideHeld >= limits.maxPerWideNetwork) throw refusal(byWide.get(wide), nowMs);
      const poolHeld = byCeremony[ceremony].size - (freed?.entry.ceremony === ceremony ? 1 : 0);
      if (poolHeld >= poolLimit[ceremony]) throw refusal(byCeremony[ceremony], nowMs);
      forget(ownOldest);
      const challenge = randomBytes(CHALLENGE_BYTES);
      const key = challenge.toString('base64url');
      held.set(key, { entry: { ceremony, username, userHandle }, expiresAt: nowMs + limits.ttlMs, network, wide });
      byCeremony[ceremony].add(key);
      add(byNetwork, network, key);
      add(byWide, wide, key);
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
