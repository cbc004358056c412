// The data directory's lock: one writer across processes, PID namespaces and hosts sharing the
// volume, by a lease. This file takes and holds the lease; the lock file's format, writing and
// takeover are in lock-file.ts, judging and describing the holder a lock file names is in
// lock-holder.ts. Imports point one way: lock.ts -> lock-holder.ts -> lock-file.ts.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { removeStaleTempFiles } from './atomic-file.js';
import { LOCK_FILE, LOCK_FORMAT, LOCK_TEMP, placeWhole, readLockFile, takeOver, type LockRecord, type SeenLock } from './lock-file.js';
import {
  describeHolder, judge, ownIdentity, readBootClock, watch, type HolderIdentity, type Verdict,
} from './lock-holder.js';
import type { EpochMs } from '../time.js';

export { LOCK_FILE } from './lock-file.js';
export type { HolderIdentity } from './lock-holder.js';

/**
 * The lease: the holder rewrites the lock every `renewEveryMs`; one not renewed for `expiryMs` is
 * stale. The holder counts it lost after `expiryMs - 2 * renewEveryMs`, so it has stopped writing
 * before anyone may judge it stale. `pollMs`: how often a starter looks while it waits.
 */
export interface LeaseTiming {
  readonly renewEveryMs: number;
  readonly expiryMs: number;
  readonly pollMs: number;
}

const DEFAULT_LEASE: LeaseTiming = Object.freeze({ renewEveryMs: 2_000, expiryMs: 10_000, pollMs: 250 });

export class DataDirLocked extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(dir: string, holder: string, legacyPid: number | undefined) {
    super(
      legacyPid !== undefined
        ? `The data directory ${dir} holds ${holder}, and pid ${legacyPid} is running here. Stop that Gatehouse first. A format 1 lock has no lease, so it is not taken over while that pid lives: if no older Gatehouse runs (the pid is another program's), remove ${join(dir, LOCK_FILE)}.`
        : `The data directory ${dir} is in use by ${holder}. Stop it first (offline commands refuse while a service runs). A holder that stops renewing its lease (killed, or its host gone) is taken over once the lease has not been renewed for ${DEFAULT_LEASE.expiryMs / 1000} s, with nothing to remove by hand.`,
    );
  }
}

/** The lease is gone: taken over by another process, removed, or not renewed in time. Write nothing more. */
export class DataDirLockLost extends Error {
  readonly code = 'DATA_DIR_LOCK_LOST';
  constructor(dir: string, reason: string) {
    super(`lost the lock on the data directory ${dir}: ${reason}. Writing nothing more to it.`);
  }
}

export interface DataDirLock {
  /** True while the lease is ours and fresh; checked before every write (no I/O, a clock read). */
  isHeld(): boolean;
  /** Resolves (never rejects) when the lease is lost while held; never resolves after release(). */
  readonly lost: Promise<DataDirLockLost>;
  /** Stops renewing and removes the lock file if it still holds our nonce and our lease is fresh. */
  release(): Promise<void>;
  /** Stops renewing and leaves the file: a write may still be in flight, so the lease runs out instead. */
  abandon(): void;
}

export interface LockOptions {
  /** What holds the directory, shown to whoever is refused: "serve", "users passwd", ... */
  readonly purpose: string;
  readonly timing?: LeaseTiming;
  /** Tests pose as another host or namespace here. */
  readonly identity?: HolderIdentity;
  /** The wall clock (tests). */
  readonly now?: () => EpochMs;
  /** Aborts the wait for a lock: lockDataDir rejects with the signal's reason, holding nothing. */
  readonly signal?: AbortSignal | undefined;
  /** Called once when the starter waits for a lease that looks live but may be stale. */
  readonly onWait?: (message: string) => void;
}

/** Nonces of the locks this process holds: one of them is never stale to us. */
const heldHere = new Set<string>();

/**
 * Takes the data directory for this process: one writer across processes, PID namespaces and
 * hosts sharing the volume, by a lease renewed on an unref'd timer (docs/security-notes.md, "The data
 * directory"). Throws DataDirLocked while another holder is live; rejects with `signal`'s reason.
 */
export async function lockDataDir(dir: string, options: LockOptions): Promise<DataDirLock> {
  const timing = options.timing ?? DEFAULT_LEASE;
  if (!(timing.expiryMs >= 3 * timing.renewEveryMs && timing.renewEveryMs > 0 && timing.pollMs > 0)) {
    throw new TypeError('the lease expiry must be at least three renewal periods');
  }
  const identity = options.identity ?? ownIdentity();
  const now = options.now ?? Date.now;
  const judgeNow = (seen: SeenLock): Verdict => judge(seen, identity, readBootClock(), timing.expiryMs, (held) => heldHere.has(held));
  const path = join(dir, LOCK_FILE);
  const nonce = randomBytes(16).toString('hex');
  const startedAt = new Date(now()).toISOString();
  const content = (): string => {
    const record: LockRecord = {
      format: LOCK_FORMAT,
      nonce,
      purpose: options.purpose,
      host: identity.host,
      pid: identity.pid,
      bootId: identity.bootId ?? null,
      pidNamespace: identity.pidNamespace ?? null,
      startedAt,
      renewedAt: new Date(now()).toISOString(),
      renewedBootMs: readBootClock() ?? null,
    };
    return `${JSON.stringify(record)}\n`;
  };
  // A live holder shows itself within one renewal, a dead one goes stale within one expiry: a
  // start that still has no answer after twice that is being raced by others.
  const giveUpAt = performance.now() + 2 * timing.expiryMs + 5_000;
  let hasAnnouncedWait = false;
  let replacedNonce: string | undefined;
  while (performance.now() < giveUpAt) {
    options.signal?.throwIfAborted();
    if (await placeWhole(dir, path, content(), 'link')) {
      heldHere.add(nonce);
      // Those of a lock writer that died between creating and linking them; younger ones may be in flight.
      await removeStaleTempFiles(dir, LOCK_TEMP, timing.expiryMs);
      return holdLease({ dir, path, nonce, timing, content, now, replacedNonce });
    }
    const seen = await readLockFile(path);
    if (seen === undefined) continue; // released meanwhile: try again
    let verdict: Verdict | 'changed' = judgeNow(seen);
    if (verdict === 'unsure') {
      const unless = seen.record === undefined ? 'if it does not change' : 'if its lease is not renewed';
      if (!hasAnnouncedWait) options.onWait?.(`waiting up to ${Math.ceil(timing.expiryMs / 1000)} s for the lock on ${dir}, held by ${describeHolder(seen, identity, now())}: it is taken over ${unless}`);
      hasAnnouncedWait = true;
      verdict = await watch(path, seen, judgeNow, timing, options.signal);
      if (verdict === 'changed') continue; // released or replaced: look again
    }
    options.signal?.throwIfAborted();
    if (verdict === 'live') {
      const latest = (await readLockFile(path)) ?? seen;
      throw new DataDirLocked(dir, describeHolder(latest, identity, now()), latest.legacyPid);
    }
    replacedNonce = seen.record?.nonce;
    await takeOver(dir, path, seen.text);
  }
  throw new Error(`could not take the lock ${path}: other processes keep taking it`);
}

/**
 * `replacedNonce`: the stale lease we took over. Its holder may have had a renewal under way
 * (read its nonce, then stalled before its rename); when that rename lands late our next renewal
 * finds the old nonce and writes ours back, instead of both holders giving up.
 */
function holdLease(held: {
  dir: string;
  path: string;
  nonce: string;
  timing: LeaseTiming;
  content: () => string;
  now: () => EpochMs;
  replacedNonce: string | undefined;
}): DataDirLock {
  const { dir, path, nonce, timing, content, now, replacedNonce } = held;
  const selfExpiryMs = timing.expiryMs - 2 * timing.renewEveryMs;
  let renewedAt = performance.now();
  let renewedWall = now();
  let state: 'held' | 'lost' | 'released' = 'held';
  let lastError: unknown;
  let renewing: Promise<void> = Promise.resolve();
  let announceLost: (lost: DataDirLockLost) => void = () => undefined;
  const lost = new Promise<DataDirLockLost>((resolve) => (announceLost = resolve));
  // CLOCK_MONOTONIC (performance.now) stops during a system suspend; the wall clock does not
  // (and is stepped back to the truth after one): both must say fresh. A forward wall-clock step
  // past the self-expiry therefore also counts the lease lost, since the two cannot be told apart.
  const isFresh = (): boolean => performance.now() - renewedAt < selfExpiryMs && now() - renewedWall < selfExpiryMs;
  const stop = (next: 'lost' | 'released'): void => {
    clearInterval(timer);
    heldHere.delete(nonce);
    state = next;
  };
  const lose = (reason: string): void => {
    if (state !== 'held') return;
    stop('lost');
    announceLost(new DataDirLockLost(dir, reason));
  };
  const renew = async (): Promise<void> => {
    if (state !== 'held') return;
    const startedAt = performance.now();
    const startedWall = now();
    if (!isFresh()) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      const forMs = Math.max(startedAt - renewedAt, startedWall - renewedWall);
      return lose(`its lease was not renewed for ${Math.round(forMs / 1000)} s${cause}, so another process may have taken the directory over`);
    }
    try {
      const seen = await readLockFile(path);
      if (state !== 'held') return;
      if (seen === undefined) return lose(`the lock file ${path} was removed by someone else`);
      const isLateRenewal = replacedNonce !== undefined && seen.record?.nonce === replacedNonce;
      if (seen.record?.nonce !== nonce && !isLateRenewal) {
        return lose(`another process took the lock over: ${describeHolder(seen, undefined, Date.now())}`);
      }
      await placeWhole(dir, path, content(), 'rename');
      renewedAt = startedAt;
      renewedWall = startedWall;
    } catch (error) {
      lastError = error; // tried again next period, until the lease runs out
    }
  };
  const timer = setInterval(() => {
    renewing = renewing.then(renew);
  }, timing.renewEveryMs);
  // Renewal never keeps the process alive: a stopped service exits without waiting for it.
  timer.unref();
  return {
    isHeld: () => state === 'held' && isFresh(),
    lost,
    async release() {
      if (state === 'released') return;
      const wasHeld = state === 'held' && isFresh();
      stop('released');
      await renewing;
      // A lease that ran out may already be another holder's file, whatever it holds now.
      if (!wasHeld) return;
      const seen = await readLockFile(path).catch(() => undefined);
      if (seen?.record?.nonce === nonce) await fs.unlink(path).catch(() => undefined);
    },
    abandon: () => stop('released'),
  };
}
