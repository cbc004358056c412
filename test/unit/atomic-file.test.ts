import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RenamedButNotDurable, writeFileAtomic } from '../../src/store/atomic-file.js';
import { realFileSystem, type StoreFileHandle, type StoreFileSystem } from '../../src/store/file-system.js';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-atomic-'));
  dirs.push(dir);
  return dir;
}

const ioError = (code: string): Error => Object.assign(new Error(`simulated ${code}`), { code });

interface Faults {
  /** Replaces write on the temp file's handle. */
  write?: (real: StoreFileHandle, buffer: Buffer, offset: number, length: number, position: number) => Promise<{ bytesWritten: number }>;
  syncFile?: () => Promise<void>;
  syncDirectory?: () => Promise<void>;
  stat?: () => Promise<{ size: number }>;
  rename?: () => Promise<void>;
}

/** realFileSystem with chosen operations replaced; a directory is opened with flags 'r', the temp file with 'wx'. */
function faultyFileSystem(faults: Faults): StoreFileSystem {
  return {
    ...realFileSystem,
    async open(path, flags, mode) {
      const real = await realFileSystem.open(path, flags, mode);
      const isDirectory = flags === 'r';
      const handle: StoreFileHandle = {
        write: (buffer, offset, length, position) =>
          !isDirectory && faults.write !== undefined ? faults.write(real, buffer, offset, length, position) : real.write(buffer, offset, length, position),
        sync: () => {
          if (isDirectory && faults.syncDirectory !== undefined) return faults.syncDirectory();
          if (!isDirectory && faults.syncFile !== undefined) return faults.syncFile();
          return real.sync();
        },
        stat: () => (!isDirectory && faults.stat !== undefined ? faults.stat() : real.stat()),
        close: () => real.close(),
      };
      return handle;
    },
    rename: (from, to) => (faults.rename !== undefined ? faults.rename() : realFileSystem.rename(from, to)),
  };
}

describe('writeFileAtomic', () => {
  it('writes the data to the path', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    await writeFileAtomic(realFileSystem, path, Buffer.from('{"a":1}\n'));
    assert.equal(await readFile(path, 'utf8'), '{"a":1}\n');
  });

  it('creates the file with mode 0600', async () => {
    const dir = await tempDir();
    const path = join(dir, 'secret');
    await writeFileAtomic(realFileSystem, path, Buffer.from('s'));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('gives a replaced file mode 0600 even when the old one was looser', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    await writeFile(path, 'old', { mode: 0o644 });
    await writeFileAtomic(realFileSystem, path, Buffer.from('new'));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('replaces an existing file and leaves no temp file behind', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    await writeFileAtomic(realFileSystem, path, Buffer.from('one'));
    await writeFileAtomic(realFileSystem, path, Buffer.from('two'));
    assert.equal(await readFile(path, 'utf8'), 'two');
    assert.deepEqual(await readdir(dir), ['users.json']);
  });

  it('writes an empty buffer', async () => {
    const dir = await tempDir();
    const path = join(dir, 'empty');
    await writeFileAtomic(realFileSystem, path, Buffer.alloc(0));
    assert.equal((await readFile(path)).length, 0);
  });

  it('keeps the replaced content as <path>.prev when asked', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    await writeFileAtomic(realFileSystem, path, Buffer.from('first'), { keepPrevious: true });
    assert.deepEqual(await readdir(dir), ['users.json']);
    await writeFileAtomic(realFileSystem, path, Buffer.from('second'), { keepPrevious: true });
    await writeFileAtomic(realFileSystem, path, Buffer.from('third'), { keepPrevious: true });
    assert.equal(await readFile(path, 'utf8'), 'third');
    assert.equal(await readFile(`${path}.prev`, 'utf8'), 'second');
    assert.deepEqual((await readdir(dir)).sort(), ['users.json', 'users.json.prev']);
  });

  it('keeps no .prev unless asked', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    await writeFileAtomic(realFileSystem, path, Buffer.from('first'));
    await writeFileAtomic(realFileSystem, path, Buffer.from('second'));
    assert.deepEqual(await readdir(dir), ['users.json']);
  });

  it('writes the whole file when each write takes fewer bytes than asked', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    const data = Buffer.from('x'.repeat(1000) + 'END');
    let calls = 0;
    const fs = faultyFileSystem({
      write: (real, buffer, offset, length, position) => {
        calls++;
        return real.write(buffer, offset, Math.min(length, 7), position);
      },
    });
    await writeFileAtomic(fs, path, data);
    assert.deepEqual(await readFile(path), data);
    assert.ok(calls > 1, `write was called ${calls} times`);
    assert.deepEqual(await readdir(dir), ['users.json']);
  });

  it('writes the whole file when a write takes a single byte at a time, at the right offsets', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    const data = Buffer.from('0123456789abcdef');
    const fs = faultyFileSystem({ write: (real, buffer, offset, _length, position) => real.write(buffer, offset, 1, position) });
    await writeFileAtomic(fs, path, data);
    assert.deepEqual(await readFile(path), data);
  });

  describe('when a step fails, rejects, leaves the original untouched and removes the temp file', () => {
    const failures: ReadonlyArray<{ name: string; faults: Faults; code?: string }> = [
      { name: 'a write that makes no progress (0 bytes)', faults: { write: async () => ({ bytesWritten: 0 }) }, code: 'ENOSPC' },
      {
        name: 'a write that makes some progress, then none',
        faults: {
          write: (() => {
            let first = true;
            return async (real: StoreFileHandle, buffer: Buffer, offset: number, _length: number, position: number) => {
              if (!first) return { bytesWritten: 0 };
              first = false;
              return real.write(buffer, offset, 2, position);
            };
          })(),
        },
        code: 'ENOSPC',
      },
      { name: 'a write that throws ENOSPC', faults: { write: async () => Promise.reject(ioError('ENOSPC')) }, code: 'ENOSPC' },
      { name: 'a file fsync that throws EIO', faults: { syncFile: async () => Promise.reject(ioError('EIO')) }, code: 'EIO' },
      { name: 'a size check that disagrees with what was written', faults: { stat: async () => ({ size: 1 }) } },
      { name: 'a rename that throws', faults: { rename: async () => Promise.reject(ioError('EXDEV')) }, code: 'EXDEV' },
    ];

    for (const { name, faults, code } of failures) {
      it(`on ${name}`, async () => {
        const dir = await tempDir();
        const path = join(dir, 'users.json');
        await writeFile(path, 'original', { mode: 0o600 });
        await assert.rejects(writeFileAtomic(faultyFileSystem(faults), path, Buffer.from('replacement content')), (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.ok(!(error instanceof RenamedButNotDurable));
          if (code !== undefined) assert.equal((error as { code?: unknown }).code, code);
          return true;
        });
        assert.equal(await readFile(path, 'utf8'), 'original');
        assert.deepEqual(await readdir(dir), ['users.json']);
      });
    }

    it('on a failed rename with keepPrevious, the original is still in place', async () => {
      const dir = await tempDir();
      const path = join(dir, 'users.json');
      await writeFile(path, 'original', { mode: 0o600 });
      const fs = faultyFileSystem({ rename: async () => Promise.reject(ioError('EIO')) });
      await assert.rejects(writeFileAtomic(fs, path, Buffer.from('new'), { keepPrevious: true }));
      assert.equal(await readFile(path, 'utf8'), 'original');
      assert.equal((await readdir(dir)).some((name) => name.endsWith('.tmp')), false);
    });

    it('on a failure when no file existed before, no file appears', async () => {
      const dir = await tempDir();
      const path = join(dir, 'users.json');
      await assert.rejects(writeFileAtomic(faultyFileSystem({ syncFile: async () => Promise.reject(ioError('EIO')) }), path, Buffer.from('x')));
      assert.deepEqual(await readdir(dir), []);
    });
  });

  it('never retries a failed fsync', async () => {
    const dir = await tempDir();
    let syncs = 0;
    const fs = faultyFileSystem({
      syncFile: async () => {
        syncs++;
        throw ioError('EIO');
      },
    });
    await assert.rejects(writeFileAtomic(fs, join(dir, 'f'), Buffer.from('x')));
    assert.equal(syncs, 1);
  });

  it('throws RenamedButNotDurable when the directory fsync fails, with the new content in place', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    await writeFile(path, 'original', { mode: 0o600 });
    const cause = ioError('EIO');
    const fs = faultyFileSystem({ syncDirectory: async () => Promise.reject(cause) });
    await assert.rejects(writeFileAtomic(fs, path, Buffer.from('replacement')), (error: unknown) => {
      assert.ok(error instanceof RenamedButNotDurable);
      assert.equal(error.cause, cause);
      return true;
    });
    assert.equal(await readFile(path, 'utf8'), 'replacement');
    assert.deepEqual(await readdir(dir), ['users.json']);
  });

  for (const code of ['EPERM', 'ENOTSUP']) {
    it(`keeps the file (RenamedButNotDurable) when the directory fsync fails on a file system without hard links (${code})`, async () => {
      const dir = await tempDir();
      const path = join(dir, 'users.json');
      await writeFile(path, 'original', { mode: 0o600 });
      const fs: StoreFileSystem = {
        ...faultyFileSystem({ syncDirectory: async () => Promise.reject(ioError('EIO')) }),
        link: async () => Promise.reject(ioError(code)),
      };
      await assert.rejects(writeFileAtomic(fs, path, Buffer.from('replacement'), { keepPrevious: true }), RenamedButNotDurable);
      // Without a .prev to restore from, the file must not be removed as if it had never existed.
      assert.equal(await readFile(path, 'utf8'), 'replacement');
    });
  }

  it('syncs the temp file, then renames, then syncs the directory', async () => {
    const dir = await tempDir();
    const path = join(dir, 'users.json');
    const events: string[] = [];
    const fs = faultyFileSystem({
      syncFile: async () => {
        events.push('sync-file');
      },
      syncDirectory: async () => {
        events.push('sync-dir');
      },
    });
    const ordered: StoreFileSystem = {
      ...fs,
      rename: async (from, to) => {
        events.push('rename');
        await realFileSystem.rename(from, to);
      },
    };
    await writeFileAtomic(ordered, path, Buffer.from('x'));
    assert.deepEqual(events, ['sync-file', 'rename', 'sync-dir']);
    assert.equal(await readFile(path, 'utf8'), 'x');
  });
});
