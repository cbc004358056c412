import { basename } from 'node:path';
import { realFileSystem, type StoreFileHandle, type StoreFileSystem } from '../../src/store/file-system.js';

/** An error as node:fs raises it, with `code`. */
export const injected = (code: string): Error => Object.assign(new Error(`injected ${code}`), { code, syscall: 'injected' });

/**
 * Hooks are consulted on every call; throw to fail it. `write` may return how many bytes to really
 * write (0: a write that makes no progress). `sync` sees the directory's path for a directory fsync.
 */
export interface FaultHooks {
  open?: (path: string, flags: string) => void;
  write?: (path: string, length: number) => number | undefined;
  sync?: (path: string, flags: string) => void;
  rename?: (from: string, to: string) => void;
  link?: (existing: string, newPath: string) => void;
  unlink?: (path: string) => void;
}

export interface FaultyFileSystem {
  readonly fs: StoreFileSystem;
  hooks: FaultHooks;
  /** Every call made, as "op name" (paths reduced to their base name). */
  readonly calls: string[];
}

/** The real file system behind the StoreFileSystem seam, with hooks to inject faults. */
export function faultyFileSystem(): FaultyFileSystem {
  const calls: string[] = [];
  const state: { hooks: FaultHooks } = { hooks: {} };
  const record = (op: string, path: string): void => {
    calls.push(`${op} ${basename(path)}`);
  };
  const fs: StoreFileSystem = {
    async open(path, flags, mode) {
      record('open', path);
      state.hooks.open?.(path, flags);
      const real = await realFileSystem.open(path, flags, mode);
      const handle: StoreFileHandle = {
        async write(buffer, offset, length, position) {
          record('write', path);
          const limit = state.hooks.write?.(path, length);
          if (limit === undefined) return real.write(buffer, offset, length, position);
          if (limit <= 0) return { bytesWritten: 0 };
          return real.write(buffer, offset, Math.min(limit, length), position);
        },
        async sync() {
          record('sync', path);
          state.hooks.sync?.(path, flags);
          return real.sync();
        },
        stat: () => real.stat(),
        close: () => real.close(),
      };
      return handle;
    },
    async rename(from, to) {
      record('rename', from);
      state.hooks.rename?.(from, to);
      return realFileSystem.rename(from, to);
    },
    async link(existing, newPath) {
      record('link', newPath);
      state.hooks.link?.(existing, newPath);
      return realFileSystem.link(existing, newPath);
    },
    async unlink(path) {
      record('unlink', path);
      state.hooks.unlink?.(path);
      return realFileSystem.unlink(path);
    },
    readFile: (path) => realFileSystem.readFile(path),
  };
  return {
    fs,
    calls,
    get hooks() {
      return state.hooks;
    },
    set hooks(hooks: FaultHooks) {
      state.hooks = hooks;
    },
  };
}
