// What dist/ was built from. `npm run build` (scripts/build.mjs) writes dist/.build-stamp last,
// holding a hash of every file the build reads; a dist/ whose stamp does not match the files as
// they are now is stale, and nothing runs it (scripts/ensure-built.mjs builds instead, and the
// tests' helpers refuse it). A hash, not times: a checkout or a rebase sets every file's time.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Written by the build from src/ (scripts/build-page-scripts.mjs): an output, not an input. */
const BUILT_OUTPUTS = new Set(['src/pages/built-scripts.js']);

/**
 * Every file or folder the build reads, from the repository's top: src/, the package files,
 * every tsconfig*.json and every scripts/build*.mjs, so that a new build step named so, or a
 * tsconfig for it, counts without a change here. A step that reads a file elsewhere adds it to
 * this list, or a change to that file would leave dist/ looking current.
 */
export function buildInputs(root) {
  const named = (dir, pattern) => readdirSync(join(root, dir)).filter((name) => pattern.test(name)).map((name) => (dir === '.' ? name : `${dir}/${name}`));
  return ['src', 'package.json', 'package-lock.json', ...named('.', /^tsconfig.*\.json$/), ...named('scripts', /^build.*\.mjs$/)].sort();
}

export const STAMP_PATH = join('dist', '.build-stamp');

function filesUnder(root, path) {
  if (BUILT_OUTPUTS.has(path)) return [];
  if (!statSync(join(root, path)).isDirectory()) return [path];
  return readdirSync(join(root, path)).flatMap((name) => filesUnder(root, `${path}/${name}`));
}

/** The hash of the build's inputs under `root`: each file's path and bytes, in path order. */
export function sourcesHash(root) {
  const hash = createHash('sha256');
  const files = buildInputs(root).flatMap((input) => filesUnder(root, input)).sort();
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
