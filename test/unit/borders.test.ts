// The borders of src/ (scripts/borders.mjs, docs/architecture.md "The borders"): read from every
// import of every file, types included. The core imports no feature, a feature imports only its own
// folder and the core's declared surface, and no import leads back to the file it came from.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  borderProblems, COMPOSITION, CORE_SURFACE, FEATURES, importCycles, importGraph, importsIn, partOf, sourceFiles,
} from '../../scripts/borders.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const graph = importGraph(ROOT);

describe('the borders of src/', () => {
  it('reads every kind of import: types only, several lines, re-exports, bare; not a package (control)', () => {
    const text = [
      "import type { A } from './a.js';",
      'import {',
      '  b,',
      "} from '../store/b.js';",
      "export { c } from './c/c.js';",
      "import './d.js';",
      "import { e } from 'node:fs';",
      "const text = 'not an import from \\'./f.js\\'';",
    ].join('\n');
    assert.deepEqual(importsIn('src/auth/x.ts', text), ['src/auth/a.ts', 'src/store/b.ts', 'src/auth/c/c.ts', 'src/auth/d.ts']);
  });

  it('refuses each import across a border the wrong way, and finds every cycle (control)', () => {
    const features = [{ folder: 'src/a/', holds: '' }, { folder: 'src/b/', holds: '' }];
    const surface = ['src/shown.ts', 'src/kit/'];
    const made = new Map<string, string[]>([
      ['src/core.ts', ['src/shown.ts', 'src/a/x.ts']],
      ['src/shown.ts', ['src/hidden.ts']],
      ['src/a/x.ts', ['src/a/y.ts', 'src/shown.ts', 'src/kit/z.ts', 'src/hidden.ts', 'src/b/x.ts', 'src/server.ts']],
      ['src/a/y.ts', ['src/a/x.ts']],
      ['src/server.ts', ['src/b/x.ts', 'src/hidden.ts']],
      ['src/b/x.ts', ['src/b/x.ts']],
    ]);
    assert.deepEqual(borderProblems(made, features, surface), [
      'src/core.ts -> src/a/x.ts: the core imports no feature',
      'src/a/x.ts -> src/hidden.ts: not in the core\'s surface',
      'src/a/x.ts -> src/b/x.ts: a feature imports no other feature',
      'src/a/x.ts -> src/server.ts: a feature imports no composition',
    ]);
    assert.deepEqual(importCycles(made), [['src/a/x.ts', 'src/a/y.ts'], ['src/b/x.ts']]);
    assert.equal(partOf('src/server.ts', features), 'composition');
    assert.equal(partOf('src/a/deep/x.ts', features), 'src/a/');
    assert.equal(partOf('src/ab.ts', features), 'core');
  });

  it('names feature folders, composition files and a core surface that exist, the surface in the core', () => {
    const missing = [...FEATURES.map((feature) => feature.folder), ...COMPOSITION, ...CORE_SURFACE]
      .filter((path) => !existsSync(join(ROOT, path)));
    assert.deepEqual(missing, []);
    assert.deepEqual(CORE_SURFACE.filter((path) => partOf(path) !== 'core'), []);
    const files = sourceFiles(ROOT);
    assert.deepEqual(FEATURES.filter(({ folder }) => !files.some((file) => file.startsWith(folder))).map(({ folder }) => folder), []);
  });

  it('reads imports only of files that exist: every relative import under src/ names one', () => {
    const dangling = [...graph].flatMap(([file, imports]) => imports.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`));
    assert.deepEqual(dangling, []);
    assert.ok(graph.size > 100, `${graph.size} files read`);
  });

  it('the core imports no feature, and a feature only its own folder and the core\'s surface', () => {
    assert.deepEqual(borderProblems(graph), [], 'scripts/borders.mjs says what may import what');
  });

  it('no import leads back to the file it came from', () => {
    assert.deepEqual(importCycles(graph), []);
  });
});
