// Bundles the command line into one self-contained file, dist/gatehouse.mjs: `node gatehouse.mjs
// serve` runs on a host with Node 20 and nothing else (no node_modules, no package.json, no other
// dist files). Gatehouse has no runtime dependencies, so the bundle is our own code and Node's
// built-in modules; this script refuses to write it if anything else would be inside.
// esbuild is the one tsx already installs, pinned to the same version (package.json).
import { build } from 'esbuild';
import { chmod, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, relative, sep } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const outfile = join(root, 'dist', 'gatehouse.mjs');
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/cli.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Readable, so what runs can be read: no minifying, no source map to ship beside it.
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  define: { GATEHOUSE_BUNDLED_VERSION: JSON.stringify(String(manifest.version)) },
  metafile: true,
  logLevel: 'warning',
});

// Everything inside comes from src/; everything left outside is a built-in module of Node.
const builtins = new Set(builtinModules);
const problems = [];
for (const input of Object.keys(result.metafile.inputs)) {
  if (!input.startsWith(`src${sep}`) && !input.startsWith('src/')) problems.push(`bundled from outside src/: ${input}`);
}
for (const output of Object.values(result.metafile.outputs)) {
  for (const { path } of output.imports) {
    const name = path.startsWith('node:') ? path.slice('node:'.length) : path;
    if (!builtins.has(name)) problems.push(`imports something other than a Node built-in: ${path}`);
  }
}
if (problems.length > 0) {
  console.error(`build-single-file: refused:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
await chmod(outfile, 0o755);
const bytes = result.metafile.outputs[relative(root, outfile)]?.bytes ?? 0;
console.log(`${relative(root, outfile)}: ${Math.round(bytes / 1024)} KiB, ${Object.keys(result.metafile.inputs).length} source files`);
