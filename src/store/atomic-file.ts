import { basename, dirname, join } from 'node:path';
import type { StoreFileSystem } from './file-system.js';

let tempCounter = 0;

export interface AtomicWriteOptions {
  /** Keep the replaced file as `<path>.prev` (a hard link, so no extra copy). */
  readonly keepPrevious?: boolean;
}

/** Raised when the new content is visible at `path` but the directory fsync failed: durability is unknown. */
export class RenamedButNotDurable extends Error {
  constructor(cause: unknown) {
    super('the file was replaced but the directory could not be synced', { cause });
  }
}

/**
 * Replaces `path` with `data` so that a crash leaves either the old or the new content:
 * temp file in the same directory (mode 0600, exclusive create), every byte written, fsync,
 * size checked, rename, directory fsync. A failed fsync is never retried: the page cache may
 * already have dropped the data (the "fsyncgate" lesson), so the change fails.
 */
export async function writeFileAtomic(fs: StoreFileSystem, path: string, data: Buffer, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(path);
  const tempPath = join(dir, `.${basename(path)}.${process.pid}.${++tempCounter}.tmp`);
  const handle = await fs.open(tempPath, 'wx', 0o600);
  try {
    try {
      await writeAll(handle, data);
      await handle.sync();
      const { size } = await handle.stat();
      if (size !== data.length) throw new Error(`temp file has ${size} bytes, expected ${data.length}`);
    } finally {
      await handle.close();
    }
    if (options.keepPrevious === true) await linkPrevious(fs, path);
    await fs.rename(tempPath, path);
  } catch (error) {
    await fs.unlink(tempPath).catch(() => undefined);
    throw error;
  }
  try {
    await syncDirectory(fs, dir);
  } catch (error) {
    throw new RenamedButNotDurable(error);
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

async function linkPrevious(fs: StoreFileSystem, path: string): Promise<void> {
  const previous = `${path}.prev`;
  await fs.unlink(previous).catch((error: unknown) => {
    if (!isErrorCode(error, 'ENOENT')) throw error;
  });
  await fs.link(path, previous).catch((error: unknown) => {
    if (!isErrorCode(error, 'ENOENT')) throw error;
  });
}

export async function syncDirectory(fs: StoreFileSystem, dir: string): Promise<void> {
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
