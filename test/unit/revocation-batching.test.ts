import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { IAT_SKEW_SECONDS, type SessionClaims } from '../../src/auth/jwt.js';
import { openRevocationList, REVOCATIONS_FILE } from '../../src/auth/revocations.js';
import { StoreWriteFailed } from '../../src/errors.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';

// Revocations that arrive together are written together, a token
// already revoked or already waiting costs no write, and a list that collapses into a per-user
// cutoff keeps refusing every token it held.

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function newDataDir(content?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-revocation-batching-'));
  dirs.push(dir);
  if (content !== undefined) await writeFile(join(dir, REVOCATIONS_FILE), content, { mode: 0o600 });
  return dir;
}

const NOW = 1_800_000_000;
const digestOf = (token: string): string => createHash('sha256').update(token).digest('base64url');
const claimsFor = (username: string, iat = NOW, extra: Partial<SessionClaims> = {}): SessionClaims => ({ username, iat, exp: iat + 3600, ...extra });

interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}
function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * The real file system, counting whole-file writes (renames onto the revocation file). Write
 * number `n` (1-based) can be held until a gate opens, or made to fail.
 */
function countingFileSystem(options: { holdWrite?: Map<number, Gate>; failWrite?: Set<number> } = {}): StoreFileSystem & { readonly writes: number } {
  let writes = 0;
  let opened = 0;
  return {
    get writes() {
      return writes;
    },
    async open(path, flags, mode) {
      // Each write starts by creating its temp file ("wx"); other opens (the directory fsync) pass.
      if (flags !== 'wx') return realFileSystem.open(path, flags, mode);
      opened++;
      const number = opened;
      await options.holdWrite?.get(number)?.promise;
      if (options.failWrite?.has(number) === true) throw Object.assign(new Error('injected ENOSPC'), { code: 'ENOSPC' });
      return realFileSystem.open(path, flags, mode);
    },
    async rename(from, to) {
      await realFileSystem.rename(from, to);
      if (to.endsWith(REVOCATIONS_FILE)) writes++;
    },
    link: (existing, newPath) => realFileSystem.link(existing, newPath),
    unlink: (path) => realFileSystem.unlink(path),
    readFile: (path) => realFileSystem.readFile(path),
  };
}

describe('revocation writes are batched', () => {
  it('writes 1,000 concurrent revocations of one token at most once', async () => {
    const fs = countingFileSystem();
    const list = await openRevocationList(fs, await newDataDir(), 10_000);
    const claims = claimsFor('replayer');
    await Promise.all(Array.from({ length: 1000 }, () => list.revoke('the-token', claims, NOW)));
    assert.ok(fs.writes <= 1, `${fs.writes} writes`);
    assert.equal(list.isRevoked('the-token', claims), true);
  });

  it('costs no write to revoke a token that is already revoked', async () => {
    const fs = countingFileSystem();
    const list = await openRevocationList(fs, await newDataDir(), 10_000);
    const claims = claimsFor('again');
    await list.revoke('token-a', claims, NOW);
    const writes = fs.writes;
    for (let i = 0; i < 100; i++) await list.revoke('token-a', claims, NOW);
    assert.equal(fs.writes, writes);
  });

  it('writes 100 concurrent revocations of different tokens in at most 2 writes, each answered only once it is on disk', async () => {
    const fs = countingFileSystem();
    const dir = await newDataDir();
    const list = await openRevocationList(fs, dir, 10_000);
    const checks = Array.from({ length: 100 }, async (_, i) => {
      const token = `token-${i}`;
      await list.revoke(token, claimsFor(`user-${i % 7}`), NOW);
      const onDisk = await readFile(join(dir, REVOCATIONS_FILE), 'utf8');
      assert.ok(onDisk.includes(digestOf(token)), `${token} was answered before it was on disk`);
      assert.equal(list.isRevoked(token, claimsFor(`user-${i % 7}`)), true);
    });
    await Promise.all(checks);
    assert.ok(fs.writes >= 1 && fs.writes <= 2, `${fs.writes} writes`);
  });

  it('fails exactly the batch a failing write held, and takes later revocations again', async () => {
    const firstWrite = gate();
    const fs = countingFileSystem({ holdWrite: new Map([[1, firstWrite]]), failWrite: new Set([2]) });
    const list = await openRevocationList(fs, await newDataDir(), 10_000);
    const a = list.revoke('token-a', claimsFor('a'), NOW);
    // While the first write is held: b and c wait for the next one (which will fail); a second
    // revocation of a joins the first batch.
    const b = list.revoke('token-b', claimsFor('b'), NOW);
    const c = list.revoke('token-c', claimsFor('c'), NOW);
    const aAgain = list.revoke('token-a', claimsFor('a'), NOW);
    firstWrite.open();
    await a;
    await aAgain;
    await assert.rejects(b, StoreWriteFailed);
    await assert.rejects(c, StoreWriteFailed);
    assert.equal(list.isRevoked('token-a', claimsFor('a')), true);
    assert.equal(list.isRevoked('token-b', claimsFor('b')), false, 'a failed revocation has not taken effect');
    assert.equal(list.isRevoked('token-c', claimsFor('c')), false);
    await list.revoke('token-b', claimsFor('b'), NOW);
    assert.equal(list.isRevoked('token-b', claimsFor('b')), true);
    assert.equal(fs.writes, 2);
  });
});

describe('a revocation list that collapses into a cutoff', () => {
  it("keeps refusing a collapsed token without sid whose iat is ahead of the clock", async () => {
    const list = await openRevocationList(realFileSystem, await newDataDir(), 3);
    const ahead = claimsFor('busy', NOW + IAT_SKEW_SECONDS);
    await list.revoke('ahead', ahead, NOW);
    await list.revoke('plain', claimsFor('busy'), NOW);
    await list.revoke('other', claimsFor('someone-else'), NOW);
    // The list is full: this collapses busy's two entries into a cutoff.
    await list.revoke('fourth', claimsFor('third-user'), NOW);
    assert.equal(list.isRevoked('ahead', ahead), true);
    assert.equal(list.isRevoked('plain', claimsFor('busy')), true);
  });

  it('keeps refusing them after a restart, and reads the iat back from the file', async () => {
    const dir = await newDataDir();
    const list = await openRevocationList(realFileSystem, dir, 3);
    const ahead = claimsFor('busy', NOW + 30);
    await list.revoke('ahead', ahead, NOW);
    await list.revoke('plain', claimsFor('busy', NOW - 100), NOW);
    await list.revoke('other', claimsFor('someone-else'), NOW);
    await list.close();
    const reopened = await openRevocationList(realFileSystem, dir, 3);
    await reopened.revoke('fourth', claimsFor('third-user'), NOW);
    assert.equal(reopened.isRevoked('ahead', ahead), true);
  });

  it('accepts a token of that user issued in the same second as the logout that filled the list, when the collapsed tokens are older', async () => {
    const list = await openRevocationList(realFileSystem, await newDataDir(), 2);
    await list.revoke('old-1', claimsFor('busy', NOW - 600), NOW);
    await list.revoke('old-2', claimsFor('busy', NOW - 300), NOW);
    await list.revoke('filler', claimsFor('busy', NOW - 10), NOW);
    assert.equal(list.isRevoked('old-1', claimsFor('busy', NOW - 600)), true);
    assert.equal(list.isRevoked('old-2', claimsFor('busy', NOW - 300)), true);
    // A login after that logout, in the same second: iat NOW, with a sid.
    assert.equal(list.isRevoked('new-login', claimsFor('busy', NOW, { sid: 'k' })), false);
  });

  it('refuses a token issued in the same second as the newest collapsed one (whole seconds: documented)', async () => {
    const list = await openRevocationList(realFileSystem, await newDataDir(), 2);
    await list.revoke('a', claimsFor('busy', NOW), NOW);
    await list.revoke('b', claimsFor('busy', NOW), NOW);
    await list.revoke('c', claimsFor('busy', NOW), NOW);
    assert.equal(list.isRevoked('same-second', claimsFor('busy', NOW)), true);
    assert.equal(list.isRevoked('next-second', claimsFor('busy', NOW + 1)), false);
  });

  it('reads a format 1 file (entries without iat) and, collapsing it, refuses tokens up to now + the iat skew', async () => {
    const ahead = claimsFor('busy', NOW + IAT_SKEW_SECONDS);
    const old = JSON.stringify({ format: 1, entries: [[digestOf('ahead'), 'busy', ahead.exp], [digestOf('plain'), 'busy', NOW + 3600]], cutoffs: [] });
    const list = await openRevocationList(realFileSystem, await newDataDir(old), 2);
    assert.equal(list.isRevoked('ahead', ahead), true);
    await list.revoke('fourth', claimsFor('third-user'), NOW);
    assert.equal(list.isRevoked('ahead', ahead), true);
    assert.equal(list.isRevoked('plain', claimsFor('busy')), true);
  });
});
