import { randomBytes } from 'node:crypto';
import { promises as fs, readFileSync, readlinkSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isErrorCode } from './atomic-file.js';

export const LOCK_FILE = 'gatehouse.lock';
const LOCK_FORMAT = 2;
// A takeover file older than this was left by a process that died mid-takeover.
const STALE_TAKEOVER_MS = 10_000;

/**
 * The lease: the holder rewrites the lock file every `renewEveryMs`; a lock not renewed for
 * `expiryMs` is stale and may be taken over. The holder itself counts its lease lost sooner
 * (after `expiryMs - 2 * renewEveryMs` without a successful renewal), so it has stopped writing
 * before anyone else may judge the lease stale. `pollMs`: how often a starter looks while it waits.
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
  readonly pid: number;
  constructor(dir: string, holder: string, pid: number, isLegacy = false) {
    super(
      isLegacy
        ? `The data directory ${dir} holds ${holder}, and pid ${pid} is running here. Stop that Gatehouse first. A format 1 lock has no lease, so it is not taken over while that pid lives: if no older Gatehouse runs (the pid is another program's), remove ${join(dir, LOCK_FILE)}.`
        : `The data directory ${dir} is in use by ${holder}. Stop it first (offline commands refuse while a service runs). A holder that stops renewing its lease (killed, or its host gone) is taken over once the lease has not been renewed for ${DEFAULT_LEASE.expiryMs / 1000} s, with nothing to remove by hand.`,
    );
    this.pid = pid;
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
  /** This kernel's boot clock in milliseconds (/proc/uptime, CLOCK_BOOTTIME); undefined where there is none (tests). */
  readonly bootClock?: () => number | undefined;
  /** Aborts the wait for a lock (a stop requested meanwhile): lockDataDir rejects with the signal's reason, holding nothing. */
  readonly signal?: AbortSignal | undefined;
  /** Called once when the starter waits for a lease that looks live but may be stale. */
  readonly onWait?: (message: string) => void;
}

/** Nonces of the locks this process holds: one of them is never stale to us. */
const heldHere = new Set<string>();

/**
 * Takes the data directory for this process: one writer only, across processes, PID namespaces
 * (containers) and hosts sharing the volume. The lock file is created whole under an exclusive
 * random temp name and holds a random nonce, host, pid, boot id, pid namespace and lease time;
 * the lease is renewed every `renewEveryMs` on an unref'd timer. A lock found is stale at once
 * when its holder ran under our kernel and pid namespace and its pid is gone, or (same kernel,
 * another pid namespace) its lease is older than `expiryMs` by the kernel's boot clock (never by
 * the wall clock, which steps); otherwise the starter watches it: renewed means live
 * (DataDirLocked), unchanged for `expiryMs` means stale and it is taken over.
 */
export async function lockDataDir(dir: string, options: LockOptions): Promise<DataDirLock> {
  const timing = options.timing ?? DEFAULT_LEASE;
  if (!(timing.expiryMs >= 3 * timing.renewEveryMs && timing.renewEveryMs > 0 && timing.pollMs > 0)) throw new TypeError('the lease expiry must be at least three renewal periods');
  const identity = options.identity ?? ownIdentity();
  const now = options.now ?? Date.now;
  const bootClock = options.bootClock ?? readBootClock;
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
      renewedBootMs: bootClock() ?? null,
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
    if (await createWhole(dir, path, content())) {
      heldHere.add(nonce);
      await removeOldLockTemps(dir, now(), timing.expiryMs);
      return holdLease({ dir, path, nonce, timing, content, now, replacedNonce });
    }
    const seen = await readLockFile(path);
    if (seen === undefined) continue; // released meanwhile: try again
    let verdict = judge(seen, identity, bootClock(), timing);
    if (verdict === 'unsure') {
      if (!hasAnnouncedWait) {
        hasAnnouncedWait = true;
        const unless = seen.record === undefined ? 'if it does not change' : 'if its lease is not renewed';
        options.onWait?.(`waiting up to ${Math.ceil(timing.expiryMs / 1000)} s for the lock on ${dir}, held by ${describeHolder(seen, identity, now())}: it is taken over ${unless}`);
      }
      const watched = await watch(path, seen, identity, bootClock, timing, options.signal);
      if (watched.outcome === 'changed') {
        const next = watched.next;
        if (next !== undefined && next.record !== undefined && next.record.nonce === seen.record?.nonce) verdict = 'live';
        else continue; // released or replaced: look again
      } else {
        verdict = 'stale';
      }
    }
    options.signal?.throwIfAborted();
    if (verdict === 'live') {
      const latest = (await readLockFile(path)) ?? seen;
      throw new DataDirLocked(dir, describeHolder(latest, identity, now()), latest.record?.pid ?? latest.legacyPid ?? 0, latest.record === undefined && latest.legacyPid !== undefined);
    }
    replacedNonce = seen.record?.nonce;
    await takeOver(dir, path, seen.text);
  }
  throw new Error(`could not take the lock ${path}: other processes keep taking it`);
}

interface SeenLock {
  readonly text: string;
  readonly mtimeMs: number;
  readonly record: LockRecord | undefined;
  /** The pid of a format 1 lock (`{"pid":N}`). */
  readonly legacyPid: number | undefined;
}

type Verdict = 'stale' | 'live' | 'unsure';

function judge(seen: SeenLock, ours: HolderIdentity, bootNowMs: number | undefined, timing: LeaseTiming): Verdict {
  const { record } = seen;
  if (record === undefined) {
    // Format 1 named only a pid, in its own namespace: believe a live pid as that version did,
    // except pid 1 (every container's main process, and init here: always alive) and our own.
    if (seen.legacyPid !== undefined && seen.legacyPid !== 1 && seen.legacyPid !== ours.pid && isProcessAlive(seen.legacyPid)) return 'live';
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
  if (typeof renewedBootMs === 'number' && bootNowMs !== undefined && bootNowMs - renewedBootMs > timing.expiryMs) return 'stale';
  return 'unsure';
}

/** Watches a lock that may be live: 'changed' as soon as its content changes, 'stale' once it has not for an expiry. */
async function watch(path: string, seen: SeenLock, ours: HolderIdentity, bootClock: () => number | undefined, timing: LeaseTiming, signal: AbortSignal | undefined): Promise<{ outcome: 'changed'; next: SeenLock | undefined } | { outcome: 'stale' }> {
  const until = performance.now() + timing.expiryMs;
  while (performance.now() < until) {
    await sleep(timing.pollMs, signal);
    const next = await readLockFile(path);
    if (next === undefined || next.text !== seen.text) return { outcome: 'changed', next };
    if (judge(next, ours, bootClock(), timing) === 'stale') return { outcome: 'stale' };
  }
  return { outcome: 'stale' };
}

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `replacedNonce`: the stale lease we took over. Its holder may have had a renewal under way
 * (read its nonce, then stalled before its rename); when that rename lands late our next renewal
 * finds the old nonce and writes ours back, instead of both holders giving up.
 */
function holdLease(held: { dir: string; path: string; nonce: string; timing: LeaseTiming; content: () => string; now: () => number; replacedNonce: string | undefined }): DataDirLock {
  const { dir, path, nonce, timing, content, now, replacedNonce } = held;
  const selfExpiryMs = timing.expiryMs - 2 * timing.renewEveryMs;
  let renewedAt = performance.now();
  let renewedWall = now();
  let state: 'held' | 'lost' | 'released' = 'held';
  let lastError: unknown;
  let renewing: Promise<void> = Promise.resolve();
  let announceLost: (lost: DataDirLockLost) => void = () => undefined;
  const lost = new Promise<DataDirLockLost>((resolve) => {
    announceLost = resolve;
  });
  // CLOCK_MONOTONIC (performance.now) stops during a system suspend; the wall clock does not
  // (and is stepped back to the truth after one): both must say fresh. A forward wall-clock step
  // past the self-expiry therefore also counts the lease lost, since the two cannot be told apart.
  const isFresh = (): boolean => performance.now() - renewedAt < selfExpiryMs && now() - renewedWall < selfExpiryMs;
  const lose = (reason: string): void => {
    if (state !== 'held') return;
    state = 'lost';
    clearInterval(timer);
    heldHere.delete(nonce);
    announceLost(new DataDirLockLost(dir, reason));
  };
  const renew = async (): Promise<void> => {
    if (state !== 'held') return;
    const startedAt = performance.now();
    const startedWall = now();
    if (!isFresh()) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      const forMs = Math.max(startedAt - renewedAt, startedWall - renewedWall);
      lose(`its lease was not renewed for ${Math.round(forMs / 1000)} s${cause}, so another process may have taken the directory over`);
      return;
    }
    try {
      const seen = await readLockFile(path);
      if (state !== 'held') return;
      if (seen === undefined) return lose(`the lock file ${path} was removed by someone else`);
      const isLateRenewal = replacedNonce !== undefined && seen.record?.nonce === replacedNonce;
      if (seen.record?.nonce !== nonce && !isLateRenewal) return lose(`another process took the lock over: ${describeHolder(seen, undefined, Date.now())}`);
      await replaceWhole(dir, path, content());
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
  const stop = (): void => {
    clearInterval(timer);
    heldHere.delete(nonce);
    state = 'released';
  };
  return {
    isHeld: () => state === 'held' && isFresh(),
    lost,
    async release() {
      if (state === 'released') return;
      const wasHeld = state === 'held' && isFresh();
      stop();
      await renewing;
      // A lease that ran out may already be another holder's file, whatever it holds now.
      if (!wasHeld) return;
      const seen = await readLockFile(path).catch(() => undefined);
      if (seen?.record?.nonce === nonce) await fs.unlink(path).catch(() => undefined);
    },
    abandon: stop,
  };
}

/** Links a fully written temp file into place: false when a lock already exists. */
async function createWhole(dir: string, path: string, content: string): Promise<boolean> {
  const temp = await writeTemp(dir, content);
  try {
    await fs.link(temp, path);
    return true;
  } catch (error) {
    if (isErrorCode(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await fs.unlink(temp).catch(() => undefined);
  }
}

/** Renames a fully written temp file over the lock: a reader sees the old lease or the new one, never a torn one. */
async function replaceWhole(dir: string, path: string, content: string): Promise<void> {
  const temp = await writeTemp(dir, content);
  try {
    await fs.rename(temp, path);
  } catch (error) {
    await fs.unlink(temp).catch(() => undefined);
    throw error;
  }
}

// An unpredictable name, created exclusively (O_CREAT|O_EXCL fails on any existing name, a
// symbolic link included): nothing planted in the directory can redirect this write.
const LOCK_TEMP = /^\.gatehouse\.lock\.[0-9a-f]{32}\.tmp$/;

async function writeTemp(dir: string, content: string): Promise<string> {
  const temp = join(dir, `.${LOCK_FILE}.${randomBytes(16).toString('hex')}.tmp`);
  await fs.writeFile(temp, content, { flag: 'wx', mode: 0o600 });
  return temp;
}

/** Temp files of a lock writer that died between creating and linking them. */
async function removeOldLockTemps(dir: string, nowMs: number, olderThanMs: number): Promise<void> {
  for (const name of await fs.readdir(dir)) {
    if (!LOCK_TEMP.test(name)) continue;
    const stats = await fs.lstat(join(dir, name)).catch(() => undefined);
    if (stats !== undefined && nowMs - stats.mtimeMs > olderThanMs) await fs.unlink(join(dir, name)).catch(() => undefined);
  }
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
    if (stats !== undefined && Date.now() - stats.mtimeMs > STALE_TAKEOVER_MS) await fs.unlink(takeover).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return;
  }
  try {
    if ((await readLockFile(path))?.text !== staleContent) return;
    // Named like a lock temp file: one left by a crash here is removed once old (removeOldLockTemps).
    const grave = join(dir, `.${LOCK_FILE}.${randomBytes(16).toString('hex')}.tmp`);
    try {
      await fs.rename(path, grave);
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return;
      throw error;
    }
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
  let handle: FileHandle;
  try {
    handle = await fs.open(path, 'r');
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    // Read through one handle: text and mtime are of the same file even if it is replaced meanwhile.
    const [text, stats] = [await handle.readFile('utf8'), await handle.stat()];
    return { text, mtimeMs: stats.mtimeMs, ...parseLock(text) };
  } finally {
    await handle.close();
  }
}

function parseLock(text: string): { record: LockRecord | undefined; legacyPid: number | undefined } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { record: undefined, legacyPid: undefined };
  }
  if (typeof parsed !== 'object' || parsed === null) return { record: undefined, legacyPid: undefined };
  const value = parsed as Record<string, unknown>;
  const pid = value['pid'];
  const isPid = typeof pid === 'number' && Number.isInteger(pid) && pid > 0;
  const strings = ['nonce', 'purpose', 'host', 'startedAt', 'renewedAt'].every((key) => typeof value[key] === 'string');
  const optional = ['bootId', 'pidNamespace'].every((key) => value[key] === null || typeof value[key] === 'string');
  const bootMs = value['renewedBootMs'];
  const isBootMs = bootMs === undefined || bootMs === null || (typeof bootMs === 'number' && Number.isFinite(bootMs));
  if (value['format'] === LOCK_FORMAT && isPid && strings && optional && isBootMs) return { record: value as unknown as LockRecord, legacyPid: undefined };
  return { record: undefined, legacyPid: isPid && Object.keys(value).length === 1 ? pid : undefined };
}

/** "Gatehouse (serve) on host h, pid 1 in another PID namespace, lease last renewed ... (3 s ago)". */
function describeHolder(seen: SeenLock, ours: HolderIdentity | undefined, nowMs: number): string {
  const { record } = seen;
  if (record === undefined) {
    return seen.legacyPid === undefined ? 'an unreadable lock file' : `an older Gatehouse's lock (format 1, naming only pid ${seen.legacyPid})`;
  }
  const renewed = Date.parse(record.renewedAt);
  const ago = Number.isFinite(renewed) ? ` (${Math.max(0, Math.round((nowMs - renewed) / 1000))} s ago by this host's clock)` : '';
  const where =
    ours === undefined || record.bootId !== ours.bootId
      ? ''
      : record.pidNamespace === ours.pidNamespace
        ? ' in this PID namespace'
        : ' in another PID namespace on this machine (another container)';
  return `Gatehouse (${record.purpose}) on host ${JSON.stringify(record.host)}, pid ${record.pid}${where}, started ${record.startedAt}, lease last renewed ${record.renewedAt}${ago}`;
}

function ownIdentity(): HolderIdentity {
  return { host: hostname(), pid: process.pid, bootId: readOptional(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()), pidNamespace: readOptional(() => readlinkSync('/proc/self/ns/pid')) };
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
