// The passwords `gatehouse users add` and `users passwd` take, and the order of what `users add`
// says: at least 12 characters unless --min-password-length says otherwise (docs/configuration.md);
// the password is asked for only once the name is known to be free, and "added" follows the prompt
// on a line of its own, as a terminal shows stdout and stderr together.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, childEnv, CLI_PATH, killAllChildren, removeTempDirs, runCli, tempDir, type RunResult } from '../helpers/process.js';

function assertExit(result: RunResult, code: number, what: string): void {
  assert.equal(result.code, code, `${what} should exit ${code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

/** Runs the command with stdout and stderr on one pipe, in the order written, as a terminal shows them. */
function runMerged(args: readonly string[], stdin: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'exec "$@" 2>&1', 'sh', process.execPath, CLI_PATH, ...args], { env: childEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      output += text;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(stdin);
  });
}

describe('gatehouse users: the shortest password', () => {
  let dataDir = '';
  const users = (args: string[], stdin: string): Promise<RunResult> => runCli(['users', ...args, '--data-dir', dataDir], { stdin });

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('users add refuses 11 characters with the minimum in the message, and takes 12', async () => {
    const short = await users(['add', 'ann', '--level', 'ADMINISTRATOR', '--password-stdin'], 'eleven-char');
    assertExit(short, 2, 'users add with 11 characters');
    assert.match(short.stderr, /password: must be at least 12 characters/);
    assert.equal((await users(['list'], '')).stdout, '', 'no one was added');
    assertExit(await users(['add', 'ann', '--level', 'ADMINISTRATOR', '--password-stdin'], 'twelve-chars'), 0, 'users add with 12 characters');
  });

  it('users passwd refuses 11 characters and takes 12', async () => {
    const short = await users(['passwd', 'ann', '--password-stdin'], 'eleven-char');
    assertExit(short, 2, 'users passwd with 11 characters');
    assert.match(short.stderr, /password: must be at least 12 characters/);
    assertExit(await users(['passwd', 'ann', '--password-stdin'], 'twelve-chars'), 0, 'users passwd with 12 characters');
  });

  it('--min-password-length sets the minimum, lower or higher', async () => {
    assertExit(await users(['add', 'ben', '--level', 'USER', '--password-stdin', '--min-password-length', '8'], '8-chars!'), 0, 'users add with 8 of 8');
    const short = await users(['passwd', 'ben', '--password-stdin', '--min-password-length', '20'], 'nineteen-characters');
    assertExit(short, 2, 'users passwd with 19 of 20');
    assert.match(short.stderr, /at least 20 characters/);
  });

  it('users add asks for the password, then says "added" on a line of its own', async () => {
    const run = await runMerged(['users', 'add', 'cat', '--level', 'USER', '--data-dir', dataDir], 'a piped password\n');
    assert.equal(run.code, 0, run.output);
    assert.equal(run.output, 'New password: \nadded cat\n');
  });

  it('users add of a taken name says so before asking for a password', async () => {
    const run = await runMerged(['users', 'add', 'cat', '--level', 'USER', '--data-dir', dataDir], 'another password\n');
    assert.equal(run.code, 1, run.output);
    assert.doesNotMatch(run.output, /New password/);
    assert.match(run.output, /taken/);
  });
});
