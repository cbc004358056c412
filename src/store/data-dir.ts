import { promises as fs } from 'node:fs';
import { removeStaleTempFiles } from './atomic-file.js';
import { lockDataDir, type DataDirLock } from './lock.js';

/**
 * Creates `dir` (mode 0700) or tightens an existing one to 0700. Returns true when it had
 * to tighten, so the caller can log it (INTERFACE.md, "Data directory").
 */
export async function prepareDataDir(dir: string): Promise<{ tightened: boolean }> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const stats = await fs.stat(dir);
  if (!stats.isDirectory()) throw new Error(`the data directory ${dir} is not a directory`);
  if ((stats.mode & 0o077) === 0) return { tightened: false };
  await fs.chmod(dir, 0o700);
  return { tightened: true };
}

/**
 * Prepares the directory, takes its lock (throws DataDirLocked) and removes temp files a
 * crashed writer left behind. Everything that writes to a data directory starts here.
 */
export async function openDataDir(dir: string, options: { isService: boolean }): Promise<{ lock: DataDirLock; tightened: boolean; removedTempFiles: number }> {
  const { tightened } = await prepareDataDir(dir);
  const lock = await lockDataDir(dir, { mayReuseOwnPid: options.isService });
  try {
    return { lock, tightened, removedTempFiles: await removeStaleTempFiles(dir) };
  } catch (error) {
    lock.release();
    throw error;
  }
}
