// The passwords `gatehouse users add` and `users passwd` take: at least 12 characters unless
// --min-password-length says otherwise (docs/configuration.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs, runCli, tempDir, type RunResult } from '../helpers/process.js';

function assertExit(result: RunResult, code: number, what: string): void {
  assert.equal(result.code, code, `${what} should exit ${code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
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
});
