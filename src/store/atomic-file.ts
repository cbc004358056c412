import { lstat, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { StoreFileSystem } from './file-system.js';

let tempCounter = 0;

/**
 * Raised when the directory fsync after the rename failed and the old content could not be put
 * back: the new content is what the file shows now, but whether it survives a power cut is unknown.
 */
export class RenamedButNotDurable extends Error {
  constructor(cause: unknown) {
    super('the file was replaced but the directory could not be synced', { cause });
  }
}

const TEMP_FILE = /^\..+\.\d+\.\d+\.tmp(\.back)?$/;

/**
 * Removes temp files a crashed writer left in `dir`: names matching `pattern`, older than
 * `olderThanMs`. Of any age (the default) only while holding the directory's lock.
 */
export async function removeStaleTempFiles(dir: string, pattern = TEMP_FILE, olderThanMs = -Infinity): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir)) {
    const stats = pattern.test(name) ? await lstat(join(dir, name)).catch(() => undefined) : undefined;
    if (stats === undefined || Date.now() - stats.mtimeMs <= olderThanMs) continue;
    await unlink(join(dir, name)).catch(() => undefined);
    removed++;
  }
  return removed;
}

/**
 * Replaces `path` with `data` so that a crash leaves either the old or the new content:
 * temp file in the same directory (mode 0600, exclusive create), every byte written, fsync,
 * size checked, rename, directory fsync. A failed fsync is never retried: the page cache may
 * already have dropped the data (the "fsyncgate" lesson), so the change fails. `keepPrevious`
 * keeps the replaced file as `<path>.prev` (a hard link, so no extra copy).
 */
export async function writeFileAtomic(
  fs: StoreFileSystem, path: string, data: Buffer, options: { readonly keepPrevious?: boolean } = {},
): Promise<void> {
  const dir = dirname(path);
  const tempPath = join(dir, `.${basename(path)}.${process.pid}.${++tempCounter}.tmp`);
  const handle = await fs.open(tempPath, 'wx', 0o600);
  let previous: Previous = 'none';
  try {
    try {
      await writeAll(handle, data);
      await handle.sync();
      const { size } = await handle.stat();
      if (size !== data.length) throw new Error(`temp file has ${size} bytes, expected ${data.length}`);
    } finally {
      await handle.close();
    }
    if (options.keepPrevious === true) previous = await linkPrevious(fs, path);
    await fs.rename(tempPath, path);
  } catch (error) {
    await fs.unlink(tempPath).catch(() => undefined);
    throw error;
  }
  try {
    await syncDirectory(fs, dir);
  } catch (error) {
    // Put the old content back so a change we report as failed is not the one the file shows.
    if (options.keepPrevious === true && (await restorePrevious(fs, path, `${tempPath}.back`, previous))) throw error;
    throw new RenamedButNotDurable(error);
  }
}

/**
 * Puts back what `path` held before the rename; false when that cannot be done. With no hard
 * links there is no copy of the old content, and removing the file would lose both.
 */
async function restorePrevious(
  fs: StoreFileSystem, path: string, backPath: string, previous: Previous,
): Promise<boolean> {
  if (previous === 'unavailable') return false;
  try {
    if (previous === 'linked') {
      await fs.link(`${path}.prev`, backPath);
      await fs.rename(backPath, path);
    } else {
      await fs.unlink(path);
    }
    return true;
  } catch {
    await fs.unlink(backPath).catch(() => undefined);
    return false;
  }
}

// A write may take fewer bytes than asked without an error (a nearly full file system):
// loop until all are written, and treat a zero-byte write as the failure it is.
async function writeAll(handle: Awaited<ReturnType<StoreFileSystem['open']>>, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, offset);
    if (bytesWritten <= 0) throw Object.assign(new Error('write made no progress'), { code: 'ENOSPC' });
    offset += bytesWritten;
  }
}

/** 'linked': the old content is at `.prev`; 'none': there was no file; 'unavailable': the file system has no hard links. */
type Previous = 'linked' | 'none' | 'unavailable';

async function linkPrevious(fs: StoreFileSystem, path: string): Promise<Previous> {
  const previous = `${path}.prev`;
  await unlessMissing(fs.unlink(previous));
  try {
    await fs.link(path, previous);
    return 'linked';
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return 'none';
    if (isErrorCode(error, 'EPERM') || isErrorCode(error, 'ENOTSUP')) return 'unavailable';
    throw error;
  }
}

async function syncDirectory(fs: StoreFileSystem, dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function isErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** What `operation` resolves to, or undefined when the file it names does not exist (ENOENT). */
export async function unlessMissing<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation;
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}
