// The sizes of src/, folder by folder (SECURITY.md's reading list, `npm run size`), and what a
// deployment loads and runs, counted from the imports rather than named: the files `gatehouse serve`
// loads are those the command line imports (importedFiles). Which folder is the core's and which a
// feature's is scripts/borders.mjs's; test/unit/sizes.test.ts holds the limit on a file's size.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { COMPOSITION, FEATURES, FILE_LIMIT, partOf, sourceFiles } from './borders.mjs';

export { FILE_LIMIT, sourceFiles };

/**
 * Where a deployment's code is counted from: the command line (`gatehouse serve` loads every file it
 * imports, whatever the command) and the service with the command that runs it (src/server.ts and
 * src/cli/serve.ts: the settings, the logger, the core and every feature, with everything they import).
 */
export const ENTRIES = Object.freeze({ loaded: ['src/cli.ts'], service: ['src/cli/serve.ts', 'src/server.ts'] });

/** What runs nothing without its setting, though `serve` loads it: its start returns at once and its routes answer 404. */
export const OFF_BY_DEFAULT = Object.freeze([
  ...FEATURES.filter((feature) => feature.offUnless !== undefined).map(({ folder, offUnless }) => ({ path: folder, offUnless })),
  { path: 'src/auth/revocations.ts', offUnless: '--revoke-on-logout' },
]);

/**
 * The files under src/ that `entries` import, directly or not, as esbuild's bundler follows them for
 * the one-file build (scripts/build-single-file.mjs): imports of types only are erased and load
 * nothing. src/ has no dynamic import (test/unit/sizes.test.ts), so these are the files Node loads.
 */
export function importedFiles(root, entries) {
  const { metafile } = buildSync({
    absWorkingDir: root, entryPoints: [...entries], bundle: true, write: false, metafile: true,
    platform: 'node', format: 'esm', packages: 'external', logLevel: 'error', outdir: 'out',
  });
  return Object.keys(metafile.inputs).filter((file) => file.startsWith('src/')).sort();
}

/** Lines holding anything but white space. */
export function nonBlankLines(text) {
  return text.split('\n').filter((line) => line.trim() !== '').length;
}

/** The row `file` is counted in: `composition`, `src/*.ts` (the core's files at the top), or its folder under src/. */
export function folderOf(file) {
  if (COMPOSITION.includes(file)) return 'composition';
  const rest = file.slice('src/'.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? 'src/*.ts' : `src/${rest.slice(0, slash + 1)}`;
}

const sum = (files) => files.reduce((total, { lines }) => total + lines, 0);

/**
 * The sizes of the repository at `root`: every folder with its part (core, feature, composition), its
 * files and their non-blank lines (and how many the serve command imports); and what a deployment
 * loads (`loaded`), what of that the service can run (`service`), and what it runs with no settings
 * (`byDefault`: the service less what is off by default).
 */
export function measure(root) {
  const files = sourceFiles(root).map((file) => ({ file, lines: nonBlankLines(readFileSync(join(root, file), 'utf8')) }));
  const service = new Set(importedFiles(root, ENTRIES.service));
  const loaded = new Set(importedFiles(root, ENTRIES.loaded));
  const names = [...new Set(files.map(({ file }) => folderOf(file)))].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const folders = names.map((name) => {
    const own = files.filter(({ file }) => folderOf(file) === name);
    const part = name === 'composition' ? 'composition' : partOf(own[0]?.file ?? '') === 'core' ? 'core' : 'feature';
    const off = OFF_BY_DEFAULT.find(({ path }) => path === name);
    return { name, part, offUnless: off?.offUnless, lines: sum(own), serviceLines: sum(own.filter(({ file }) => service.has(file))), files: own };
  });
  const part = (isIn) => {
    const chosen = files.filter(({ file }) => isIn(file));
    return { files: chosen.length, lines: sum(chosen) };
  };
  const isOffByDefault = (file) => OFF_BY_DEFAULT.some(({ path }) => (path.endsWith('/') ? file.startsWith(path) : file === path));
  return {
    folders,
    total: sum(files),
    files: files.length,
    deployment: {
      loaded: part((file) => loaded.has(file)),
      service: part((file) => service.has(file)),
      byDefault: part((file) => service.has(file) && !isOffByDefault(file)),
    },
  };
}

/** The core's folders first, then the features', then the composition. */
function rank(name) {
  if (name === 'composition') return 2;
  return FEATURES.some(({ folder }) => folder === name) ? 1 : 0;
}
