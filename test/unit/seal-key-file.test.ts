// --seal-key-file names a key kept outside the data directory. Whoever owns or may write that
// file could swap the key, so it gets the same owner and mode rules as GATEHOUSE_SECRET_FILE.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSealKeyFile, SealKeyInvalid } from '../../src/totp/seal.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-seal-key-'));
});
after(() => rm(dir, { recursive: true, force: true }));

async function keyFile(name: string, mode: number): Promise<{ path: string; key: Buffer }> {
  const key = randomBytes(32);
  const path = join(dir, name);
  await writeFile(path, `${key.toString('base64url')}\n`);
  await chmod(path, mode);
  return { path, key };
}

const ourUid = process.getuid?.();

describe('readSealKeyFile', () => {
  it('reads a key file of ours with mode 0600 without a warning', async () => {
    const { path, key } = await keyFile('good', 0o600);
    const warnings: string[] = [];
    assert.deepEqual(await readSealKeyFile(path, (message) => warnings.push(message), ourUid), key);
    assert.deepEqual(warnings, []);
  });

  it('refuses a file that group or others may write', async () => {
    for (const mode of [0o620, 0o602]) {
      const { path } = await keyFile(`writable-${mode.toString(8)}`, mode);
      await assert.rejects(readSealKeyFile(path, () => undefined, ourUid), (error: unknown) => error instanceof SealKeyInvalid && /writable by group or others/.test(error.message));
    }
  });

  it('refuses a file that belongs to a uid other than root or its own', async () => {
    assert.ok(ourUid !== undefined, 'this test needs uids (Linux)');
    const { path } = await keyFile('foreign', 0o600);
    let owner = ourUid;
    let runningAs = ourUid + 1;
    if (ourUid === 0) {
      // As root (CI): a real file of nobody's, read by Gatehouse running as root.
      await chown(path, 65534, 65534);
      owner = 65534;
      runningAs = 0;
    }
    await assert.rejects(readSealKeyFile(path, () => undefined, runningAs), (error: unknown) => error instanceof SealKeyInvalid && error.message.includes(`belongs to uid ${owner}`));
  });

  it('warns when group or others may read the key', async () => {
    const { path, key } = await keyFile('readable', 0o644);
    const warnings: string[] = [];
    assert.deepEqual(await readSealKeyFile(path, (message) => warnings.push(message), ourUid), key);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /readable by group or others/);
  });

  it('refuses a missing file with the command that makes one', async () => {
    await assert.rejects(readSealKeyFile(join(dir, 'absent'), () => undefined, ourUid), (error: unknown) => error instanceof SealKeyInvalid && /does not exist; make one with/.test(error.message));
  });

  it('refuses a file that does not hold 32 base64url bytes', async () => {
    const path = join(dir, 'short');
    await writeFile(path, 'too-short\n', { mode: 0o600 });
    await assert.rejects(readSealKeyFile(path, () => undefined, ourUid), SealKeyInvalid);
  });
});
