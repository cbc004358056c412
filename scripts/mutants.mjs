// `npm run mutants`: the mutation check. Each mutation in scripts/mutations.mjs breaks one promise of
// SECURITY.md on purpose, in a copy of the code; the tests that SECURITY.md's row for that promise
// cites must then fail (the mutant is "killed"). A mutant the tests let through fails the run, by name.
//
//   node scripts/mutants.mjs                 every mutation but the extra ones, two at once
//   node scripts/mutants.mjs --all           the extra ones too
//   node scripts/mutants.mjs --only NAME...  the mutations whose names contain one of these words
//   node scripts/mutants.mjs --jobs N        N at once
//   node scripts/mutants.mjs --list          the mutations, and nothing run
//
// How: the repository is copied to a temp directory once and every .ts file of src/ and test/ is
// compiled there by esbuild (a .js beside each .ts, and dist/ as `npm run build` lays it out for the
// tests of the built command line), so no test pays for tsx. Each mutant replaces one exact text of one
// source file (the text must occur exactly once, so code that moved is an error here, not a mutant that
// silently mutates nothing), compiles that file again and runs only the cited tests, by file and by the
// test names the row gives. First, each set of cited tests runs once unmutated and must pass, or a
// "kill" would mean nothing. The mutations are checked against SECURITY.md: the row they name must cite
// every test file and test name the mutation runs.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { build, transform } from 'esbuild';
import { buildPageScripts } from './build-page-scripts.mjs';
import { MUTATIONS } from './mutations.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const RUN_TIMEOUT_MS = 180_000;
const TARGET = 'node20';

const args = process.argv.slice(2);
/** The words after `name` up to the next option; undefined without `name`. */
function option(name) {
  const index = args.indexOf(name);
  if (index < 0) return undefined;
  const values = [];
  for (const arg of args.slice(index + 1)) {
    if (arg.startsWith('--')) break;
    values.push(arg);
  }
  return values;
}
const jobs = Number(option('--jobs')?.[0] ?? 2);
const only = option('--only');
const isVerbose = args.includes('--verbose');

/** Stops the run with a message: a mutation that cannot be applied or checked is the script's error. */
function refuse(message) {
  console.error(`mutants: ${message}`);
  process.exit(2);
}

/** The rows of SECURITY.md's promise tables. */
function promiseRows() {
  return readFileSync(join(ROOT, 'SECURITY.md'), 'utf8').split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| ---'));
}

const patternOf = (name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '.*');

/** A mutation's edits, each with its file. */
function editsOf(mutation) {
  const edits = mutation.edits ?? [{ search: mutation.search, replace: mutation.replace }];
  return edits.map((edit) => ({ ...edit, file: edit.file ?? mutation.file }));
}

/** Checks every mutation before anything runs; the mutations chosen, each with its edits read. */
function checkedMutations() {
  const rows = promiseRows();
  const names = new Set();
  for (const mutation of MUTATIONS) {
    const { name, promise, tests } = mutation;
    if (typeof name !== 'string' || name === '' || names.has(name)) refuse(`a mutation without a name of its own: ${JSON.stringify(name)}`);
    names.add(name);
    for (const { file, search, replace } of editsOf(mutation)) {
      const path = join(ROOT, file);
      if (!file.startsWith('src/') || !file.endsWith('.ts') || !existsSync(path)) refuse(`"${name}": no file ${file} under src/`);
      if (typeof search !== 'string' || search === '' || typeof replace !== 'string' || search === replace) refuse(`"${name}": an edit needs a search text and another text to put there`);
      const count = readFileSync(path, 'utf8').split(search).length - 1;
      if (count !== 1) refuse(`"${name}": the search text occurs ${count} times in ${file}, not exactly once (did the code move?):\n  ${search}`);
    }
    const matching = rows.filter((row) => row.includes(promise));
    if (matching.length !== 1) refuse(`"${name}": ${matching.length} rows of SECURITY.md hold "${promise}", not exactly one`);
    const cited = matching[0].split(' | ').at(-1);
    if (!Array.isArray(tests) || tests.length === 0) refuse(`"${name}": no tests named`);
    for (const test of tests) {
      if (!existsSync(join(ROOT, test.file))) refuse(`"${name}": no test file ${test.file}`);
      if (!cited.includes(`\`${test.file}\``)) refuse(`"${name}": SECURITY.md's row "${promise}" does not cite ${test.file}`);
      for (const testName of test.names ?? []) {
        if (!cited.includes(testName)) refuse(`"${name}": SECURITY.md's row "${promise}" does not cite the test "${testName}"`);
      }
    }
  }
  const wanted = args.includes('--all') || only !== undefined ? MUTATIONS : MUTATIONS.filter((mutation) => mutation.extra !== true);
  const chosen = only === undefined ? wanted : wanted.filter((mutation) => only.some((word) => mutation.name.includes(word)));
  if (chosen.length === 0) refuse(`no mutation's name holds ${only.join(' or ')}`);
  return chosen;
}

/** The test run a mutation asks for: node --test over compiled files, by name where the row names tests. */
function selectionOf(mutation) {
  const files = mutation.tests.map((test) => test.file.replace(/\.ts$/, '.js'));
  const patterns = mutation.tests.flatMap((test) => test.names ?? []);
  // A file cited whole runs whole: its names would otherwise filter it out.
  const isWhole = mutation.tests.some((test) => (test.names ?? []).length === 0);
  const wholePatterns = isWhole ? [] : patterns.map((name) => `--test-name-pattern=${patternOf(name)}`);
  return { files, patterns: wholePatterns, key: JSON.stringify([files, wholePatterns]) };
}

function sourceFilesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFilesUnder(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const TSCONFIG_RAW = { compilerOptions: { useDefineForClassFields: true, verbatimModuleSyntax: false } };

/** A copy of the repository with every .ts of src/ and test/ compiled beside it, and dist/. */
async function compiledCopy(dir) {
  cpSync(ROOT, dir, {
    recursive: true,
    filter: (source) => !['.git', 'node_modules', 'dist'].includes(relative(ROOT, source).split('/')[0] ?? ''),
  });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const common = { format: 'esm', platform: 'node', target: TARGET, bundle: false, logLevel: 'error', tsconfigRaw: TSCONFIG_RAW };
  const sources = sourceFilesUnder(join(dir, 'src'));
  await build({ ...common, entryPoints: [...sources, ...sourceFilesUnder(join(dir, 'test'))], outdir: dir, outbase: dir });
  await build({ ...common, entryPoints: sources, outdir: join(dir, 'dist'), outbase: join(dir, 'src') });
  // The pages' scripts, bundled (src/pages/built-scripts.js and its copy in dist/).
  await buildPageScripts(dir, { toDist: true });
}

/** Runs the selection in `dir`; resolves with the exit status and the counts node's TAP summary gave. */
function runTests(dir, selection, scratch) {
  return new Promise((resolve) => {
    const started = Date.now();
    const testTmp = mkdtempSync(join(scratch, 'tmp-'));
    // As scripts/run-tests.mjs runs them: the files of one run at once, up to the machine's cores.
    const child = spawn(process.execPath, ['--test', `--test-concurrency=${availableParallelism()}`, '--test-reporter=tap', ...selection.patterns, ...selection.files], {
      cwd: dir,
      env: { ...process.env, TMPDIR: testTmp, GATEHOUSE_MATRIX_FAIL_FAST: '1', GATEHOUSE_TEST_TALLY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone already */ }
    }, RUN_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(testTmp, { recursive: true, force: true });
      const count = (label) => Number(output.match(new RegExp(`^# ${label} (\\d+)$`, 'm'))?.[1] ?? 0);
      resolve({ code: code ?? 1, signal, pass: count('pass'), fail: count('fail'), seconds: (Date.now() - started) / 1000, output });
    });
  });
}

/** Applies the mutation to the compiled copy in `dir`; gives back a function that undoes it. */
async function mutate(dir, mutation) {
  const texts = new Map();
  for (const { file, search, replace } of editsOf(mutation)) {
    const text = texts.get(file) ?? readFileSync(join(ROOT, file), 'utf8');
    const at = text.indexOf(search);
    texts.set(file, text.slice(0, at) + replace + text.slice(at + search.length));
  }
  const undo = [];
  for (const [file, text] of texts) {
    let code;
    try {
      code = (await transform(text, { loader: 'ts', format: 'esm', target: TARGET, tsconfigRaw: TSCONFIG_RAW })).code;
    } catch (error) {
      refuse(`"${mutation.name}" does not compile: ${error.message}`);
    }
    // The file as the tests import it (src/) and as the built command line runs it (dist/).
    const js = file.replace(/\.ts$/, '.js');
    for (const target of [js, join('dist', js.slice('src/'.length))]) {
      const original = readFileSync(join(dir, target));
      writeFileSync(join(dir, target), code);
      undo.push(() => writeFileSync(join(dir, target), original));
    }
  }
  return () => undo.forEach((step) => step());
}

/** Test files whose run takes far longer than the rest. */
const isSlow = (file) => file.includes('access-matrix');

const seconds = (value) => `${value.toFixed(1).padStart(5)}s`;

async function main() {
  const chosen = checkedMutations();
  if (args.includes('--list')) {
    for (const mutation of chosen) {
      const files = [...new Set(editsOf(mutation).map((edit) => edit.file))];
      console.log(`${mutation.name}\n    ${files.join(', ')}; ${mutation.tests.map((test) => test.file).join(', ')}`);
    }
    return 0;
  }
  const started = Date.now();
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-mutants-'));
  try {
    const base = join(scratch, 'copy-0');
    await compiledCopy(base);
    const copies = [base];
    for (let i = 1; i < jobs; i++) {
      const copy = join(scratch, `copy-${i}`);
      cpSync(base, copy, { recursive: true, verbatimSymlinks: true });
      copies.push(copy);
    }
    console.log(`compiled a copy of src/ and test/ in ${seconds((Date.now() - started) / 1000).trim()}; ${chosen.length} mutants, ${jobs} at once`);

    // The unmutated runs first: each cited test file, with every test any mutation runs of it, must
    // pass before any kill counts. (A mutation's tests that match nothing pass on its mutant: a survivor.)
    const byFile = new Map();
    for (const mutation of chosen) {
      for (const test of mutation.tests) {
        const entry = byFile.get(test.file) ?? { names: new Set(), isWhole: false, mutations: [] };
        if ((test.names ?? []).length === 0) entry.isWhole = true;
        for (const name of test.names ?? []) entry.names.add(name);
        entry.mutations.push(mutation.name);
        byFile.set(test.file, entry);
      }
    }
    const unmutated = [...byFile].map(([file, { names, isWhole, mutations }]) => ({
      kind: 'unmutated',
      mutations,
      selection: selectionOf({ tests: [{ file, names: isWhole ? [] : [...names] }] }),
    }));
    // The longest runs first (the access matrix's), so that the runs at once end together; a mutant's
    // kill counts only once every unmutated run has passed (checked at the end).
    const mutants = chosen.map((mutation) => ({ kind: 'mutant', selection: selectionOf(mutation), mutation }));
    const isSlowTask = (task) => task.selection.files.some(isSlow);
    const tasks = [...unmutated, ...mutants].filter(isSlowTask).concat([...unmutated, ...mutants].filter((task) => !isSlowTask(task)));
    const broken = [];
    const survivors = [];
    let killed = 0;
    let next = 0;
    const worker = async (dir) => {
      while (next < tasks.length) {
        const task = tasks[next++];
        if (task.kind === 'unmutated') {
          const result = await runTests(dir, task.selection, scratch);
          if (result.code !== 0 || result.fail > 0 || result.pass === 0) {
            broken.push(`the tests of ${task.mutations.join(', ')} ${result.pass === 0 ? 'ran no test' : 'fail'} on the unmutated code:\n${result.output.slice(-3000)}`);
          }
          if (isVerbose) console.log(`unmutated ${seconds(result.seconds)}  ${task.selection.files.join(' ')}`);
          continue;
        }
        if (broken.length > 0) return;
        const undo = await mutate(dir, task.mutation);
        const result = await runTests(dir, task.selection, scratch);
        undo();
        if (result.code !== 0) {
          killed += 1;
          console.log(`killed   ${seconds(result.seconds)}  ${task.mutation.name}`);
        } else {
          survivors.push(task.mutation);
          console.log(`SURVIVED ${seconds(result.seconds)}  ${task.mutation.name} (${result.pass} tests passed)`);
        }
      }
    };
    await Promise.all(copies.map(worker));
    const took = (Date.now() - started) / 1000;
    if (broken.length > 0) {
      console.error(broken.join('\n\n'));
      return 1;
    }
    console.log(`${killed}/${chosen.length} mutants killed in ${Math.floor(took / 60)} min ${Math.round(took % 60)} s (first, ${unmutated.length} cited test files passed unmutated)`);
    for (const mutation of survivors) {
      console.error(`survived: ${mutation.name}: SECURITY.md "${mutation.promise}" holds, by its cited tests, with ${editsOf(mutation).map((edit) => edit.file).join(', ')} broken`);
    }
    return survivors.length === 0 ? 0 : 1;
  } finally {
    if (!args.includes('--keep')) rmSync(scratch, { recursive: true, force: true });
    else console.log(`kept ${scratch}`);
  }
}

process.exitCode = await main();
