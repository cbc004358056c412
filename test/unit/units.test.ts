// The units of the code (scripts/units.mjs): every file under src/ in exactly one, the core and every
// file within their sizes, and the reading list in SECURITY.md and docs/architecture.md naming them.
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
  it('SECURITY.md gives every unit with about its size today', () => {
    const text = read('SECURITY.md');
    const problems: string[] = [];
    for (const unit of sizes.units) {
      const row = text.split('\n').find((line) => line.startsWith(`| ${unit.name} |`));
      const printed = Number((row ?? '').split('|').at(-2)?.replace(/[,\s]/g, '') ?? 'none');
      // Sizes move with every change; the list is a reader's guide, so it may lag a little.
      const slack = Math.max(100, Math.round(unit.lines / 10));
      if (row === undefined) problems.push(`no row "| ${unit.name} | … | ${unit.lines} |"`);
      else if (!(Math.abs(printed - unit.lines) <= slack)) problems.push(`${unit.name}: the list says ${printed}, npm run size ${unit.lines}`);
    }
    assert.deepEqual(problems, []);
  });

  it('docs/architecture.md names every unit', () => {
    const text = read('docs/architecture.md');
    assert.deepEqual(UNITS.map((unit) => unit.name).filter((name) => !text.includes(`| ${name} |`)), []);
  });
});
