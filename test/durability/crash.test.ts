// A short run of scripts/crash-test.mjs: the built service is SIGKILLed at random
// moments under concurrent writes and restarted on the same data directory; nothing answered
// 200 may be lost and the users file may never be unusable. `npm run crash-test` runs 300 cycles.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assertBuilt, REPO_ROOT } from '../helpers/process.js';

const CYCLES = 30;

function runScript(args: readonly string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'scripts', 'crash-test.mjs'), ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the crash test did not finish within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('crash test (SIGKILL under concurrent writes, restart, compare with what was acknowledged)', () => {
  it(`loses nothing acknowledged and never leaves a corrupt users file over ${CYCLES} kills`, { timeout: 120_000 }, async () => {
    assertBuilt();
    const seed = Math.floor(Math.random() * 2 ** 31);
    const { code, output } = await runScript(['--cycles', String(CYCLES), '--seed', String(seed)], 110_000);
    const figures = /^(\d+) cycles, (\d+) lost, (\d+) corrupt$/m.exec(output);
    assert.ok(figures !== null, `no figure line (seed ${seed}):\n${output}`);
    assert.deepEqual(
      { cycles: Number(figures[1]), lost: Number(figures[2]), corrupt: Number(figures[3]) },
      { cycles: CYCLES, lost: 0, corrupt: 0 },
      `seed ${seed}:\n${output}`,
    );
    assert.doesNotMatch(output, /FAIL/, `seed ${seed}:\n${output}`);
    assert.equal(code, 0, `seed ${seed}:\n${output}`);
  });
});
