import { promises as fs, type Stats } from 'node:fs';
import { join } from 'node:path';
import { removeStaleTempFiles, unlessMissing } from './atomic-file.js';
import type { StoreFileSystem } from './file-system.js';
import { DataDirLockLost, LOCK_FILE, lockDataDir, type DataDirLock, type LockOptions } from './lock.js';
import { octalMode, whoElseMayWrite } from './small-file.js';

/** The files the service keeps in the data directory; any that exists must be ours alone. */
const OWN_FILES = [
  'secret', 'seal.key', 'users.json', 'users.json.prev', 'revoked-tokens.json', LOCK_FILE,
  'sessions.json', 'sessions.json.prev', 'invitations.json', 'invitations.json.prev',
  'oidc-keys.json', 'oidc-clients.json', 'oidc-clients.json.prev', 'oidc-grants.json', 'oidc-grants.json.prev',
];

/** Who a mode lets write besides the owner, by its group and others write bits. */
const WRITERS: Readonly<Record<number, string>> = {
  [0o020]: 'its group',
  [0o002]: 'others',
  [0o022]: 'group and others',
};

/** The data directory or a file in it could have been written by someone else: the service does not adopt it. */
export class DataDirUnsafe extends Error {
  readonly code = 'DATA_DIR_UNSAFE';
}

interface DataDirOptions extends LockOptions {
  /** The uid that must own the directory and its files (default: ours; undefined where there are no uids). */
  readonly uid?: number | undefined;
}

/**
 * Prepares the directory (prepareDataDir), takes its lock (throws DataDirLocked) and removes temp
 * files a crashed writer left behind. Everything that writes to a data directory starts here.
 */
export async function openDataDir(
  dir: string, options: DataDirOptions,
): Promise<{ lock: DataDirLock; tightened: boolean; removedTempFiles: number }> {
  const { tightened } = await prepareDataDir(dir, Object.hasOwn(options, 'uid') ? options.uid : process.getuid?.());
  const lock = await lockDataDir(dir, options);
  try {
    return { lock, tightened, removedTempFiles: await removeStaleTempFiles(dir) };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * Creates `dir` (mode 0700), or checks an existing one: it and each of our files in it must
 * belong to `uid` and be writable by no group or other user, and the files must be regular
 * files, not symbolic links (throws DataDirUnsafe saying what to change). A directory merely
 * readable or searchable by others is tightened to 0700; `tightened` tells the caller to log it.
 */
async function prepareDataDir(dir: string, uid: number | undefined): Promise<{ tightened: boolean }> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const stats = await fs.stat(dir);
  if (!stats.isDirectory()) throw new Error(`the data directory ${dir} is not a directory`);
  checkOwnedAndPrivate(`the data directory ${dir}`, dir, dir, stats, uid, 'chmod 0700');
  for (const name of OWN_FILES) {
    const path = join(dir, name);
    const fileStats = await unlessMissing(fs.lstat(path));
    if (fileStats === undefined) continue;
    if (!fileStats.isFile()) {
      throw new DataDirUnsafe(`${path} is ${fileStats.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; Gatehouse never creates one. Someone who could write to ${dir} may have planted it: check it, then remove it.`);
    }
    checkOwnedAndPrivate(path, path, dir, fileStats, uid, 'chmod 0600');
  }
  if ((stats.mode & 0o077) === 0) return { tightened: false };
  await fs.chmod(dir, 0o700);
  return { tightened: true };
}

function checkOwnedAndPrivate(
  what: string, path: string, dir: string, stats: Stats, uid: number | undefined, fix: string,
): void {
  const problem = whoElseMayWrite(stats, uid, false);
  if (problem === 'owner') {
    throw new DataDirUnsafe(
      `${what} belongs to uid ${stats.uid}, but Gatehouse runs as uid ${uid}: whoever owns it could have planted a secret or accounts. ` +
        `Give the directory and its files to uid ${uid} (chown -R ${uid} ${dir}; for a container's bind mount, on the host directory)` +
        (stats.uid === 0 ? '.' : `, or run Gatehouse as uid ${stats.uid} (in a container: --user ${stats.uid}).`),
    );
  }
  if (problem === 'writable') {
    throw new DataDirUnsafe(
      `${what} is writable by ${WRITERS[stats.mode & 0o022]} (mode ${octalMode(stats.mode)}): anyone who could write there could have planted a secret or accounts. ` +
        `Check its content, then: ${fix} ${path}`,
    );
  }
}

/**
 * Refuses every write while the lock is not held: a process whose lease was taken over (it
 * was paused, say) writes nothing over the new holder's files. A check of a clock, no I/O.
 */
export function guardWrites(fileSystem: StoreFileSystem, lock: DataDirLock, dir: string): StoreFileSystem {
  const checked = <T>(write: () => Promise<T>): Promise<T> => {
    if (!lock.isHeld()) throw new DataDirLockLost(dir, 'its lease is no longer held');
    return write();
  };
  return {
    open: (path, flags, mode) => {
      const open = (): ReturnType<StoreFileSystem['open']> => fileSystem.open(path, flags, mode);
      return flags === 'r' ? open() : checked(open);
    },
    rename: (from, to) => checked(() => fileSystem.rename(from, to)),
    link: (existing, newPath) => checked(() => fileSystem.link(existing, newPath)),
    unlink: (path) => checked(() => fileSystem.unlink(path)),
    readFile: (path) => fileSystem.readFile(path),
  };
}
