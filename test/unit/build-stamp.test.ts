// What dist/ was built from (scripts/build-stamp.mjs): a hash of the build's inputs that any change
// to them moves and nothing else does, and the npm scripts that run dist/ building only when it is
// missing or stale, never each on its own.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildInputs, buildState, sourcesHash, STAMP_PATH } from '../../scripts/build-stamp.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TOP_LEVEL_INPUTS = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', 'scripts/build-stamp.mjs', 'scripts/build-single-file.mjs'];

/** A tree holding the build's inputs as they are today (a file per top-level input, two under src/). */
function inputTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-stamp-'));
  dirs.push(dir);
  for (const input of TOP_LEVEL_INPUTS) {
    mkdirSync(dirname(join(dir, input)), { recursive: true });
    writeFileSync(join(dir, input), `${input}\n`);
  }
  mkdirSync(join(dir, 'src', 'pages'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cli.ts'), 'export {};\n');
  writeFileSync(join(dir, 'src', 'pages', 'login.ts'), 'export const a = 1;\n');
  return dir;
}

describe('the build stamp', () => {
  it('moves with any change to a source: an edit, a new file, a rename, a top-level input', () => {
    const dir = inputTree();
    const seen = new Set([sourcesHash(dir)]);
    const moved = (what: string): void => {
      const hash = sourcesHash(dir);
      assert.ok(!seen.has(hash), `${what} did not change the hash`);
      seen.add(hash);
    };
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export { };\n');
    moved('an edit under src/');
    writeFileSync(join(dir, 'src', 'pages', 'login.css'), 'body {}\n');
    moved('a new file under src/');
    renameSync(join(dir, 'src', 'pages', 'login.css'), join(dir, 'src', 'pages', 'sign-in.css'));
    moved('a rename under src/');
    writeFileSync(join(dir, 'src', 'pages', 'sign-in.css'), 'body {}\n\n');
    moved('an edit of a file that is not TypeScript');
    for (const input of TOP_LEVEL_INPUTS) {
      writeFileSync(join(dir, input), `${input} changed\n`);
      moved(`an edit of ${input}`);
    }
  });

  it('counts a new build step or tsconfig without being told: scripts/build*.mjs, tsconfig*.json', () => {
    const dir = inputTree();
    const seen = new Set([sourcesHash(dir)]);
    for (const file of ['scripts/build-pages.mjs', 'tsconfig.pages.json']) {
      writeFileSync(join(dir, file), 'new\n');
      assert.ok(!seen.has(sourcesHash(dir)), `adding ${file}`);
      seen.add(sourcesHash(dir));
      writeFileSync(join(dir, file), 'changed\n');
      assert.ok(!seen.has(sourcesHash(dir)), `editing ${file}`);
      seen.add(sourcesHash(dir));
    }
    assert.deepEqual(buildInputs(dir), ['package-lock.json', 'package.json', 'scripts/build-pages.mjs', 'scripts/build-single-file.mjs', 'scripts/build-stamp.mjs', 'scripts/build.mjs', 'src', 'tsconfig.build.json', 'tsconfig.json', 'tsconfig.pages.json']);
  });

  it('stays put for what the build does not read: the tests, the docs, dist/ itself', () => {
    const dir = inputTree();
    const before = sourcesHash(dir);
    for (const file of ['test/x.test.ts', 'docs/x.md', 'dist/cli.js', 'README.md', 'scripts/run-tests.mjs', 'scripts/ensure-built.mjs']) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), 'anything\n');
    }
    assert.equal(sourcesHash(dir), before);
  });

  it('tells a dist/ never built, one built from these sources, and one built from older ones apart', () => {
    const dir = inputTree();
    assert.equal(buildState(dir), 'missing');
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, STAMP_PATH), `${sourcesHash(dir)}\n`);
    assert.equal(buildState(dir), 'current');
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export const changed = true;\n');
    assert.equal(buildState(dir), 'stale');
  });

  it('names only inputs that exist in this repository', () => {
    assert.doesNotThrow(() => sourcesHash(ROOT));
  });
});

describe('the npm scripts that run dist/', () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const runsBuilt = Object.keys(scripts).filter((name) => name === 'test' || name.startsWith('test:') || ['start', 'bench', 'crash-test'].includes(name));

  it('build only when dist/ is missing or stale, so CI builds once for every suite', () => {
    assert.ok(runsBuilt.length >= 7, `found ${runsBuilt.join(', ')}`);
    for (const name of runsBuilt) {
      assert.match(scripts[name] ?? '', /(^|&& )node scripts\/ensure-built\.mjs( --no-check)? && /, `${name} checks the build stamp before running dist/`);
      assert.doesNotMatch(scripts[name] ?? '', /npm run build/, `${name} would rebuild every time`);
    }
  });

  it('skip the build\'s own type check only after the whole type check has passed', () => {
    for (const [name, script] of Object.entries(scripts)) {
      if (!script.includes('--no-check')) continue;
      assert.match(script, /^npm run typecheck && node scripts\/ensure-built\.mjs --no-check && /, `${name} builds unchecked without checking first`);
    }
    assert.match(scripts['typecheck'] ?? '', /^tsc --noEmit -p tsconfig\.json && tsc --noEmit -p tsconfig\.browser\.json$/, 'the typecheck covers src/ (tsconfig.json) and the pages\' browser code (tsconfig.browser.json)');
  });
});
