// Runs test files with node's test runner. Node 20's --test takes no globs, so the files are found
// here. The TypeScript of src/ and test/ is compiled once, up front, and the tests load it through
// scripts/test-loader.mjs rather than each test process starting tsx.
//   node scripts/run-tests.mjs                  every test/**/*.test.ts except test/suites/
//   node scripts/run-tests.mjs --suite NAME     test/suites/NAME/**/*.test.ts: suites that need
//                                               outside programs (nginx, Caddy, Chromium, root)
//   node scripts/run-tests.mjs FILE...          just these files
// The tests get a temp directory of their own (TMPDIR); whatever they leave in it fails the run,
// and the directory is removed either way. Files run as many at a time as the machine has cores:
// node's default keeps one core for its runner, which only waits, so on two cores one file ran at
// a time and a core sat idle whenever that file waited on a child (the built service, a browser,
// a container) or a timer. The files known to take longest start first (LONGEST_FIRST), the rest
// in path order: node starts files in the order given, and a long file started last would keep one
// worker busy while the other sits idle at the end. Tests that run many cells inside one test (the access matrix) tally them
// in a file of the runner's (test/helpers/tally.ts): their sum is printed after the test runner's
// own count of tests.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildPageScripts } from './build-page-scripts.mjs';
import { compileForTests } from './test-loader.mjs';

const root = new URL('..', import.meta.url).pathname;

// The slowest files of `npm test`, slowest first (their suites' durations in a full run, summed
// over both workers). A file listed here that no longer exists is only named in the output: the
// order is a matter of time, never of what runs.
const LONGEST_FIRST = [
  'test/attack/login-storm.test.ts',
  'test/cli/cli-users.test.ts',
  'test/unit/oidc-signing-keys.test.ts',
  'test/cli/oidc-commands.test.ts',
  'test/durability/crash.test.ts',
  'test/durability/lock.test.ts',
  'test/durability/recovery.test.ts',
  'test/build/ensure-built.test.ts',
  'test/cli/oidc-clients-edit.test.ts',
  'test/cli/cli-access.test.ts',
  'test/cli/doctor.test.ts',
  'test/durability/graceful-stop.test.ts',
  'test/cli/cli-serve.test.ts',
  'test/cli/docs-commands.test.ts',
];
const args = process.argv.slice(2);
const SUITES_DIR = join(root, 'test', 'suites');

function findTests(dir, skip) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === skip ? [] : findTests(path, skip);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

/** Prints the cells the tests tallied, by kind, apart from the tests. */
function printTally(file) {
  if (!existsSync(file)) return;
  const sums = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [kind, count] = line.split('\t');
    if (kind !== undefined && kind !== '' && /^\d+$/.test(count ?? '')) sums.set(kind, (sums.get(kind) ?? 0) + Number(count));
  }
  for (const [kind, sum] of sums) console.log(`${kind}: ${sum.toLocaleString('en')} cells (inside the tests counted above)`);
}

let files;
if (args[0] === '--suite') {
  const suite = args[1] ?? '';
  const dir = join(SUITES_DIR, suite);
  if (!/^[a-z0-9-]+$/.test(suite) || !existsSync(dir)) {
    console.error(`no test suite ${JSON.stringify(suite)} under test/suites`);
    process.exit(1);
  }
  files = findTests(dir, undefined);
} else {
  files = args.length > 0 ? args : findTests(join(root, 'test'), SUITES_DIR);
}
files.sort();
const rank = (file) => {
  const index = LONGEST_FIRST.indexOf(file);
  return index < 0 ? LONGEST_FIRST.length : index;
};
files.sort((a, b) => rank(a) - rank(b));
const gone = args.length === 0 ? LONGEST_FIRST.filter((file) => !existsSync(join(root, file))) : [];
if (gone.length > 0) console.log(`scripts/run-tests.mjs LONGEST_FIRST names files that are gone: ${gone.join(', ')}`);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// The pages' scripts as the sources are now: the server the tests start imports them.
await buildPageScripts(root);
const testTmp = mkdtempSync(join(tmpdir(), 'gatehouse-tests-'));
const tallyDir = mkdtempSync(join(tmpdir(), 'gatehouse-tally-'));
const tallyFile = join(tallyDir, 'cells');
const compiledDir = mkdtempSync(join(tmpdir(), 'gatehouse-compiled-'));
let status;
try {
  await compileForTests(compiledDir);
  const env = { ...process.env, TMPDIR: testTmp, GATEHOUSE_TEST_TALLY: tallyFile, GATEHOUSE_TEST_COMPILED: compiledDir };
  const loader = join(root, 'scripts', 'test-loader.mjs');
  status = spawnSync(process.execPath, ['--import', loader, `--test-concurrency=${availableParallelism()}`, '--test', ...files], { cwd: root, stdio: 'inherit', env }).status ?? 1;
  printTally(tallyFile);
  // tsx (which some tests start children with) keeps its compile cache in the temp directory
  // (tsx-UID): that one is not a test's.
  const left = readdirSync(testTmp).filter((name) => !/^tsx-\d+$/.test(name));
  if (left.length > 0) {
    console.error(`the tests left ${left.length} entries in their temp directory: ${left.sort().join(', ')}`);
    if (status === 0) status = 1;
  }
} finally {
  rmSync(testTmp, { recursive: true, force: true });
  rmSync(tallyDir, { recursive: true, force: true });
  rmSync(compiledDir, { recursive: true, force: true });
}
process.exit(status);
