// The HOST_NOT_ALLOWED refusal ends in an offline command for this very service (its node, its
// program, its data directory). The test runs that command exactly as printed, through a shell,
// and then signs in as the administrator it made: for dist/cli.js and for the one-file copy.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { offlineInstruction, shellWord, type ProcessFacts } from '../../src/cli/offline-command.js';
import { CLI_PATH, childEnv, httpCall, killAllChildren, removeTempDirs, REPO_ROOT, startServe, tempDir } from '../helpers/process.js';

const PASSWORD = 'first-admin-password-1';
const RUN_PREFIX = 'stop the service, then run: ';

async function refusalThenPrintedCommand(script: string | undefined): Promise<void> {
  // A data directory whose path needs quoting: the printed command must still work when pasted.
  const dataDir = join(await tempDir(), "data dir's");
  mkdirSync(dataDir, { mode: 0o700 });
  const options = script === undefined ? {} : { script };
  const first = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], options);
  let message: string;
  try {
    const res = await httpCall(first.port, {
      method: 'POST',
      path: '/api/auth/register',
      headers: { host: 'gatehouse.example.org' },
      body: { username: 'someone', password: PASSWORD, level: 'ADMINISTRATOR' },
    });
    assert.equal(res.status, 403, res.text);
    assert.equal((res.json as { code?: unknown }).code, 'HOST_NOT_ALLOWED');
    message = String((res.json as { message?: unknown }).message);
  } finally {
    assert.equal((await first.stop()).code, 0);
  }
  const at = message.indexOf(RUN_PREFIX);
  assert.ok(at >= 0, `the message gives a command: ${message}`);
  // Here the sandbox may itself be a container: the line for its own shell ends before the note.
  const command = message.slice(at + RUN_PREFIX.length).split(' (when the service is a container')[0] ?? '';
  assert.ok(command.startsWith(`${shellWord(process.execPath)} ${shellWord(script ?? CLI_PATH)} users add admin --level ADMINISTRATOR --data-dir `), command);

  // As printed, through a shell, from another directory; the password comes on the first line of stdin.
  const run = spawnSync('sh', ['-c', command], { cwd: REPO_ROOT, env: childEnv(), input: `${PASSWORD}\n`, encoding: 'utf8', timeout: 20_000 });
  assert.equal(run.status, 0, `the printed command failed: ${command}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);

  const second = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], options);
  try {
    const login = await httpCall(second.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } });
    assert.equal(login.status, 200, login.text);
    assert.deepEqual(login.json, { success: true, username: 'admin', level: 'ADMINISTRATOR' });
  } finally {
    assert.equal((await second.stop()).code, 0);
  }
}

describe('the HOST_NOT_ALLOWED refusal gives an offline command that works as printed', () => {
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('for dist/cli.js: stop the service, run the printed command, and the administrator it made signs in', () => refusalThenPrintedCommand(undefined));

  it('for the one-file build copied elsewhere: the command names that copy', async () => {
    const dir = await tempDir('gatehouse-one-file-');
    const script = join(dir, 'gatehouse.mjs');
    copyFileSync(join(REPO_ROOT, 'dist', 'gatehouse.mjs'), script);
    await refusalThenPrintedCommand(script);
  });
});

describe('offlineInstruction: where the service runs decides the command', () => {
  const base: ProcessFacts = { execPath: '/usr/bin/node', script: '/opt/gatehouse/dist/cli.js', env: {}, uid: 1000, userName: 'me', isInContainer: false };
  const args = ['users', 'add', 'admin', '--level', 'ADMINISTRATOR'];

  it('from a shell: node, the program and the data directory, nothing else', () => {
    assert.equal(offlineInstruction(base, '/srv/data', args), 'stop the service, then run: /usr/bin/node /opt/gatehouse/dist/cli.js users add admin --level ADMINISTRATOR --data-dir /srv/data');
  });

  it('under systemd as a system user: run as that user (the data directory must keep its owner)', () => {
    const facts = { ...base, env: { INVOCATION_ID: 'abc' }, uid: 998, userName: 'gatehouse' };
    assert.equal(offlineInstruction(facts, '/var/lib/gatehouse', args), 'stop the service, then run: sudo -u gatehouse /usr/bin/node /opt/gatehouse/dist/cli.js users add admin --level ADMINISTRATOR --data-dir /var/lib/gatehouse');
  });

  it('under systemd as root: no sudo', () => {
    const facts = { ...base, env: { INVOCATION_ID: 'abc' }, uid: 0, userName: 'root' };
    assert.ok(!offlineInstruction(facts, '/var/lib/gatehouse', args).includes('sudo'));
  });

  it('in a container: the line for its shell, then how to run it in a new container of the same image and volume', () => {
    const facts = { ...base, execPath: '/usr/local/bin/node', script: '/app/dist/cli.js', isInContainer: true };
    const line = '/usr/local/bin/node /app/dist/cli.js users add admin --level ADMINISTRATOR --data-dir /data';
    assert.equal(
      offlineInstruction(facts, '/data', args),
      `stop the service, then run: ${line} (when the service is a container of its own: stop it, and run that line in a new container of the same image with the same data volume, e.g. docker compose run --rm SERVICE ${line})`,
    );
  });

  for (const [text, word] of [
    ['/srv/gatehouse', '/srv/gatehouse'],
    ['/srv/data dir', "'/srv/data dir'"],
    ["it's", "'it'\\''s'"],
    ['$(reboot)', "'$(reboot)'"],
    ['a;b', "'a;b'"],
    ['', "''"],
  ] as const) {
    it(`shellWord(${JSON.stringify(text)}) is ${word}`, () => {
      assert.equal(shellWord(text), word);
      const echoed = spawnSync('sh', ['-c', `printf %s ${word}`], { encoding: 'utf8' });
      assert.equal(echoed.stdout, text, 'the shell reads it back unchanged');
    });
  }
});
