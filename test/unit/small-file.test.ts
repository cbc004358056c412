import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSmallFile, SmallFileRefused } from '../../src/store/small-file.js';

describe('readSmallFile', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-small-file-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const refusedWith = (pattern: RegExp) => (error: unknown): boolean => error instanceof SmallFileRefused && pattern.test(error.message);

  it('reads a regular file whole, with the stats of what it read', async () => {
    const path = join(dir, 'ok');
    await writeFile(path, 'secret text\n', { mode: 0o600 });
    const { bytes, stats } = await readSmallFile(path, 64);
    assert.equal(bytes.toString('utf8'), 'secret text\n');
    assert.equal(stats.size, 12);
    assert.equal(stats.mode & 0o777, 0o600);
  });

  it('reads a file of exactly the cap and refuses one byte more', async () => {
    const path = join(dir, 'cap');
    await writeFile(path, 'x'.repeat(64));
    assert.equal((await readSmallFile(path, 64)).bytes.length, 64);
    await writeFile(path, 'x'.repeat(65));
    await assert.rejects(readSmallFile(path, 64), refusedWith(/larger than 64 bytes/));
  });

  it('refuses a missing file, a directory and a FIFO (without hanging on the FIFO)', async () => {
    await assert.rejects(readSmallFile(join(dir, 'missing'), 64), refusedWith(/cannot be read \(ENOENT\)/));
    await assert.rejects(readSmallFile(dir, 64), refusedWith(/not a regular file/));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(readSmallFile(fifo, 64), refusedWith(/not a regular file/));
  });
});
