import { promises as fs } from 'node:fs';

/**
 * The file operations the store uses, as a seam: tests wrap these to inject ENOSPC, EIO,
 * short writes or a failing fsync without touching the real disk.
 */
export interface StoreFileSystem {
  open(path: string, flags: string, mode?: number): Promise<StoreFileHandle>;
  rename(from: string, to: string): Promise<void>;
  link(existing: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readFile(path: string): Promise<Buffer>;
}

export interface StoreFileHandle {
  write(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  stat(): Promise<{ size: number }>;
  close(): Promise<void>;
}

/** The real file system: node:fs's promises API, which the seam is a subset of. */
export const realFileSystem: StoreFileSystem = fs;
