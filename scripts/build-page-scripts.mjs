// The pages' browser code: every src/**/browser/*.entry.ts bundled by esbuild into one classic
// script (an IIFE in strict mode, ES2017, not minified), and its CSP hash computed here, at build time. The scripts
// and hashes go into src/pages/built-scripts.js (not in git; src/pages/built-scripts.d.ts says its
// shape and names every script), which the server imports: tsx runs it from src/ in the tests, tsc's
// dist/ gets a copy, and the one-file build bundles it. A script is the same bytes on every server,
// so nothing per deployment is inside: a page passes such values as JSON data (pages/shell.ts).
//   node scripts/build-page-scripts.mjs [--dist]   --dist: also dist/pages/built-scripts.js
// scripts/build.mjs runs it first; scripts/run-tests.mjs runs it before the tests (it takes well
// under a second), so tests run through tsx always get the scripts as the sources are now.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

/** The file the server imports, relative to the repository's top; sourcesHash leaves it out. */
export const BUILT_SCRIPTS_PATH = 'src/pages/built-scripts.js';
const DECLARATION_PATH = 'src/pages/built-scripts.d.ts';

function entriesUnder(root, dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entriesUnder(root, path);
    return path.includes('/browser/') && entry.name.endsWith('.entry.ts') ? [path] : [];
  });
}

/** A script's name: its path under src/ without browser/ and .entry.ts (src/pages/browser/sign-in.entry.ts: pages/sign-in). */
const nameOf = (entry) => entry.slice('src/'.length).replace('/browser/', '/').replace(/\.entry\.ts$/, '');

/** The names src/pages/built-scripts.d.ts declares, in its ScriptName union. */
function declaredNames(root) {
  const text = readFileSync(join(root, DECLARATION_PATH), 'utf8');
  const union = /type ScriptName =([^;]*);/.exec(text)?.[1] ?? '';
  return [...union.matchAll(/'([^']+)'/g)].map((match) => match[1]).sort();
}

/** Bundles every entry under `root` and writes the module; returns the names. Throws on any problem. */
export async function buildPageScripts(root, { toDist = false } = {}) {
  const entries = entriesUnder(root, 'src').sort();
  const names = entries.map(nameOf);
  const declared = declaredNames(root);
  if (JSON.stringify(names) !== JSON.stringify(declared)) {
    throw new Error(`the scripts found (${names.join(', ')}) are not the ones ${DECLARATION_PATH} declares (${declared.join(', ')})`);
  }
  const scripts = {};
  for (const [index, entry] of entries.entries()) {
    const result = await build({
      absWorkingDir: root,
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      target: 'es2017',
      minify: false,
      sourcemap: false,
      legalComments: 'none',
      charset: 'utf8',
      metafile: true,
      logLevel: 'warning',
    });
    const code = result.outputFiles[0]?.text ?? '';
    const problems = [];
    for (const input of Object.keys(result.metafile.inputs)) {
      if (!input.startsWith('src/')) problems.push(`bundles a file from outside src/: ${input}`);
    }
    // Inside <script>, these would end the element or start a comment the parser treats specially.
    if (/<\/script|<!--|<script/i.test(code)) problems.push('holds </script, <script or <!--');
    if (problems.length > 0) throw new Error(`${entry}: ${problems.join('; ')}`);
    const name = names[index];
    scripts[name] = { code, hash: `sha256-${createHash('sha256').update(code, 'utf8').digest('base64')}` };
  }
  const lines = Object.entries(scripts).map(([name, { code, hash }]) =>
    `  ${JSON.stringify(name)}: Object.freeze({ hash: ${JSON.stringify(hash)}, code: ${JSON.stringify(code)} }),`);
  const module = `// Written by scripts/build-page-scripts.mjs from src/**/browser/*.entry.ts: not in git, do not edit.
export const BUILT_SCRIPTS = Object.freeze({
${lines.join('\n')}
});
`;
  const targets = [BUILT_SCRIPTS_PATH, ...(toDist ? [`dist/${BUILT_SCRIPTS_PATH.slice('src/'.length)}`] : [])];
  for (const target of targets) {
    mkdirSync(dirname(join(root, target)), { recursive: true });
    // Unchanged output is not written again: a test run beside another (CI runs the containers
    // suite beside the others) must never see the file half-written while a server imports it.
    const path = join(root, target);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== module) writeFileSync(path, module);
  }
  return names;
}

if (process.argv[1] !== undefined && relative(process.argv[1], new URL(import.meta.url).pathname) === '') {
  const root = new URL('..', import.meta.url).pathname;
  try {
    const names = await buildPageScripts(root, { toDist: process.argv.includes('--dist') });
    console.log(`${BUILT_SCRIPTS_PATH}: ${names.length} page scripts`);
  } catch (error) {
    console.error(`build-page-scripts: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
