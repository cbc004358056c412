import { promises as fs, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isErrorCode } from './atomic-file.js';

export const LOCK_FILE = 'gatehouse.lock';
// A takeover file older than this was left by a process that died mid-takeover.
const STALE_TAKEOVER_MS = 10_000;

export class DataDirLocked extends Error {
  readonly pid: number;
  constructor(dir: string, pid: number) {
    super(`The data directory ${dir} is in use by another process (pid ${pid}), normally a running Gatehouse. Stop it first; if pid ${pid} is not Gatehouse, remove ${join(dir, LOCK_FILE)}.`);
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): void;
}

/**
 * Takes the data directory for this process: one writer only. The lock file is created whole
 * (a temp file linked into place, so it never exists empty). A lock whose process is gone
 * (SIGKILL) is taken over under an exclusive takeover file, so two starters racing for one
 * stale lock cannot both win. With `mayReuseOwnPid` (the service), so is one naming our own
 * pid: a container restart reuses pid 1.
 */
export async function lockDataDir(dir: string, options: { mayReuseOwnPid: boolean }): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  const content = `${JSON.stringify({ pid: process.pid })}\n`;
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await createWhole(path, content)) {
      return {
        release() {
          try {
            if (readFileSync(path, 'utf8') === content) unlinkSync(path);
          } catch {
            // Already gone; nothing to release.
          }
        },
      };
    }
    const seen = await readText(path);
    if (seen === undefined) continue; // released meanwhile: try again
    const holder = pidOf(seen);
    // Only the service may assume a lock naming its own pid is a previous life of itself: an
    // offline command run in a second container is pid 1 too, beside a live service.
    const isOurOldSelf = holder === process.pid && options.mayReuseOwnPid;
    if (holder !== undefined && !isOurOldSelf && isProcessAlive(holder)) throw new DataDirLocked(dir, holder);
    await takeOver(path, seen);
  }
  throw new Error(`could not take the lock ${path}: other processes keep taking it`);
}

async function createWhole(path: string, content: string): Promise<boolean> {
  const temp = `${path}.${process.pid}.tmp`;
  await fs.writeFile(temp, content, { flag: 'w', mode: 0o600 });
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

/** Removes the stale lock only if it still holds what we judged stale, under an exclusive takeover file. */
async function takeOver(path: string, staleContent: string): Promise<void> {
  const takeover = `${path}.takeover`;
  try {
    await fs.writeFile(takeover, String(process.pid), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (!isErrorCode(error, 'EEXIST')) throw error;
    const stats = await fs.stat(takeover).catch(() => undefined);
    if (stats !== undefined && Date.now() - stats.mtimeMs > STALE_TAKEOVER_MS) await fs.unlink(takeover).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return;
  }
  try {
    if ((await readText(path)) === staleContent) await fs.unlink(path).catch(() => undefined);
  } finally {
    await fs.unlink(takeover).catch(() => undefined);
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

function pidOf(text: string): number | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    const pid = typeof parsed === 'object' && parsed !== null ? (parsed as { pid?: unknown }).pid : undefined;
    return typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
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
