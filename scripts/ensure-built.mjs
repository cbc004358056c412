// Builds dist/ unless it was built from the sources as they are now (scripts/build-stamp.mjs):
// every npm script that runs dist/ starts with this, so each works alone on a fresh clone and
// none runs a stale build, while CI's suites share the one build `npm test` made. Its arguments
// go to scripts/build.mjs (--no-check).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildState } from './build-stamp.mjs';

const root = new URL('..', import.meta.url).pathname;
const state = buildState(root);
if (state === 'current') {
  console.log('dist/ was built from the sources as they are: not building again');
} else {
  console.log(`dist/ is ${state === 'missing' ? 'not built' : 'older than the sources'}: building`);
  process.exitCode = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), ...process.argv.slice(2)], { stdio: 'inherit' }).status ?? 1;
}
