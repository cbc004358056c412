// Whether the holder a lock file names is still there (src/store/lock.ts holds the lease): who
// this process is, how a lease found in the directory is judged, described and, when unsure,
// watched. The lease's timing comes in as numbers: lock.ts owns it and imports this file.
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { isErrorCode } from './atomic-file.js';
import { readLockFile, type SeenLock } from './lock-file.js';
import type { EpochMs } from '../time.js';

/** Where a process runs: enough to tell a container's pid 1 from another's, and a dead pid from a live one. */
export interface HolderIdentity {
  readonly host: string;
  readonly pid: number;
  /** /proc/sys/kernel/random/boot_id: same value, same kernel (and the same wall clock). */
  readonly bootId: string | undefined;
  /** The inode of /proc/self/ns/pid: same value, same pid numbering. */
  readonly pidNamespace: string | undefined;
}

export type Verdict = 'stale' | 'live' | 'unsure';

/** `isHeldHere`: the lease is one this process holds, so never stale to us. `expiryMs`: the lease's. */
export function judge(
  seen: SeenLock, ours: HolderIdentity, bootNowMs: number | undefined, expiryMs: number, isHeldHere: (nonce: string) => boolean,
): Verdict {
  const { record } = seen;
  if (record === undefined) {
    // Format 1 named only a pid, in its own namespace: believe a live pid as that version did,
    // except pid 1 (every container's main process, and init here: always alive) and our own.
    if (
      seen.legacyPid !== undefined &&
      seen.legacyPid !== 1 &&
      seen.legacyPid !== ours.pid &&
      isProcessAlive(seen.legacyPid)
    ) {
      return 'live';
    }
    return Date.now() - seen.mtimeMs > expiryMs ? 'stale' : 'unsure';
  }
  if (isHeldHere(record.nonce)) return 'live';
  if (ours.bootId === undefined || record.bootId !== ours.bootId) return 'unsure';
  if (ours.pidNamespace !== undefined && record.pidNamespace === ours.pidNamespace) {
    // Our own pid in our namespace is this process: the lock is a previous life's (a restarted
    // container). A namespace's number is reused only once it is gone, with every process in it,
    // so a holder whose number we now have is dead either way.
    if (record.pid === ours.pid) return 'stale';
    // A live pid is never stale by age, whatever the clocks say: only watching can tell.
    return isProcessAlive(record.pid) ? 'unsure' : 'stale';
  }
  // The same kernel: the boot clock (CLOCK_BOOTTIME) is shared and never stepped, unlike the wall
  // clock, so the lease's age can be read from it. A lease without it is only watched.
  const renewedBootMs = record.renewedBootMs;
  if (typeof renewedBootMs === 'number' && bootNowMs !== undefined && bootNowMs - renewedBootMs > expiryMs) {
    return 'stale';
  }
  return 'unsure';
}

/**
 * Watches a lock that may be live: 'live' once it is renewed (same nonce), 'changed' once it is
 * released or replaced, 'stale' once it has not changed for an expiry.
 */
export async function watch(
  path: string, seen: SeenLock, judgeNow: (next: SeenLock) => Verdict,
  timing: { readonly expiryMs: number; readonly pollMs: number }, signal?: AbortSignal,
): Promise<Verdict | 'changed'> {
  const until = performance.now() + timing.expiryMs;
  while (performance.now() < until) {
    await sleep(timing.pollMs, undefined, { signal }).catch(() => signal?.throwIfAborted());
    const next = await readLockFile(path);
    if (next === undefined || next.text !== seen.text) {
      return next?.record !== undefined && next.record.nonce === seen.record?.nonce ? 'live' : 'changed';
    }
    if (judgeNow(next) === 'stale') return 'stale';
  }
  return 'stale';
}

/** "Gatehouse (serve) on host h, pid 1 in another PID namespace, lease last renewed ... (3 s ago)". */
export function describeHolder(seen: SeenLock, ours: HolderIdentity | undefined, nowMs: EpochMs): string {
  const { record } = seen;
  if (record === undefined) {
    return seen.legacyPid === undefined
      ? 'an unreadable lock file'
      : `an older Gatehouse's lock (format 1, naming only pid ${seen.legacyPid})`;
  }
  const renewed = Date.parse(record.renewedAt);
  const ago = Number.isFinite(renewed)
    ? ` (${Math.max(0, Math.round((nowMs - renewed) / 1000))} s ago by this host's clock)`
    : '';
  const where =
    ours === undefined || record.bootId !== ours.bootId
      ? ''
      : record.pidNamespace === ours.pidNamespace
        ? ' in this PID namespace'
        : ' in another PID namespace on this machine (another container)';
  return `Gatehouse (${record.purpose}) on host ${JSON.stringify(record.host)}, pid ${record.pid}${where}, started ${record.startedAt}, lease last renewed ${record.renewedAt}${ago}`;
}

export function ownIdentity(): HolderIdentity {
  return {
    host: hostname(),
    pid: process.pid,
    bootId: readOptional(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    pidNamespace: readOptional(() => readlinkSync('/proc/self/ns/pid')),
  };
}

/** CLOCK_BOOTTIME in milliseconds: /proc/uptime's first field (counts suspend, never stepped). */
export function readBootClock(): number | undefined {
  const seconds = Number(readOptional(() => readFileSync('/proc/uptime', 'utf8').split(' ')[0] ?? ''));
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : undefined;
}

function readOptional(read: () => string): string | undefined {
  try {
    const value = read();
    return value === '' ? undefined : value;
  } catch {
    return undefined; // not Linux, or /proc not mounted
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return isErrorCode(error, 'EPERM');
  }
}
