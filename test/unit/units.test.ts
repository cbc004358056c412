// The units of the code (scripts/units.mjs): every file under src/ in exactly one, the core and every
// file within their sizes, and the reading list in SECURITY.md and docs/architecture.md naming them,
// with what a deployment loads and runs as counted from the imports, not as a list kept by hand.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CORE_LIMIT, FILE_LIMIT, isMatch, measure, nonBlankLines, UNITS, unitsOf, type Unit } from '../../scripts/units.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sizes = measure(ROOT);
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

describe('the units of src/', () => {
  it('the map tells a folder, a name prefix and a file apart, and counts lines holding something', () => {
    assert.ok(isMatch('src/oidc/', 'src/oidc/routes/wire.ts'));
    assert.ok(!isMatch('src/oidc/', 'src/oidc.ts'));
    assert.ok(isMatch('src/auth/totp*', 'src/auth/totp-account.ts'));
    assert.ok(!isMatch('src/auth/totp*', 'src/auth/totp/x.ts'));
    assert.ok(!isMatch('src/app.ts', 'src/app.tsx'));
    const two: Unit[] = [{ name: 'a', holds: '', paths: ['src/x/'] }, { name: 'b', holds: '', paths: ['src/x/y.ts'] }];
    assert.equal(unitsOf('src/x/y.ts', two).length, 2);
    assert.equal(nonBlankLines('a\n\n  \n\tb\n'), 2);
  });

  it('puts every file under src/ in exactly one unit', () => {
    assert.deepEqual(sizes.unclaimed, [], 'files in no unit: name each in scripts/units.mjs');
    assert.deepEqual(sizes.claimedTwice, [], 'files that more than one unit of scripts/units.mjs claims');
  });

  it('names no file that does not exist', () => {
    const missing = UNITS.flatMap((unit) => unit.paths).filter((path) => !path.endsWith('/') && !path.includes('*') && !existsSync(join(ROOT, path)));
    assert.deepEqual(missing, []);
  });

  it(`keeps every file under src/ to at most ${FILE_LIMIT} non-blank lines`, () => {
    const over = sizes.units.flatMap((unit) => unit.files).filter(({ lines }) => lines > FILE_LIMIT);
    assert.deepEqual(over.map(({ file, lines }) => `${file}: ${lines}`), []);
  });

  it(`keeps the core to at most ${CORE_LIMIT} non-blank lines`, () => {
    const core = sizes.units.find((unit) => unit.name === 'core');
    assert.ok(core !== undefined);
    assert.ok(core.lines <= CORE_LIMIT, `the core has ${core.lines} non-blank lines (npm run size shows where)`);
  });
});

describe('the reading list', () => {
  /** The number in the `column`th cell (from the end) of SECURITY.md's row starting `| key |`, or NaN. */
  const printed = (text: string, key: string, fromEnd: number): number => {
    const row = text.split('\n').find((line) => line.startsWith(`| ${key} |`));
    return Number((row ?? '').split('|').at(-1 - fromEnd)?.replace(/[,\s]/g, '') ?? 'none');
  };
  // Sizes move with every change; the list is a reader's guide, so it may lag a little.
  const isNear = (shown: number, actual: number): boolean => Math.abs(shown - actual) <= Math.max(100, Math.round(actual / 10));

  it('src/ loads no module but by a static import, so what is imported is what Node loads', () => {
    // Template literals are text (a command line shown to a person, a worker's source), not code run here.
    const code = (file: string): string => read(file).replace(/`(?:\\.|[^`\\])*`/g, '``');
    const dynamic = sizes.units.flatMap((unit) => unit.files).map(({ file }) => file)
      .filter((file) => /\bimport\s*\(|\brequire\s*\(\s*['"](?!node:)/.test(code(file)));
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
    assert.equal(loaded.files, sizes.serverFiles, 'gatehouse serve loads every file of src/ but browser code (the command line imports every command)');
    assert.ok(byDefault.lines < service.lines && service.lines < loaded.lines);
  });

  it('SECURITY.md gives every unit with about its size today, what serve imports of it, and whether it runs by default', () => {
    const text = read('SECURITY.md');
    const problems: string[] = [];
    for (const unit of sizes.units) {
      const row = text.split('\n').find((line) => line.startsWith(`| ${unit.name} |`));
      if (row === undefined) {
        problems.push(`no row "| ${unit.name} | … | ${unit.lines} | ${unit.serviceLines} | … |"`);
        continue;
      }
      if (!isNear(printed(text, unit.name, 3), unit.lines)) problems.push(`${unit.name}: the list says ${printed(text, unit.name, 3)} lines, npm run size ${unit.lines}`);
      if (!isNear(printed(text, unit.name, 2), unit.serviceLines)) problems.push(`${unit.name}: the list says serve imports ${printed(text, unit.name, 2)}, npm run size ${unit.serviceLines}`);
      const runs = (row.split('|').at(-2) ?? '').trim();
      const expected = unit.offUnless === undefined ? undefined : `with \`${unit.offUnless}\``;
      if (expected === undefined ? runs.startsWith('with ') : runs !== expected) problems.push(`${unit.name}: runs by default "${runs}", expected ${expected ?? 'not "with …"'}`);
    }
    assert.deepEqual(problems, [], 'node scripts/size.mjs --update-reading-list writes today\'s numbers');
  });

  it('docs/architecture.md names every unit', () => {
    const text = read('docs/architecture.md');
    assert.deepEqual(UNITS.map((unit) => unit.name).filter((name) => !text.includes(`| ${name} |`)), []);
  });
});
