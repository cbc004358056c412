// `npm run build`: dist/ from src/, from scratch, then the stamp that says what it was built from
// (scripts/build-stamp.mjs). The old dist/ goes first, stamp included, so a file whose source was
// removed is not left behind and a build that fails half-way leaves no stamp: nothing runs it.
// A new step goes in STEPS; what it reads outside src/ must be among buildInputs().
//   node scripts/build.mjs              type-checks src/ as it compiles it
//   node scripts/build.mjs --no-check   compiles without the check, for a caller that has just
//                                       checked src/ itself (npm test's typecheck, which covers
//                                       src/, test/ and scripts/): the output is the same, as
//                                       isolatedModules makes every file's output its own.
import { spawnSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { sourcesHash, STAMP_PATH } from './build-stamp.mjs';

const root = new URL('..', import.meta.url).pathname;
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const checked = !process.argv.includes('--no-check');

const STEPS = [
  // src/pages/built-scripts.js and its copy in dist/: the pages' browser code, bundled and hashed.
  [join(root, 'scripts', 'build-page-scripts.mjs'), '--dist'],
  // dist/*.js, one file per module: what `node dist/cli.js` and the container image run.
  [tsc, '-p', 'tsconfig.build.json', ...(checked ? [] : ['--noCheck'])],
  // dist/gatehouse.mjs, the one-file copy (docs/single-file.md).
  [join(root, 'scripts', 'build-single-file.mjs')],
];

// Read before building: a source changed while the build runs makes the stamp stale, not wrong.
const hash = sourcesHash(root);
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const args of STEPS) {
  const status = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status;
  if (status !== 0) process.exit(status ?? 1);
}
// package.json's bin: npm marks it executable only when it exists at install time, and on a fresh
// clone `npm install` runs before the first build, so `npx gatehouse` would meet a file it may not run.
chmodSync(join(root, 'dist', 'cli.js'), 0o755);
writeFileSync(join(root, STAMP_PATH), `${hash}\n`);
