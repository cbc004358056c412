// `gatehouse users` with names the API cannot create (".", "..") and names that would
// fool a terminal (escape characters). Runs the built CLI on stopped data directories.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { newSessionKey } from '../../src/auth/session-key.js';
import { assertBuilt, CLIENT_JSON, CLIENT_SETTINGS, removeTempDirs, runCli, tempDir, type RunResult } from '../helpers/process.js';

const CHEAP = { N: 1024, r: 8, p: 1 } as const;

/** Writes a users file as an older version could have, with these usernames (levels: first 10, others 5). */
async function writeUsersFile(dataDir: string, usernames: readonly string[]): Promise<void> {
  const passwordHash = await hashPassword('old-password', CHEAP);
  const users = usernames.map((username, index) => ({ username, level: index === 0 ? 10 : 5, passwordHash, client: CLIENT_SETTINGS, credentialsChangedAt: 1_700_000_000, sessionKey: newSessionKey() }));
  writeFileSync(join(dataDir, 'users.json'), JSON.stringify({ format: 1, users }), { mode: 0o600 });
}

function assertOk(result: RunResult, what: string): void {
  assert.equal(result.code, 0, `${what} should exit 0\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

describe('gatehouse users and the names "." and ".."', () => {
  let dataDir = '';
  const users = (args: string[], stdin?: string): Promise<RunResult> => runCli(['users', ...args, '--data-dir', dataDir, '--scrypt', '1024,8,1'], stdin === undefined ? {} : { stdin });

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
    await writeUsersFile(dataDir, ['admin', '.', '..']);
  });
  after(() => removeTempDirs());

  it('lists the users of an older file that holds "." and ".."', async () => {
    const result = await users(['list']);
    assertOk(result, 'users list');
    assert.deepEqual(result.stdout.split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0]).sort(), ['.', '..', 'admin']);
  });

  it('removes "..", and then "."', async () => {
    assertOk(await users(['remove', '..']), 'users remove ..');
    assertOk(await users(['remove', '.']), 'users remove .');
    const listed = await users(['list']);
    assert.deepEqual(listed.stdout.split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0]), ['admin']);
  });

  it('refuses to add ".." with a usage error that says why', async () => {
    const result = await users(['add', '..', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], 'a-password\n');
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /dot segment/);
  });
});

describe('gatehouse users list and names that would fool a terminal', () => {
  const SAMPLES: ReadonlyArray<[string, string, string]> = [
    ['a C1 control (CSI)', 'c1\u009b31m', 'c1\\u009b31m'],
    ['a right-to-left override', 'admin\u202egnp.exe', 'admin\\u202egnp.exe'],
    ['an isolate and a mark', 'x\u2067y\u200fz\u061c', 'x\\u2067y\\u200fz\\u061c'],
    ['line and paragraph separators', 'line\u2028para\u2029end', 'line\\u2028para\\u2029end'],
    ['a zero-width space (looks like admin)', 'ad\u200bmin', 'ad\\u200bmin'],
    ['a byte-order mark and a soft hyphen', '\ufeffad\u00admin', '\\ufeffad\\u00admin'],
    ['a Hangul filler', '\u3164admin', '\\u3164admin'],
  ];
  let dataDir = '';

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
    await writeUsersFile(dataDir, ['admin', ...SAMPLES.map(([, name]) => name)]);
  });
  after(() => removeTempDirs());

  it('prints each such character as \\uXXXX and the rest as it is', async () => {
    const result = await runCli(['users', 'list', '--data-dir', dataDir]);
    assertOk(result, 'users list');
    assert.ok(!/[\u007f-\u009f\u2028\u2029\p{Cf}\u115f\u1160\u3164\uffa0]/u.test(result.stdout), JSON.stringify(result.stdout));
    const names = result.stdout.split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0]);
    assert.deepEqual(names, ['admin', ...SAMPLES.map(([, , shown]) => shown)]);
  });

  it('escapes the name in what remove prints', async () => {
    const result = await runCli(['users', 'remove', 'admin\u202egnp.exe', '--data-dir', dataDir]);
    assertOk(result, 'users remove');
    assert.equal(result.stdout, 'removed admin\\u202egnp.exe\n');
  });
});

describe('gatehouse users add and names that look like an existing account\'s', () => {
  let dataDir = '';
  const add = (name: string): Promise<RunResult> =>
    runCli(['users', 'add', name, '--level', 'USER', '--password-stdin', '--data-dir', dataDir, '--scrypt', '1024,8,1'], { stdin: 'a-long-password\n' });

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
    // Made before look-alikes were refused: they stay as they are.
    await writeUsersFile(dataDir, ['admin', 'Admin']);
  });
  after(() => removeTempDirs());

  for (const [what, name] of [['other case', 'ADMIN'], ['a zero-width space', 'admin\u200b'], ['fullwidth letters', 'ａｄｍｉｎ']] as const) {
    it(`refuses a name that differs from "admin" only in ${what}, as a taken name, and adds nothing`, async () => {
      const result = await add(name);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /taken.*case, width or invisible characters/);
      const listed = await runCli(['users', 'list', '--data-dir', dataDir]);
      assert.deepEqual(listed.stdout.split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0]), ['admin', 'Admin']);
    });
  }

  it('adds a name that only resembles one (another letter)', async () => {
    assertOk(await add('admín'), 'users add admín');
    assertOk(await runCli(['users', 'remove', 'admín', '--data-dir', dataDir]), 'users remove');
  });
});
