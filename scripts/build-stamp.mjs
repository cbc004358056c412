// What dist/ was built from. `npm run build` (scripts/build.mjs) writes dist/.build-stamp last,
// holding a hash of every file the build reads; a dist/ whose stamp does not match the files as
// they are now is stale, and nothing runs it (scripts/ensure-built.mjs builds instead, and the
// tests' helpers refuse it). A hash, not times: a checkout or a rebase sets every file's time.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every file or folder the build reads, from the repository's top. A build step that reads a
 * file elsewhere adds it here, or a change to that file would leave dist/ looking current.
 */
export const BUILD_INPUTS = [
  'src',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.mjs',
  'scripts/build-stamp.mjs',
  'scripts/build-single-file.mjs',
];

export const STAMP_PATH = join('dist', '.build-stamp');

function filesUnder(root, path) {
  if (!statSync(join(root, path)).isDirectory()) return [path];
  return readdirSync(join(root, path)).flatMap((name) => filesUnder(root, `${path}/${name}`));
}

/** The hash of the build's inputs under `root`: each file's path and bytes, in path order. */
export function sourcesHash(root) {
  const hash = createHash('sha256');
  const files = BUILD_INPUTS.flatMap((input) => filesUnder(root, input)).sort();
  for (const file of files) {
    const bytes = readFileSync(join(root, file));
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest('hex');
}

/** 'current' when dist/ was built from the inputs as they are now; 'missing' or 'stale' otherwise. */
export function buildState(root) {
  let stamp;
  try {
    stamp = readFileSync(join(root, STAMP_PATH), 'utf8').trim();
  } catch {
    return 'missing';
  }
  return stamp === sourcesHash(root) ? 'current' : 'stale';
}
