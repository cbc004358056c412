// Every export of src/ is imported by some other file under src/, test/ or scripts/
// (scripts/unused-exports.mjs): a name only its own file uses is not exported, and code nothing uses
// is not kept.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeUnused, unusedExports } from '../../scripts/unused-exports.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function repository(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'unused-exports-'));
  for (const dir of ['src', 'test', 'scripts']) mkdirSync(join(root, dir));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

describe('unused exports', () => {
  it('finds the exports no other file imports, however the others import', () => {
    const root = repository({
      'src/a.ts': [
        'export const named = 1;',
        'export function viaNamespace() {}',
        'export type ViaImportType = number;',
        'export const reExported = 2;',
        'export interface OnlyHere { n: number }',
        'export const nowhere = 3;',
        'const own: OnlyHere = { n: named };',
        'void own;',
      ].join('\n'),
      'src/b.ts': "export { reExported } from './a.js';\nexport const viaTypeof = 4;\nexport const notRead = 5;\n",
      'test/x.test.ts': [
        "import { named } from '../src/a.js';",
        "import * as a from '../src/a.js';",
        "import { reExported } from '../src/b.js';",
        "type T = import('../src/a.js').ViaImportType;",
        "const b = (await import('../src/b.js?again')) as typeof import('../src/b.js');",
        'a.viaNamespace(); void named; void reExported; void b.viaTypeof;',
      ].join('\n'),
    });
    try {
      const found = unusedExports(root);
      assert.deepEqual(found.map(({ file, name, local }) => [file, name, local]), [
        ['src/a.ts', 'OnlyHere', true],
        ['src/a.ts', 'nowhere', false],
        ['src/b.ts', 'notRead', false],
      ]);
      assert.match(describeUnused(found)[0] ?? '', /^src\/a\.ts:5 OnlyHere .*drop `export`/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('leaves no export of src/ that nothing else imports', () => {
    const unused = describeUnused(unusedExports(ROOT));
    assert.deepEqual(unused, [], `run node scripts/unused-exports.mjs; drop the \`export\` or delete the code (${unused.length})`);
  });
});
