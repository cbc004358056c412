// The lock file itself (src/store/lock.ts holds the lease): its format, how it is read, how a new
// lease is put in place whole, and how a stale one is taken over without removing a live one. It
// knows nothing of holders: lock-holder.ts judges and describes the one a file names.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPlainObject } from '../validate/check.js';
import { isErrorCode, unlessMissing } from './atomic-file.js';

export const LOCK_FILE = 'gatehouse.lock';
export const LOCK_FORMAT = 2;
// A takeover file older than this was left by a process that died mid-takeover.
const STALE_TAKEOVER_MS = 10_000;

/** What the lock file holds (format 2). Format 1 was `{"pid":N}` alone. */
export interface LockRecord {
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

/** A lock file as read: `legacyPid` is a format 1 lock's (`{"pid":N}`). */
export interface SeenLock {
  readonly text: string;
  readonly mtimeMs: number;
  readonly record: LockRecord | undefined;
  readonly legacyPid: number | undefined;
}

/**
 * Writes `content` to a new temp file, then links it into place (false when a lock exists: a lock
 * is never seen empty) or renames it over the lock (a reader sees the old lease or the new one).
 */
export async function placeWhole(dir: string, path: string, content: string, how: 'link' | 'rename'): Promise<boolean> {
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
export const LOCK_TEMP = /^\.gatehouse\.lock\.[0-9a-f]{32}\.tmp$/;

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
export async function takeOver(dir: string, path: string, staleContent: string): Promise<void> {
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

export async function readLockFile(path: string): Promise<SeenLock | undefined> {
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
