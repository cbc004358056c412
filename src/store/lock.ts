import { promises as fs, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isErrorCode } from './atomic-file.js';

export const LOCK_FILE = 'gatehouse.lock';

export class DataDirLocked extends Error {
  readonly pid: number;
  constructor(dir: string, pid: number) {
    super(`The data directory ${dir} is in use by another Gatehouse process (pid ${pid}). Stop that process first.`);
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): void;
}

/**
 * Takes the data directory for this process: one writer only. A lock whose process is gone
 * (killed with SIGKILL) is taken over; so is one naming our own pid (a container restart
 * reuses pid 1).
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  const content = `${JSON.stringify({ pid: process.pid })}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(path, content, { flag: 'wx', mode: 0o600 });
      return {
        release() {
          try {
            if (readFileSync(path, 'utf8') === content) unlinkSync(path);
          } catch {
            // Already gone; nothing to release.
          }
        },
      };
    } catch (error) {
      if (!isErrorCode(error, 'EEXIST')) throw error;
    }
    const holder = await readLockHolder(path);
    if (holder !== undefined && holder !== process.pid && isProcessAlive(holder)) throw new DataDirLocked(dir, holder);
    await fs.unlink(path).catch((error: unknown) => {
      if (!isErrorCode(error, 'ENOENT')) throw error;
    });
  }
  throw new Error(`could not take the lock ${path}`);
}

async function readLockHolder(path: string): Promise<number | undefined> {
  try {
    const parsed: unknown = JSON.parse(await fs.readFile(path, 'utf8'));
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
