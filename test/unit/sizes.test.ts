// The sizes of src/ (scripts/sizes.mjs): every file within the limit, and the reading list in
// SECURITY.md and docs/architecture.md naming every folder, with what a deployment loads and runs as
// counted from the imports, not as a list kept by hand. The borders between the folders are
// test/unit/borders.test.ts's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FILE_LIMIT, folderOf, measure, nonBlankLines } from '../../scripts/sizes.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sizes = measure(ROOT);
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const allFiles = sizes.folders.flatMap((folder) => folder.files).map(({ file }) => file);

describe('the sizes of src/', () => {
  it('counts lines holding something, by folder, the composition apart (control)', () => {
    assert.equal(nonBlankLines('a\n\n  \n\tb\n'), 2);
    assert.equal(folderOf('src/oidc/routes/wire.ts'), 'src/oidc/');
    assert.equal(folderOf('src/app.ts'), 'src/*.ts');
    assert.equal(folderOf('src/server.ts'), 'composition');
  });

  it(`keeps every file under src/ to at most ${FILE_LIMIT} non-blank lines`, () => {
    const over = sizes.folders.flatMap((folder) => folder.files).filter(({ lines }) => lines > FILE_LIMIT);
    assert.deepEqual(over.map(({ file, lines }) => `${file}: ${lines}`), []);
  });
});

describe('the reading list', () => {
  /** The number in the `fromEnd`th cell (from the end) of SECURITY.md's row starting `| key |`, or NaN. */
  const printed = (text: string, key: string, fromEnd: number): number => {
    const row = text.split('\n').find((line) => line.startsWith(`| ${key} |`));
    return Number((row ?? '').split('|').at(-1 - fromEnd)?.replace(/[,\s]/g, '') ?? 'none');
  };
  // Sizes move with every change; the list is a reader's guide, so it may lag a little.
  const isNear = (shown: number, actual: number): boolean => Math.abs(shown - actual) <= Math.max(100, Math.round(actual / 10));

  it('src/ loads no module but by a static import, so what is imported is what Node loads', () => {
    // Template literals are text (a command line shown to a person, a worker's source), not code run here.
    const code = (file: string): string => read(file).replace(/`(?:\\.|[^`\\])*`/g, '``');
    const dynamic = allFiles.filter((file) => /\bimport\s*\(|\brequire\s*\(\s*['"](?!node:)/.test(code(file)));
    assert.deepEqual(dynamic, [], 'a dynamic import or a require of a non-builtin hides code from the count');
  });

  it('SECURITY.md gives what a deployment loads, can run and runs by default, about as npm run size counts it', () => {
    const text = read('SECURITY.md');
    const { loaded, service, byDefault } = sizes.deployment;
    const problems: string[] = [];
    for (const [key, part] of [['loaded', loaded], ['serve', service], ['default', byDefault]] as const) {
      const lines = printed(text, key, 1);
      const files = printed(text, key, 2);
      if (!isNear(lines, part.lines) || files !== part.files) problems.push(`${key}: the list says ${files} files, ${lines} lines; npm run size ${part.files}, ${part.lines}`);
    }
    assert.deepEqual(problems, [], 'node scripts/size.mjs --update-reading-list writes today\'s numbers');
    // The command line imports every command, so serve loads every file but those that hold only
    // types and the pages' browser code (bundled into src/pages/built-scripts.js by the build).
    const neverLoaded = allFiles.filter((file) => file.includes('/browser/') || file.endsWith('.d.ts')
      || !/^\s*(?:export\s+)?(?:async\s+)?(?:function|const|let|class)\b/m.test(read(file)));
    assert.equal(loaded.files, sizes.files - neverLoaded.length, `every file of src/ but ${neverLoaded.join(', ')}`);
    assert.ok(byDefault.lines < service.lines && service.lines < loaded.lines);
  });

  it('SECURITY.md gives every folder with about its size today, what serve imports of it, and whether it runs by default', () => {
    const text = read('SECURITY.md');
    const problems: string[] = [];
    for (const folder of sizes.folders) {
      const key = `\`${folder.name}\``;
      const row = text.split('\n').find((line) => line.startsWith(`| ${key} |`));
      if (row === undefined) {
        problems.push(`no row "| ${key} | ${folder.part} | … | ${folder.lines} | ${folder.serviceLines} | … |"`);
        continue;
      }
      if (!isNear(printed(text, key, 3), folder.lines)) problems.push(`${folder.name}: the list says ${printed(text, key, 3)} lines, npm run size ${folder.lines}`);
      if (!isNear(printed(text, key, 2), folder.serviceLines)) problems.push(`${folder.name}: the list says serve imports ${printed(text, key, 2)}, npm run size ${folder.serviceLines}`);
      const part = (row.split('|')[2] ?? '').trim();
      if (part !== folder.part) problems.push(`${folder.name}: the list says "${part}", it is ${folder.part}`);
      const runs = (row.split('|').at(-2) ?? '').trim();
      if (folder.offUnless !== undefined && runs !== `with \`${folder.offUnless}\``) problems.push(`${folder.name}: runs by default "${runs}", expected with \`${folder.offUnless}\``);
    }
    assert.deepEqual(problems, [], 'node scripts/size.mjs --update-reading-list writes today\'s numbers');
  });

  it('docs/architecture.md names every folder of src/', () => {
    const text = read('docs/architecture.md');
    assert.deepEqual(sizes.folders.map((folder) => folder.name).filter((name) => name !== 'composition' && name !== 'src/*.ts' && !text.includes(name)), []);
  });
});
