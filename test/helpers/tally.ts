// Tests that run many cells inside one test (the access matrix) report their number apart from the
// tests': as a diagnostic of the test (node:test prints it with the test), and, when the test runner
// asks (scripts/run-tests.mjs sets GATEHOUSE_TEST_TALLY to a file outside the tests' temp directory),
// as a line in that file, which the runner sums and prints after the tests' own count.
import { appendFileSync } from 'node:fs';
import type { TestContext } from 'node:test';

/** Reports that `count` cells of `label` ran in this test. */
export function tallyCells(t: TestContext, label: string, count: number): void {
  t.diagnostic(`access matrix (${label}): ${count} ${count === 1 ? 'cell' : 'cells'}`);
  const file = process.env['GATEHOUSE_TEST_TALLY'];
  if (file !== undefined && file !== '') appendFileSync(file, `access matrix\t${count}\n`);
}
