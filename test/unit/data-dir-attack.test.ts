// Reproduced before the fix: the lock's temp file had a predictable name
// (gatehouse.lock.PID.tmp) and was opened without O_EXCL, so a symbolic link planted there made
// the service overwrite any file it could write.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DataDirUnsafe, openDataDir } from '../../src/store/data-dir.js';

describe('the data directory lock against a planted symbolic link', () => {
  it('never writes through a symbolic link planted at the old predictable temp name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-attack-'));
    const outside = await mkdtemp(join(tmpdir(), 'gatehouse-outside-'));
    try {
      const victim = join(outside, 'victim');
      await writeFile(victim, 'precious\n');
      await symlink(victim, join(dir, `gatehouse.lock.${process.pid}.tmp`));
      const opened = await openDataDir(dir, { purpose: 'serve' });
      await opened.lock.release();
      assert.equal(await readFile(victim, 'utf8'), 'precious\n', 'the file outside the data directory was overwritten');
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    }
  });
});

// Someone who could write to the data directory before start could plant a secret or accounts:
// the service refuses such a directory instead of tightening it and adopting what is inside.
describe('the data directory and its files must be ours alone', () => {
  const cases: Array<{ name: string; plant: (dir: string) => Promise<void>; uid?: number; expect: RegExp }> = [
    { name: 'a data directory writable by its group', plant: async (dir) => chmod(dir, 0o770), expect: /writable by its group \(mode 0770\).*chmod 0700/ },
    { name: 'a data directory writable by others', plant: async (dir) => chmod(dir, 0o757), expect: /writable by others \(mode 0757\)/ },
    { name: 'a secret writable by its group', plant: async (dir) => writeFile(join(dir, 'secret'), 'x'.repeat(43), { mode: 0o660 }).then(() => chmod(join(dir, 'secret'), 0o660)), expect: /secret is writable by its group.*chmod 0600/ },
    { name: 'a users.json writable by others', plant: async (dir) => writeFile(join(dir, 'users.json'), '{}').then(() => chmod(join(dir, 'users.json'), 0o602)), expect: /users\.json is writable by others/ },
    { name: 'a revoked-tokens.json writable by group and others', plant: async (dir) => writeFile(join(dir, 'revoked-tokens.json'), '{}').then(() => chmod(join(dir, 'revoked-tokens.json'), 0o622)), expect: /revoked-tokens\.json is writable by group and others/ },
    { name: 'a seal.key (the key sealing TOTP seeds) writable by its group', plant: async (dir) => writeFile(join(dir, 'seal.key'), 'x'.repeat(43), { mode: 0o660 }).then(() => chmod(join(dir, 'seal.key'), 0o660)), expect: /seal\.key is writable by its group.*chmod 0600/ },
    { name: 'a users.json that is a symbolic link', plant: async (dir) => symlink('/etc/passwd', join(dir, 'users.json')), expect: /users\.json is a symbolic link/ },
    { name: 'a lock that is a symbolic link', plant: async (dir) => symlink('/tmp/elsewhere', join(dir, 'gatehouse.lock')), expect: /gatehouse\.lock is a symbolic link/ },
    { name: 'a data directory that belongs to another user', plant: async () => undefined, uid: -1, expect: /belongs to uid \d+, but Gatehouse runs as uid 4242.*chown -R 4242 .*/ },
  ];
  for (const { name, plant, uid, expect } of cases) {
    it(`refuses ${name}, saying what to change`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gatehouse-unsafe-'));
      try {
        await plant(dir);
        const modeBefore = (await stat(dir)).mode & 0o777;
        await assert.rejects(openDataDir(dir, { purpose: 'serve', uid: uid === -1 ? 4242 : process.getuid?.() }), (error: unknown) => {
          assert.ok(error instanceof DataDirUnsafe, String(error));
          assert.match(error.message, expect);
          return true;
        });
        assert.equal((await stat(dir)).mode & 0o777, modeBefore, 'a refused directory is left as it was');
        assert.equal(existsSync(join(dir, 'gatehouse.lock')) && !(await lstat(join(dir, 'gatehouse.lock'))).isSymbolicLink(), false, 'no lock was taken');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  it('suggests running as the owner (--user UID) only when the owner is not root', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-owner-'));
    try {
      const owner = (await stat(dir)).uid;
      const error = await openDataDir(dir, { purpose: 'serve', uid: owner + 1 }).then(() => undefined, (caught: unknown) => caught);
      assert.ok(error instanceof DataDirUnsafe);
      if (owner === 0) assert.doesNotMatch(error.message, /--user/);
      else assert.match(error.message, new RegExp(`--user ${owner}\\b`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('tightens a directory only readable by others to 0700 and says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-readable-'));
    try {
      await chmod(dir, 0o755);
      const opened = await openDataDir(dir, { purpose: 'serve' });
      await opened.lock.release();
      assert.equal(opened.tightened, true);
      assert.equal((await stat(dir)).mode & 0o777, 0o700);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
