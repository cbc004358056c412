// Start-up over a damaged or unusual data directory, with the BUILT service: a corrupt
// users.json makes it exit 1 naming the file and how to restore users.json.prev, leaving the
// file byte for byte as it was; a newer format is refused as such; users.json.prev holds the
// previous good state; leftovers of a crash (temp files) do not break start-up.
import assert from 'node:assert/strict';
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sendRequest } from '../helpers/server.js';
import { runToExit, spawnService, killAllChildren, removeTempDirs, serveArgs, tempDir } from '../helpers/process.js';
import { USERS_FORMAT } from '../../src/store/users.js';

const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' };
after(async () => {
  await killAllChildren();
  await removeTempDirs();
});

const dataDir = (): Promise<string> => tempDir('gatehouse-recovery-');


interface UsersDocument {
  format: number;
  users: Array<Record<string, unknown> & { username: string }>;
}

async function register(port: number, username: string, token?: string): Promise<string | undefined> {
  const res = await sendRequest(port, {
    method: 'POST',
    path: '/api/auth/register',
    body: { username, password: `${username}-pw`, client: CLIENT, level: 10 },
    ...(token === undefined ? {} : { token }),
  });
  assert.equal(res.status, 200, res.text);
  return res.cookieToken;
}

describe('start-up over a damaged data directory (built service)', () => {
  /** A users.json written by the service itself: admin and bob. */
  let good = '';

  before(async () => {
    const dir = await dataDir();
    const service = await spawnService({ args: serveArgs(dir) });
    const token = await register(service.port, 'admin');
    await register(service.port, 'bob', token);
    assert.deepEqual(await service.stop('SIGTERM'), { code: 0, signal: null });
    good = await readFile(join(dir, 'users.json'), 'utf8');
  });

  const corruptions: Array<{ name: string; content: () => string }> = [
    { name: 'a truncated file', content: () => good.slice(0, Math.floor(good.length * 0.6)) },
    { name: 'an empty file', content: () => '' },
    { name: 'a file that is not JSON', content: () => 'this is not JSON\n' },
    { name: 'JSON that is not an object', content: () => '[1, 2, 3]\n' },
    {
      name: 'a user with an invalid level',
      content: () => {
        const document = JSON.parse(good) as UsersDocument;
        document.users[1]!['level'] = 7;
        return JSON.stringify(document);
      },
    },
    {
      name: 'a user without a password hash',
      content: () => {
        const document = JSON.parse(good) as UsersDocument;
        delete document.users[0]!['passwordHash'];
        return JSON.stringify(document);
      },
    },
    {
      name: 'a duplicate username',
      content: () => {
        const document = JSON.parse(good) as UsersDocument;
        document.users.push({ ...document.users[0]! });
        return JSON.stringify(document);
      },
    },
  ];

  for (const corruption of corruptions) {
    it(`exits 1 on ${corruption.name}, naming the file and how to restore users.json.prev, and leaves it untouched`, async () => {
      const dir = await dataDir();
      const usersPath = join(dir, 'users.json');
      const bytes = Buffer.from(corruption.content(), 'utf8');
      await writeFile(usersPath, bytes, { mode: 0o600 });
      await writeFile(`${usersPath}.prev`, good, { mode: 0o600 });
      const result = await runToExit({ args: serveArgs(dir) });
      assert.equal(result.didListen, false, `it started over ${corruption.name}`);
      assert.equal(result.code, 1, result.stderr);
      assert.ok(result.stderr.includes(usersPath), `the message should name ${usersPath}: ${result.stderr}`);
      assert.ok(result.stderr.includes(`${usersPath}.prev`), `the message should point at users.json.prev: ${result.stderr}`);
      assert.match(result.stderr, /\bcp\b/, 'the message should tell how to restore');
      assert.deepEqual(await readFile(usersPath), bytes, 'the corrupt file was changed');
      assert.equal(await readFile(`${usersPath}.prev`, 'utf8'), good, 'users.json.prev was changed');
      assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.tmp')), []);
    });
  }

  it('refuses a file of a newer format, saying it is newer, and leaves it untouched', async () => {
    const dir = await dataDir();
    const usersPath = join(dir, 'users.json');
    const document = JSON.parse(good) as UsersDocument;
    document.format = USERS_FORMAT + 1;
    const bytes = Buffer.from(JSON.stringify(document));
    await writeFile(usersPath, bytes, { mode: 0o600 });
    const result = await runToExit({ args: serveArgs(dir) });
    assert.equal(result.didListen, false);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /newer/i);
    assert.ok(result.stderr.includes(usersPath));
    assert.deepEqual(await readFile(usersPath), bytes);
  });

  it('starts again after the restore the message describes (cp users.json.prev users.json)', async () => {
    const dir = await dataDir();
    const usersPath = join(dir, 'users.json');
    await writeFile(usersPath, good.slice(0, 10), { mode: 0o600 });
    await writeFile(`${usersPath}.prev`, good, { mode: 0o600 });
    assert.equal((await runToExit({ args: serveArgs(dir) })).code, 1);
    await copyFile(`${usersPath}.prev`, usersPath);
    const service = await spawnService({ args: serveArgs(dir) });
    const login = await sendRequest(service.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'bob', password: 'bob-pw' } });
    assert.equal(login.status, 200, login.text);
    await service.stop('SIGTERM');
  });

  it('keeps the previous good state in users.json.prev from the second write on', async () => {
    const dir = await dataDir();
    const usersPath = join(dir, 'users.json');
    const service = await spawnService({ args: serveArgs(dir) });
    const token = await register(service.port, 'admin');
    const afterFirst = await readFile(usersPath, 'utf8');
    await register(service.port, 'second', token);
    const afterSecond = await readFile(usersPath, 'utf8');
    assert.equal(await readFile(`${usersPath}.prev`, 'utf8'), afterFirst, 'after the second write, .prev should hold the first state');
    const removed = await sendRequest(service.port, { method: 'DELETE', path: '/api/auth/users/second', ...(token === undefined ? {} : { token }) });
    assert.equal(removed.status, 200, removed.text);
    assert.equal(await readFile(`${usersPath}.prev`, 'utf8'), afterSecond, 'after the third write, .prev should hold the second state');
    assert.equal(((JSON.parse(await readFile(`${usersPath}.prev`, 'utf8')) as UsersDocument).users).length, 2);
    await service.stop('SIGTERM');
  });

  it('starts despite temp files and a lock left by a crash, and uses users.json rather than a temp file', async () => {
    const dir = await dataDir();
    const usersPath = join(dir, 'users.json');
    await writeFile(usersPath, good, { mode: 0o600 });
    // A torn temp file, and a complete one that never got renamed (it holds a user not in users.json).
    await writeFile(join(dir, '.users.json.4242.1.tmp'), good.slice(0, 37), { mode: 0o600 });
    const newer = JSON.parse(good) as UsersDocument;
    newer.users.push({ ...newer.users[1]!, username: 'never-renamed' });
    await writeFile(join(dir, '.users.json.4242.2.tmp'), JSON.stringify(newer), { mode: 0o600 });
    await writeFile(join(dir, 'gatehouse.lock'), `${JSON.stringify({ pid: 2 ** 22 + 17 })}\n`, { mode: 0o600 });
    const service = await spawnService({ args: serveArgs(dir) });
    const login = await sendRequest(service.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: 'admin-pw' } });
    assert.equal(login.status, 200, login.text);
    const listed = await sendRequest(service.port, { path: '/api/auth/users', ...(login.cookieToken === undefined ? {} : { token: login.cookieToken }) });
    assert.deepEqual((listed.json as Array<{ username: string }>).map((entry) => entry.username).sort(), ['admin', 'bob']);
    assert.deepEqual(await service.stop('SIGTERM'), { code: 0, signal: null });
  });

  // Every SIGKILL or power cut during a write leaves one `.users.json.PID.N.tmp` (up to the size
  // of users.json) that nothing ever removes: after enough crashes the disk fills. Under the
  // lock no other writer exists, so start-up can remove them.
  it('removes temp files left by a crash once it holds the lock', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'users.json'), good, { mode: 0o600 });
    await writeFile(join(dir, '.users.json.4242.1.tmp'), good.slice(0, 37), { mode: 0o600 });
    await writeFile(join(dir, '.users.json.4243.7.tmp'), good, { mode: 0o600 });
    const service = await spawnService({ args: serveArgs(dir) });
    try {
      const login = await sendRequest(service.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: 'admin-pw' } });
      assert.equal(login.status, 200, login.text);
      // One write, in case clean-up happens on the first write rather than at start-up.
      const changed = await sendRequest(service.port, { method: 'PATCH', path: '/api/auth/users/bob', body: { client: { ...CLIENT, socket: '/t' } }, ...(login.cookieToken === undefined ? {} : { token: login.cookieToken }) });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.tmp')), [], 'stale temp files are still in the data directory');
    } finally {
      await service.stop('SIGTERM');
    }
  });
});
