// `gatehouse users add` takes the torrent client's settings (which hold its
// password) from a file or standard input, so they need not appear on the command line.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { verifyPassword } from '../../src/auth/password.js';
import { assertBuilt, removeTempDirs, runCli, tempDir, type RunResult } from '../helpers/process.js';

const CLIENT = { client: 'qBittorrent', type: 'web', version: 1, url: 'http://127.0.0.1:8080', username: 'qb', password: 'torrent-client-secret' };

interface StoredUser {
  readonly username: string;
  readonly passwordHash: string;
  readonly client: unknown;
}

describe('gatehouse users add with the client settings from a file or stdin', () => {
  let dataDir = '';
  let clientFile = '';
  const add = (args: string[], stdin?: string): Promise<RunResult> => runCli(['users', 'add', ...args, '--data-dir', dataDir, '--scrypt', '1024,8,1'], stdin === undefined ? {} : { stdin });
  const stored = (username: string): StoredUser | undefined =>
    (JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8')) as { users: StoredUser[] }).users.find((user) => user.username === username);
  const assertAdded = async (result: RunResult, username: string, password: string): Promise<void> => {
    assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    const user = stored(username);
    assert.ok(user !== undefined, `${username} was not stored`);
    assert.deepEqual(user.client, CLIENT);
    assert.equal(await verifyPassword(password, user.passwordHash), true, 'the password is the one given');
    assert.ok(!result.stdout.includes(CLIENT.password) && !result.stderr.includes(CLIENT.password), 'the client password is never printed');
  };
  const assertUsage = (result: RunResult, pattern: RegExp): void => {
    assert.equal(result.code, 2, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    assert.match(result.stderr, pattern);
  };

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
    clientFile = join(await tempDir(), 'client.json');
    writeFileSync(clientFile, JSON.stringify(CLIENT), { mode: 0o600 });
  });
  after(() => removeTempDirs());

  it('reads them from --client-file, with the password from --password-stdin', async () => {
    await assertAdded(await add(['from-file', '--level', 'USER', '--client-file', clientFile, '--password-stdin'], 'file-user-password\n'), 'from-file', 'file-user-password');
  });

  it('reads the password from the first line and the settings from the rest of stdin with --client-stdin', async () => {
    const input = `stdin-user-password\n${JSON.stringify(CLIENT, null, 2)}\n`;
    await assertAdded(await add(['from-stdin', '--level', 'ADMINISTRATOR', '--client-stdin'], input), 'from-stdin', 'stdin-user-password');
  });

  it('accepts a CRLF after the password line', async () => {
    await assertAdded(await add(['crlf', '--level', 'USER', '--client-stdin'], `crlf-password\r\n${JSON.stringify(CLIENT)}`), 'crlf', 'crlf-password');
  });

  it('still takes --client JSON', async () => {
    await assertAdded(await add(['from-argv', '--level', 'USER', '--client', JSON.stringify(CLIENT), '--password-stdin'], 'argv-password\n'), 'from-argv', 'argv-password');
  });

  it('refuses --client-stdin together with --password-stdin: one stdin cannot be both', async () => {
    assertUsage(await add(['both', '--level', 'USER', '--client-stdin', '--password-stdin'], `pw\n${JSON.stringify(CLIENT)}`), /--password-stdin/);
    assert.equal(stored('both'), undefined);
  });

  it('refuses two sources, naming the flags (none at all is an account without client settings)', async () => {
    assertUsage(await add(['two', '--level', 'USER', '--client-file', clientFile, '--client', JSON.stringify(CLIENT), '--password-stdin'], 'pw\n'), /--client and --client-file|--client-file and --client/);
  });

  it('refuses a missing file, a directory, and invalid JSON, with a usage error and nothing stored', async () => {
    assertUsage(await add(['missing', '--level', 'USER', '--client-file', join(dataDir, 'nope.json'), '--password-stdin'], 'pw\n'), /cannot be read \(ENOENT\)/);
    assertUsage(await add(['directory', '--level', 'USER', '--client-file', dataDir, '--password-stdin'], 'pw\n'), /not a regular file/);
    assertUsage(await add(['bad-json', '--level', 'USER', '--client-stdin'], 'pw\n{not json'), /not valid JSON/);
    assertUsage(await add(['no-newline', '--level', 'USER', '--client-stdin'], 'only-a-password'), /first line/);
    for (const name of ['missing', 'directory', 'bad-json', 'no-newline']) assert.equal(stored(name), undefined);
  });
});
