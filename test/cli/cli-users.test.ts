// Offline administration end to end: `users` and `secret rotate` on a stopped data directory,
// checked by starting `serve` on it and talking HTTP. Passwords only ever travel on stdin.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, CLI_SECRET, CLIENT_JSON, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, runCli, startServe, tempDir, type RunResult, type ServeProcess } from '../helpers/process.js';

const ALICE_FIRST = 'alice-first-password';
const ALICE_SECOND = 'alice-second-password';
const BOB_PASSWORD = 'bob-password-1';

function assertOk(result: RunResult, what: string): void {
  assert.equal(result.code, 0, `${what} should exit 0\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

function assertExit(result: RunResult, code: number, what: string): void {
  assert.equal(result.code, code, `${what} should exit ${code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  assert.notEqual(result.stderr.trim(), '', `${what} should explain itself on stderr`);
}

async function login(server: ServeProcess, username: string, password: string): Promise<number> {
  const res = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username, password } });
  return res.status;
}

function listed(result: RunResult): string[] {
  return result.stdout.split('\n').filter((line) => line !== '');
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('gatehouse users on a stopped data directory', () => {
  let dataDir = '';
  const users = (args: string[], stdin?: string | Buffer): Promise<RunResult> => runCli(['users', ...args, '--data-dir', dataDir], stdin === undefined ? {} : { stdin });

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('users add with --password-stdin adds an administrator, reading the password from stdin', async () => {
    const result = await users(['add', 'alice', '--level', 'ADMINISTRATOR', '--client', CLIENT_JSON, '--password-stdin'], `${ALICE_FIRST}\n`);
    assertOk(result, 'users add');
    assert.match(result.stdout, /alice/);
    assert.ok(!result.stdout.includes(ALICE_FIRST) && !result.stderr.includes(ALICE_FIRST), 'the password is never printed');
    for (const name of readdirSync(dataDir)) assert.equal(modeOf(join(dataDir, name)), 0o600, `${name} should be 0600`);
    assert.equal(modeOf(dataDir), 0o700);
    const stored = readFileSync(join(dataDir, 'users.json'), 'utf8');
    assert.ok(!stored.includes(ALICE_FIRST), 'the store holds a hash, not the password');
  });

  it('users list shows the added user and her level', async () => {
    const result = await users(['list']);
    assertOk(result, 'users list');
    assert.deepEqual(listed(result), ['alice\tADMINISTRATOR']);
  });

  it('serve on that data directory logs the user in over HTTP with the password given on stdin', async () => {
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    try {
      const res = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'alice', password: ALICE_FIRST } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { success: true, username: 'alice', level: 'ADMINISTRATOR' });
      assert.equal(await login(server, 'alice', `${ALICE_FIRST}\n`), 401, 'the trailing newline from stdin is not part of the password');
      assert.equal(await login(server, 'alice', 'wrong'), 401);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  it('users passwd without --password-stdin reads the first line of piped stdin; the new password works and the old one does not', async () => {
    const result = await users(['passwd', 'alice'], `${ALICE_SECOND}\nignored second line\n`);
    assertOk(result, 'users passwd');
    assert.match(result.stderr, /password/i, 'the prompt goes to stderr');
    assert.ok(!result.stdout.includes(ALICE_SECOND) && !result.stderr.includes(ALICE_SECOND), 'the password is never echoed');
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    try {
      assert.equal(await login(server, 'alice', ALICE_SECOND), 200);
      assert.equal(await login(server, 'alice', ALICE_FIRST), 401);
    } finally {
      await server.stop();
    }
  });

  it('users passwd with --password-stdin and an empty password exits 2 and changes nothing', async () => {
    const before = readFileSync(join(dataDir, 'users.json'), 'utf8');
    const result = await users(['passwd', 'alice', '--password-stdin'], '');
    assertExit(result, 2, 'an empty password');
    assert.equal(readFileSync(join(dataDir, 'users.json'), 'utf8'), before);
  });

  // Over HTTP such bytes are refused; read leniently they became U+FFFD, a password other than
  // the one typed (and the same as for any other invalid bytes in that place).
  for (const [how, args] of [['with --password-stdin', ['--password-stdin']], ['from a piped line', []]] as const) {
    it(`users passwd refuses a password that is not valid UTF-8 ${how}: exit 2, nothing changed`, async () => {
      const before = readFileSync(join(dataDir, 'users.json'), 'utf8');
      const result = await users(['passwd', 'alice', ...args], Buffer.from([0x70, 0x77, 0xff, 0xfe, 0x0a]));
      assertExit(result, 2, 'a password that is not UTF-8');
      assert.match(result.stderr, /UTF-8/);
      assert.equal(readFileSync(join(dataDir, 'users.json'), 'utf8'), before);
    });
  }

  // The service's settings are not the offline commands' business: a bad GATEHOUSE_PORT in the
  // environment of a box where the service runs must not stop `users list`.
  it('users list ignores settings only the service reads, even invalid ones', async () => {
    const result = await runCli(['users', 'list', '--data-dir', dataDir], { env: { GATEHOUSE_PORT: 'http', GATEHOUSE_HOST: '', GATEHOUSE_LOG_LEVEL: 'loud' } });
    assertOk(result, 'users list with service-only settings set badly');
    assert.ok(listed(result).some((line) => line.startsWith('alice\t')), result.stdout);
  });

  it('users set-level raises and lowers a level, accepting names and numbers', async () => {
    assertOk(await users(['add', 'bob', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], BOB_PASSWORD), 'users add bob');
    assert.deepEqual(listed(await users(['list'])).sort(), ['alice\tADMINISTRATOR', 'bob\tUSER']);
    assertOk(await users(['set-level', 'bob', 'ADMINISTRATOR']), 'users set-level bob ADMINISTRATOR');
    assert.deepEqual(listed(await users(['list'])).sort(), ['alice\tADMINISTRATOR', 'bob\tADMINISTRATOR']);
    assertOk(await users(['set-level', 'alice', '5']), 'users set-level alice 5');
    assert.deepEqual(listed(await users(['list'])).sort(), ['alice\t5', 'bob\tADMINISTRATOR']);
    assertOk(await users(['set-level', 'alice', 'ADMINISTRATOR']), 'users set-level alice ADMINISTRATOR');
  });

  it('users remove deletes a user, and the user can no longer log in', async () => {
    const result = await users(['remove', 'alice']);
    assertOk(result, 'users remove alice');
    assert.deepEqual(listed(await users(['list'])), ['bob\tADMINISTRATOR']);
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    try {
      assert.equal(await login(server, 'alice', ALICE_SECOND), 401);
      assert.equal(await login(server, 'bob', BOB_PASSWORD), 200);
    } finally {
      await server.stop();
    }
  });

  it('removing or demoting the last administrator exits 1 with a message, and changes nothing', async () => {
    const remove = await users(['remove', 'bob']);
    assertExit(remove, 1, 'users remove of the last administrator');
    assert.match(remove.stderr, /administrator/i);
    const demote = await users(['set-level', 'bob', 'USER']);
    assertExit(demote, 1, 'users set-level of the last administrator to USER');
    assert.match(demote.stderr, /administrator/i);
    assert.deepEqual(listed(await users(['list'])), ['bob\tADMINISTRATOR']);
  });

  const usageErrors: Array<{ what: string; args: string[]; stdin?: string; mention: RegExp }> = [
    { what: 'a bad --level', args: ['add', 'carol', '--level', 'ROOT', '--client', CLIENT_JSON, '--password-stdin'], stdin: 'carol-pass', mention: /level/i },
    { what: 'a bad level on set-level', args: ['set-level', 'bob', 'ROOT'], mention: /level/i },
    { what: 'a username with a control character', args: ['add', 'bad\u0001name', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], stdin: 'carol-pass', mention: /control/i },
    { what: '--client that is not JSON', args: ['add', 'carol', '--level', 'USER', '--client', '{not json', '--password-stdin'], stdin: 'carol-pass', mention: /client/i },
    { what: '--client with an unknown client kind', args: ['add', 'carol', '--level', 'USER', '--client', '{"client":"uTorrent","type":"socket","version":1,"socket":"/s"}', '--password-stdin'], stdin: 'carol-pass', mention: /client/i },
    { what: 'a missing --level', args: ['add', 'carol', '--client', CLIENT_JSON, '--password-stdin'], stdin: 'carol-pass', mention: /--level/ },
    { what: 'a missing NAME', args: ['add', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], stdin: 'carol-pass', mention: /argument/i },
    { what: 'a password shorter than --min-password-length', args: ['add', 'carol', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin', '--min-password-length', '20'], stdin: 'short', mention: /password/i },
    { what: 'an unknown flag', args: ['list', '--nope'], mention: /--nope/ },
  ];
  for (const { what, args, stdin, mention } of usageErrors) {
    it(`users with ${what} exits 2 with a message and adds no one`, async () => {
      const result = await users(args, stdin);
      assertExit(result, 2, `users ${what}`);
      assert.match(result.stderr, mention);
      assert.deepEqual(listed(await users(['list'])), ['bob\tADMINISTRATOR']);
    });
  }

  it('adding a username that is already taken exits 1 with a message', async () => {
    const result = await users(['add', 'bob', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], 'another-pass');
    assertExit(result, 1, 'users add of a taken name');
    assert.match(result.stderr, /taken/i);
  });

  for (const args of [['passwd', 'ghost'], ['set-level', 'ghost', 'USER'], ['remove', 'ghost']]) {
    it(`users ${args.join(' ')} on a user that does not exist exits 1 with a message`, async () => {
      const result = await users(args, 'ghost-password\n');
      assertExit(result, 1, `users ${args.join(' ')}`);
      assert.match(result.stderr, /ghost|no user/i);
    });
  }

  it('while serve holds the data directory every users command and secret rotate exits 1 with a message naming its pid', async () => {
    const before = readFileSync(join(dataDir, 'users.json'), 'utf8');
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    try {
      const commands: Array<{ args: string[]; stdin?: string }> = [
        { args: ['users', 'list'] },
        { args: ['users', 'add', 'dave', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], stdin: 'dave-password' },
        { args: ['users', 'passwd', 'bob'], stdin: 'bob-new-password\n' },
        { args: ['users', 'passwd', 'bob', '--password-stdin'], stdin: 'bob-new-password' },
        { args: ['users', 'set-level', 'bob', 'ADMINISTRATOR'] },
        { args: ['users', 'remove', 'bob'] },
        { args: ['secret', 'rotate'] },
      ];
      for (const { args, stdin } of commands) {
        const result = await runCli([...args, '--data-dir', dataDir], stdin === undefined ? {} : { stdin });
        assertExit(result, 1, `${args.join(' ')} while serve runs`);
        assert.ok(result.stderr.includes(String(server.pid)), `${args.join(' ')} should name pid ${server.pid}: ${result.stderr}`);
      }
      assert.equal(await login(server, 'bob', BOB_PASSWORD), 200, 'the running service is unaffected');
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    assert.equal(readFileSync(join(dataDir, 'users.json'), 'utf8'), before, 'nothing was written while the service held the directory');
    assertOk(await users(['list']), 'users list once serve has stopped');
  });
});

describe('gatehouse secret rotate', () => {
  let dataDir = '';
  let token = '';
  const noEnvSecret = { GATEHOUSE_SECRET: undefined };

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('a token issued before a plain restart still verifies after it (the baseline for rotation)', async () => {
    const first = await startServe(['--port', '0', '--data-dir', dataDir], { env: noEnvSecret });
    try {
      const res = await httpCall(first.port, { method: 'POST', path: '/api/auth/register', body: { username: 'erin', password: 'erin-password', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.cookieToken !== undefined && res.cookieToken !== '');
      token = res.cookieToken;
    } finally {
      await first.stop();
    }
    assert.equal(modeOf(join(dataDir, 'secret')), 0o600);
    const second = await startServe(['--port', '0', '--data-dir', dataDir], { env: noEnvSecret });
    try {
      const res = await httpCall(second.port, { path: '/api/auth/verify', token });
      assert.equal(res.status, 200, res.text);
    } finally {
      await second.stop();
    }
  });

  it('secret rotate with GATEHOUSE_SECRET set exits 1 explaining why, and leaves the secret file alone', async () => {
    const before = readFileSync(join(dataDir, 'secret'));
    const result = await runCli(['secret', 'rotate', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assertExit(result, 1, 'secret rotate with GATEHOUSE_SECRET');
    assert.match(result.stderr, /GATEHOUSE_SECRET/);
    assert.ok(!result.stderr.includes(CLI_SECRET) && !result.stdout.includes(CLI_SECRET), 'the secret value is not printed');
    assert.deepEqual(readFileSync(join(dataDir, 'secret')), before);
  });

  it('secret rotate while stopped replaces the secret file (new content, mode 0600) and ends every session', async () => {
    const before = readFileSync(join(dataDir, 'secret'), 'utf8');
    const result = await runCli(['secret', 'rotate', '--data-dir', dataDir]);
    assertOk(result, 'secret rotate');
    const after = readFileSync(join(dataDir, 'secret'), 'utf8');
    assert.notEqual(after, before);
    assert.ok(after.trim().length >= 43, 'still at least 32 bytes of base64url');
    assert.equal(modeOf(join(dataDir, 'secret')), 0o600);
    assert.ok(!result.stdout.includes(after.trim()) && !result.stderr.includes(after.trim()), 'the new secret is not printed');
    for (const name of readdirSync(dataDir)) assert.equal(modeOf(join(dataDir, name)), 0o600, `${name} should be 0600`);

    const server = await startServe(['--port', '0', '--data-dir', dataDir], { env: noEnvSecret });
    try {
      const old = await httpCall(server.port, { path: '/api/auth/verify', token });
      assert.equal(old.status, 401, 'a token signed with the old secret no longer verifies');
      const relogin = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'erin', password: 'erin-password' } });
      assert.equal(relogin.status, 200, relogin.text);
      const fresh = await httpCall(server.port, { path: '/api/auth/verify', token: relogin.cookieToken ?? '' });
      assert.equal(fresh.status, 200);
    } finally {
      await server.stop();
    }
  });
});
