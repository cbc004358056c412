import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openRevocationList, REVOCATIONS_FILE } from '../../src/auth/revocations.js';
import { realFileSystem } from '../../src/store/file-system.js';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDirWith(content: string | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-revocations-'));
  dirs.push(dir);
  if (content !== undefined) await writeFile(join(dir, REVOCATIONS_FILE), content, { mode: 0o600 });
  return dir;
}

const open = (dir: string) => openRevocationList(realFileSystem, dir, 100);

describe('openRevocationList with a hand-edited file', () => {
  // Start-up must say what is wrong with which file, not fail on a property of null.
  for (const [name, content] of [
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"entries"'],
    ['entries that are not a list', '{"format":1,"entries":null,"cutoffs":[]}'],
  ] as const) {
    it(`refuses ${name}, naming the file and its format`, async () => {
      const dir = await dataDirWith(content);
      await assert.rejects(open(dir), (error: unknown) => {
        assert.ok(error instanceof Error && !(error instanceof TypeError), String(error));
        assert.match(error.message, /revoked-tokens\.json is not in the expected format/);
        return true;
      });
    });
  }

  it('refuses text that is not JSON as such', async () => {
    await assert.rejects(open(await dataDirWith('{nope')), /is not valid JSON/);
  });

  it('reports a file it cannot read as unreadable, not as bad JSON', async () => {
    const dir = await dataDirWith(undefined);
    await mkdir(join(dir, REVOCATIONS_FILE));
    await assert.rejects(open(dir), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.doesNotMatch(error.message, /not valid JSON/);
      assert.match(error.message, /cannot be read.*EISDIR/);
      return true;
    });
  });

  it('starts empty when there is no file, and with an empty but valid one', async () => {
    await open(await dataDirWith(undefined));
    await open(await dataDirWith('{"format":1,"entries":[],"cutoffs":[]}'));
  });
});
