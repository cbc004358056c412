import type { EpochMs } from '../time.js';

export interface ThrottleSettings {
  readonly maxFailuresPerUsername: number;
  readonly maxFailuresPerAddress: number;
  readonly windowSeconds: number;
  /** Cap on remembered usernames and on remembered addresses, each. */
  readonly maxEntries: number;
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;

interface Window {
  failures: number;
  startedMs: EpochMs;
}

/**
 * Fixed-window failure counters per username and per client address. Memory is bounded:
 * each map holds at most `maxEntries`; expired windows go first, then the oldest.
 */
export function createLoginThrottle(settings: ThrottleSettings) {
  const windowMs = settings.windowSeconds * 1000;
  const byUsername = new Map<string, Window>();
  const byAddress = new Map<string, Window>();

  const live = (map: Map<string, Window>, key: string, nowMs: EpochMs): Window | undefined => {
    const entry = map.get(key);
    if (entry !== undefined && nowMs - entry.startedMs >= windowMs) {
      map.delete(key);
      return undefined;
    }
    return entry;
  };

  const waitSeconds = (entry: Window | undefined, max: number, nowMs: EpochMs): number =>
    entry === undefined || entry.failures < max
      ? 0
      : Math.max(1, Math.ceil((entry.startedMs + windowMs - nowMs) / 1000));

  const count = (map: Map<string, Window>, key: string, nowMs: EpochMs): void => {
    const entry = live(map, key, nowMs);
    if (entry !== undefined) {
      entry.failures++;
      return;
    }
    // Windows are appended as they start, so expired and oldest ones are at the front: O(1) amortized.
    for (const [oldKey, old] of map) {
      if (nowMs - old.startedMs < windowMs && map.size < settings.maxEntries) break;
      map.delete(oldKey);
    }
    map.set(key, { failures: 1, startedMs: nowMs });
  };

  const uncount = (map: Map<string, Window>, key: string): void => {
    const entry = map.get(key);
    if (entry !== undefined && entry.failures > 0) entry.failures--;
  };

  /** Seconds until a login for this username from this address may be tried again, or 0. */
  const retryAfterSeconds = (username: string, address: string, nowMs: EpochMs): number =>
    Math.max(
      waitSeconds(live(byUsername, username, nowMs), settings.maxFailuresPerUsername, nowMs),
      waitSeconds(live(byAddress, address, nowMs), settings.maxFailuresPerAddress, nowMs),
    );
  const recordFailure = (username: string, address: string, nowMs: EpochMs): void => {
    count(byUsername, username, nowMs);
    count(byAddress, address, nowMs);
  };

  return {
    retryAfterSeconds,
    recordFailure,
    /** A failure that names no account (an unknown code or refresh token, a wrong PKCE verifier): the address's alone. */
    recordAddressFailure: (address: string, nowMs: EpochMs): void => count(byAddress, address, nowMs),
    /**
     * Check and count in one step, before any hashing: returns the wait in seconds (nothing
     * counted), or 0 after counting the attempt as a failure. Counting up front means parallel
     * guesses cannot all pass the check while the first ones are still hashing.
     */
    beginAttempt(username: string, address: string, nowMs: EpochMs): number {
      const wait = retryAfterSeconds(username, address, nowMs);
      if (wait === 0) recordFailure(username, address, nowMs);
      return wait;
    },
    /**
     * The attempt begun for this username and address succeeded: the username's failures are
     * cleared, and the address gets back the one attempt counted for it (its other failures stay,
     * so one good account cannot launder guesses at others).
     */
    recordSuccess(username: string, address: string): void {
      byUsername.delete(username);
      uncount(byAddress, address);
    },
    /** The attempt begun was never judged (server busy, client gone): uncount it. */
    cancelAttempt(username: string, address: string): void {
      uncount(byUsername, username);
      uncount(byAddress, address);
    },
  };
}
