// scripts/ensure-built.mjs and scripts/build.mjs on a copy of the build (the real scripts, package
// files and tsconfig.build.json; a one-module src/ and a tsconfig.json that checks no library
// types, to keep each build to a second or two): a fresh clone builds, a second run does not, a
// changed source builds again from scratch, and a failed build leaves nothing that would run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COPIED = ['package.json', 'package-lock.json', 'tsconfig.build.json', 'scripts/build.mjs', 'scripts/build-stamp.mjs', 'scripts/build-single-file.mjs', 'scripts/build-page-scripts.mjs', 'scripts/ensure-built.mjs'];
const TSCONFIG = { compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', types: [], strict: true, skipLibCheck: true, noEmit: true }, include: ['src'] };

describe('building once: npm scripts build only a missing or stale dist/', () => {
  let dir = '';
  const ensureBuilt = (...args: string[]): { status: number | null; output: string } => {
    const result = spawnSync(process.execPath, [join(dir, 'scripts', 'ensure-built.mjs'), ...args], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  };
  const built = (file: string): string => readFileSync(join(dir, 'dist', file), 'utf8');

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-build-once-'));
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'src'));
    for (const file of COPIED) copyFileSync(join(ROOT, file), join(dir, file));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export const version: number = 1;\n');
    writeFileSync(join(dir, 'src', 'gone.ts'), 'export const gone = true;\n');
    // No page scripts: the build's page-scripts step finds none, as this declaration says.
    mkdirSync(join(dir, 'src', 'pages'));
    writeFileSync(join(dir, 'src', 'pages', 'built-scripts.d.ts'), 'type ScriptName = never;\nexport declare const BUILT_SCRIPTS: Readonly<Record<ScriptName, string>>;\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('builds a fresh clone: dist/, the one-file copy and the stamp', () => {
    const first = ensureBuilt();
    assert.equal(first.status, 0, first.output);
    assert.match(first.output, /dist\/ is not built: building/);
    assert.match(built('cli.js'), /version = 1/);
    assert.match(built('gatehouse.mjs'), /version = 1/);
    assert.ok(existsSync(join(dir, 'dist', 'gone.js')));
    assert.ok(existsSync(join(dir, 'dist', '.build-stamp')));
  });

  it('does not build again while the sources are as they were', () => {
    const stampTime = statSync(join(dir, 'dist', '.build-stamp')).mtimeMs;
    const again = ensureBuilt();
    assert.equal(again.status, 0, again.output);
    assert.match(again.output, /not building again/);
    assert.equal(statSync(join(dir, 'dist', '.build-stamp')).mtimeMs, stampTime);
  });

  it('builds again, from scratch, when a source changed: nothing of a removed source is left', () => {
    rmSync(join(dir, 'src', 'gone.ts'));
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export const version: number = 2;\n');
    const rebuilt = ensureBuilt();
    assert.equal(rebuilt.status, 0, rebuilt.output);
    assert.match(rebuilt.output, /older than the sources: building/);
    assert.match(built('cli.js'), /version = 2/);
    assert.match(built('gatehouse.mjs'), /version = 2/);
    assert.ok(!existsSync(join(dir, 'dist', 'gone.js')), 'the removed source\'s output went with the old dist/');
  });

  it('fails on a source that does not compile and leaves no stamp, so the next run builds again', () => {
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export const version: number = "three";\n');
    const failed = ensureBuilt();
    assert.notEqual(failed.status, 0, failed.output);
    assert.ok(!existsSync(join(dir, 'dist', '.build-stamp')));
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export const version: number = 3;\n');
    const fixed = ensureBuilt();
    assert.equal(fixed.status, 0, fixed.output);
    assert.match(fixed.output, /not built: building/);
    assert.match(built('cli.js'), /version = 3/);
  });

  it('leaves the type check to its caller with --no-check (npm test has just run it), and builds the same files', () => {
    const checked = built('cli.js');
    const again = spawnSync(process.execPath, [join(dir, 'scripts', 'build.mjs'), '--no-check'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    assert.equal(again.status, 0, `${again.stdout}${again.stderr}`);
    assert.equal(built('cli.js'), checked, 'the same output as the checked build of the same source');
    writeFileSync(join(dir, 'src', 'cli.ts'), 'export const version: number = "five";\n');
    const unchecked = ensureBuilt('--no-check');
    assert.equal(unchecked.status, 0, `no type check, so no type error: ${unchecked.output}`);
    assert.ok(existsSync(join(dir, 'dist', '.build-stamp')));
  });
});
