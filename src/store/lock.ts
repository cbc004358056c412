import { randomBytes } from 'node:crypto';
import { promises as fs, readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPlainObject } from '../validate/check.js';
import { isErrorCode, removeStaleTempFiles, unlessMissing } from './atomic-file.js';

export const LOCK_FILE = 'gatehouse.lock';
const LOCK_FORMAT = 2;
// A takeover file older than this was left by a process that died mid-takeover.
const STALE_TAKEOVER_MS = 10_000;

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

export const DEFAULT_LEASE: LeaseTiming = Object.freeze({ renewEveryMs: 2_000, expiryMs: 10_000, pollMs: 250 });

/** Where a process runs: enough to tell a container's pid 1 from another's, and a dead pid from a live one. */
export interface HolderIdentity {
  readonly host: string;
  readonly pid: number;
  /** /proc/sys/kernel/random/boot_id: same value, same kernel (and the same wall clock). */
  readonly bootId: string | undefined;
  /** The inode of /proc/self/ns/pid: same value, same pid numbering. */
  readonly pidNamespace: string | undefined;
}

/** What the lock file holds (format 2). Format 1 was `{"pid":N}` alone. */
interface LockRecord {
  readonly format: number;
  readonly nonce: string;
  readonly purpose: string;
  readonly host: string;
  readonly pid: number;
  readonly bootId: string | null;
  readonly pidNamespace: string | null;
  readonly startedAt: string;
  readonly renewedAt: string;
  /** CLOCK_BOOTTIME (/proc/uptime) at renewal in ms: comparable on one kernel, never stepped. Absent before it was added. */
  readonly renewedBootMs?: number | null;
}

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
  /** Wall clock in milliseconds since the epoch (tests). */
  readonly now?: () => number;
  /** Aborts the wait for a lock: lockDataDir rejects with the signal's reason, holding nothing. */
  readonly signal?: AbortSignal | undefined;
  /** Called once when the starter waits for a lease that looks live but may be stale. */
  readonly onWait?: (message: string) => void;
}

/** Nonces of the locks this process holds: one of them is never stale to us. */
const heldHere = new Set<string>();

/**
 * Takes the data directory for this process: one writer across processes, PID namespaces and
 * hosts sharing the volume, by a lease renewed on an unref'd timer (SECURITY.md, "data-directory
 * lock"). Throws DataDirLocked while another holder is live; rejects with `signal`'s reason.
 */
export async function lockDataDir(dir: string, options: LockOptions): Promise<DataDirLock> {
  const timing = options.timing ?? DEFAULT_LEASE;
  if (!(timing.expiryMs >= 3 * timing.renewEveryMs && timing.renewEveryMs > 0 && timing.pollMs > 0)) {
    throw new TypeError('the lease expiry must be at least three renewal periods');
  }
  const identity = options.identity ?? ownIdentity();
  const now = options.now ?? Date.now;
  const judgeNow = (seen: SeenLock): Verdict => judge(seen, identity, readBootClock(), timing);
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

/** A lock file as read: `legacyPid` is a format 1 lock's (`{"pid":N}`). */
interface SeenLock {
  readonly text: string;
  readonly mtimeMs: number;
  readonly record: LockRecord | undefined;
  readonly legacyPid: number | undefined;
}

type Verdict = 'stale' | 'live' | 'unsure';

function judge(seen: SeenLock, ours: HolderIdentity, bootNowMs: number | undefined, timing: LeaseTiming): Verdict {
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
    return Date.now() - seen.mtimeMs > timing.expiryMs ? 'stale' : 'unsure';
  }
  if (heldHere.has(record.nonce)) return 'live';
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
  if (typeof renewedBootMs === 'number' && bootNowMs !== undefined && bootNowMs - renewedBootMs > timing.expiryMs) {
    return 'stale';
  }
  return 'unsure';
}

/**
 * Watches a lock that may be live: 'live' once it is renewed (same nonce), 'changed' once it is
 * released or replaced, 'stale' once it has not changed for an expiry.
 */
async function watch(
  path: string, seen: SeenLock, judgeNow: (next: SeenLock) => Verdict, timing: LeaseTiming, signal?: AbortSignal,
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
  now: () => number;
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

/**
 * Writes `content` to a new temp file, then links it into place (false when a lock exists: a lock
 * is never seen empty) or renames it over the lock (a reader sees the old lease or the new one).
 */
async function placeWhole(dir: string, path: string, content: string, how: 'link' | 'rename'): Promise<boolean> {
  const temp = lockTempName(dir);
  await fs.writeFile(temp, content, { flag: 'wx', mode: 0o600 });
  try {
    await fs[how](temp, path);
    return true;
  } catch (error) {
    if (how === 'link' && isErrorCode(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await fs.unlink(temp).catch(() => undefined); // after a rename it is gone already
  }
}

// An unpredictable name, created exclusively (O_CREAT|O_EXCL fails on any existing name, a
// symbolic link included): nothing planted in the directory can redirect this write.
const LOCK_TEMP = /^\.gatehouse\.lock\.[0-9a-f]{32}\.tmp$/;

function lockTempName(dir: string): string {
  return join(dir, `.${LOCK_FILE}.${randomBytes(16).toString('hex')}.tmp`);
}

/**
 * Removes the stale lock only if it still holds what we judged stale, under an exclusive takeover
 * file. The lock is first renamed to a unique grave name (atomic: the grave holds exactly what was
 * the lock) and only then compared, so a starter that stalled between judging and removing (a
 * freeze, a hung NFS server, longer than STALE_TAKEOVER_MS) never deletes a lock someone took
 * meanwhile: that one is linked back into place, which fails safely if a newer lock exists.
 */
async function takeOver(dir: string, path: string, staleContent: string): Promise<void> {
  const takeover = `${path}.takeover`;
  try {
    await fs.writeFile(takeover, String(process.pid), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (!isErrorCode(error, 'EEXIST')) throw error;
    const stats = await fs.lstat(takeover).catch(() => undefined);
    if (stats !== undefined && Date.now() - stats.mtimeMs > STALE_TAKEOVER_MS) {
      await fs.unlink(takeover).catch(() => undefined);
    }
    await sleep(20);
    return;
  }
  try {
    if ((await readLockFile(path))?.text !== staleContent) return;
    // A lock temp name: one left by a crash here is removed once old (removeStaleTempFiles).
    const grave = lockTempName(dir);
    const isMoved = await unlessMissing(fs.rename(path, grave).then(() => true));
    if (isMoved === undefined) return; // released meanwhile
    const moved = await fs.readFile(grave, 'utf8').catch(() => undefined);
    // Not what we judged stale: a holder's live lock. Put it back; if a newer lock exists already,
    // link fails and the displaced holder sees another nonce at its next renewal and stops.
    if (moved !== undefined && moved !== staleContent) await fs.link(grave, path).catch(() => undefined);
    await fs.unlink(grave).catch(() => undefined);
  } finally {
    await fs.unlink(takeover).catch(() => undefined);
  }
}

async function readLockFile(path: string): Promise<SeenLock | undefined> {
  const handle = await unlessMissing(fs.open(path, 'r'));
  if (handle === undefined) return undefined;
  try {
    // Read through one handle: text and mtime are of the same file even if it is replaced meanwhile.
    const [text, stats] = [await handle.readFile('utf8'), await handle.stat()];
    return { text, mtimeMs: stats.mtimeMs, ...parseLock(text) };
  } finally {
    await handle.close();
  }
}

const isPid = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value > 0;
const isText = (value: unknown): boolean => typeof value === 'string';
const isTextOrNull = (value: unknown): boolean => value === null || typeof value === 'string';
/** Format 2's fields, checked; `renewedBootMs` is absent from leases written before it was added. */
const RECORD_CHECKS: ReadonlyArray<readonly [keyof LockRecord, (value: unknown) => boolean]> = [
  ['format', (value) => value === LOCK_FORMAT],
  ['nonce', isText],
  ['purpose', isText],
  ['host', isText],
  ['pid', isPid],
  ['bootId', isTextOrNull],
  ['pidNamespace', isTextOrNull],
  ['startedAt', isText],
  ['renewedAt', isText],
  ['renewedBootMs', (value) => value === undefined || value === null || Number.isFinite(value)],
];

function parseLock(text: string): Pick<SeenLock, 'record' | 'legacyPid'> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isPlainObject(value)) return { record: undefined, legacyPid: undefined };
  const isRecord = RECORD_CHECKS.every(([key, check]) => check(value[key]));
  if (isRecord) return { record: value as unknown as LockRecord, legacyPid: undefined };
  const pid = value['pid'];
  return { record: undefined, legacyPid: isPid(pid) && Object.keys(value).length === 1 ? pid : undefined };
}

/** "Gatehouse (serve) on host h, pid 1 in another PID namespace, lease last renewed ... (3 s ago)". */
function describeHolder(seen: SeenLock, ours: HolderIdentity | undefined, nowMs: number): string {
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

function ownIdentity(): HolderIdentity {
  return {
    host: hostname(),
    pid: process.pid,
    bootId: readOptional(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    pidNamespace: readOptional(() => readlinkSync('/proc/self/ns/pid')),
  };
}

/** CLOCK_BOOTTIME in milliseconds: /proc/uptime's first field (counts suspend, never stepped). */
function readBootClock(): number | undefined {
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
