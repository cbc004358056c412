// Storage faults seen through the whole service. The store's file operations are
// wrapped (the StoreFileSystem seam) to inject ENOSPC, short writes, EIO on fsync, EROFS,
// a failing rename and a failing directory fsync. For each: the request gets a 5xx JSON
// {code, message}; memory equals the file (the list endpoint, the store itself and a fresh
// reopen agree with users.json); nothing refused is on disk; and once the fault clears the
// next request succeeds. A last part fills a REAL tiny tmpfs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { realFileSystem, type StoreFileHandle, type StoreFileSystem } from '../../src/store/file-system.js';
import { openUserStore } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import { CLIENT_SETTINGS, registerUser, startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const injected = (code: string): Error => Object.assign(new Error(`injected ${code}`), { code, syscall: 'injected' });

/** Hooks are consulted on every call; throw to fail it. `write` may return how many bytes to really write. */
interface FaultHooks {
  open?: (path: string, flags: string) => void;
  write?: (path: string, length: number) => number | undefined;
  sync?: (path: string) => void;
  rename?: (from: string, to: string) => void;
  link?: (existing: string, newPath: string) => void;
  unlink?: (path: string) => void;
}

interface FaultyFileSystem {
  readonly fs: StoreFileSystem;
  hooks: FaultHooks;
  /** Every call made, as "op path" (paths reduced to their base name). */
  readonly calls: string[];
}

function faultyFileSystem(): FaultyFileSystem {
  const state: FaultyFileSystem = { fs: realFileSystem, hooks: {}, calls: [] };
  const record = (op: string, path: string): void => {
    state.calls.push(`${op} ${basename(path)}`);
  };
  const fs: StoreFileSystem = {
    async open(path, flags, mode) {
      record('open', path);
      state.hooks.open?.(path, flags);
      const real = await realFileSystem.open(path, flags, mode);
      const handle: StoreFileHandle = {
        async write(buffer, offset, length, position) {
          record('write', path);
          const limit = state.hooks.write?.(path, length);
          if (limit === undefined) return real.write(buffer, offset, length, position);
          if (limit <= 0) return { bytesWritten: 0 };
          return real.write(buffer, offset, Math.min(limit, length), position);
        },
        async sync() {
          record('sync', path);
          state.hooks.sync?.(path);
          return real.sync();
        },
        stat: () => real.stat(),
        close: () => real.close(),
      };
      return handle;
    },
    async rename(from, to) {
      record('rename', from);
      state.hooks.rename?.(from, to);
      return realFileSystem.rename(from, to);
    },
    async link(existing, newPath) {
      record('link', newPath);
      state.hooks.link?.(existing, newPath);
      return realFileSystem.link(existing, newPath);
    },
    async unlink(path) {
      record('unlink', path);
      state.hooks.unlink?.(path);
      return realFileSystem.unlink(path);
    },
    readFile: (path) => realFileSystem.readFile(path),
  };
  return Object.assign(state, { fs });
}

const isTemp = (path: string): boolean => /^\.users\.json\..*\.tmp$/.test(basename(path));

interface FileUser {
  username: string;
  level: number | string;
  passwordHash: string;
  client: unknown;
  credentialsChangedAt: number;
}

async function readUsers(dataDir: string): Promise<FileUser[]> {
  const document = JSON.parse(await readFile(join(dataDir, 'users.json'), 'utf8')) as { format: number; users: FileUser[] };
  assert.equal(document.format, 1);
  return document.users;
}

const canonical = (users: Iterable<{ username: string }>): string =>
  JSON.stringify(
    [...users]
      .map((user) => JSON.stringify(user, ['username', 'level', 'passwordHash', 'client', 'client', 'type', 'version', 'socket', 'credentialsChangedAt', 'sessionKey']))
      .sort(),
  );

/** Memory equals the file: the store's records, the list endpoint and a fresh reopen all agree with users.json. */
async function assertMemoryEqualsDisk(server: TestServer, adminToken: string): Promise<FileUser[]> {
  const onDisk = await readUsers(server.dataDir);
  assert.equal(canonical(server.running.store.list()), canonical(onDisk), 'the store in memory differs from users.json');
  const listed = await server.request({ path: '/api/auth/users', token: adminToken });
  assert.equal(listed.status, 200);
  assert.deepEqual(
    (listed.json as Array<{ username: string; level: unknown }>).map((entry) => `${entry.username}=${String(entry.level)}`).sort(),
    onDisk.map((user) => `${user.username}=${String(user.level)}`).sort(),
    'GET /api/auth/users differs from users.json',
  );
  const reopened = await openUserStore(server.dataDir, realFileSystem, FEATURE_FIELDS);
  assert.equal(canonical(reopened.list()), canonical(onDisk), 'a fresh reopen differs from users.json');
  return onDisk;
}

function assertStorageError(res: TestResponse, what: string): void {
  assert.ok(res.status >= 500 && res.status <= 599, `${what}: expected a 5xx, got ${res.status} ${res.text}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, what);
  const body = res.json as { code?: unknown; message?: unknown };
  assert.equal(typeof body.code, 'string', `${what}: ${res.text}`);
  assert.match(body.code as string, /^[A-Z][A-Z0-9_]*$/, what);
  assert.equal(typeof body.message, 'string', `${what}: ${res.text}`);
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message'], what);
}

async function tempFilesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.tmp'));
}

/** The three kinds of change a request makes: add, update, remove. */
function changes(server: TestServer, adminToken: string, suffix: string): Array<{ what: string; send: () => Promise<TestResponse> }> {
  return [
    {
      what: 'register bob',
      send: () =>
        server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: `bob${suffix}`, password: 'bob-password', client: CLIENT_SETTINGS, level: 5 } }),
    },
    { what: 'PATCH alice level', send: () => server.request({ method: 'PATCH', path: '/api/auth/users/alice', token: adminToken, body: { level: 10 } }) },
    { what: 'PATCH alice client', send: () => server.request({ method: 'PATCH', path: '/api/auth/users/alice', token: adminToken, body: { client: { ...CLIENT_SETTINGS, socket: `/other${suffix}` } } }) },
    { what: 'rename carol', send: () => server.request({ method: 'PATCH', path: '/api/auth/users/carol', token: adminToken, body: { username: `caroline${suffix}` } }) },
    { what: 'DELETE dave', send: () => server.request({ method: 'DELETE', path: '/api/auth/users/dave', token: adminToken }) },
  ];
}

interface Setup {
  server: TestServer;
  faults: FaultyFileSystem;
  adminToken: string;
}

const servers: TestServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function setUp(): Promise<Setup> {
  const faults = faultyFileSystem();
  const server = await startTestServer({ GATEHOUSE_LOG_LEVEL: 'silent' }, { fileSystem: faults.fs });
  servers.push(server);
  const adminToken = await registerUser(server, 'admin', { level: 10 });
  for (const name of ['alice', 'carol', 'dave']) await registerUser(server, name, { level: 5, asToken: adminToken });
  return { server, faults, adminToken };
}

/**
 * The shared scenario: with `hooks` in place every kind of change is refused with a 5xx, the
 * file is byte for byte what it was, memory equals it, no temp file is left; with the hooks
 * removed the same changes succeed.
 */
async function assertRefusedThenRecovers(hooks: FaultHooks, options: { isRefusedOnDisk?: boolean } = {}): Promise<Setup> {
  const setup = await setUp();
  const { server, faults, adminToken } = setup;
  const usersPath = join(server.dataDir, 'users.json');
  const before = await readFile(usersPath);
  faults.hooks = hooks;
  for (const change of changes(server, adminToken, '')) {
    const res = await change.send();
    assertStorageError(res, change.what);
    await assertMemoryEqualsDisk(server, adminToken);
    if (options.isRefusedOnDisk !== true) assert.deepEqual(await readFile(usersPath), before, `${change.what}: users.json changed although the change was refused`);
  }
  if (options.isRefusedOnDisk !== true) assert.deepEqual(await tempFilesIn(server.dataDir), [], 'a temp file was left behind');

  faults.hooks = {};
  for (const change of changes(server, adminToken, '-again')) {
    const res = await change.send();
    assert.equal(res.status, 200, `${change.what} after the fault cleared: ${res.text}`);
  }
  const onDisk = await assertMemoryEqualsDisk(server, adminToken);
  const names = onDisk.map((user) => user.username).sort();
  assert.deepEqual(names, ['admin', 'alice', 'bob-again', 'caroline-again'], 'the changes made after the fault are not all on disk');
  assert.deepEqual(await tempFilesIn(server.dataDir), []);
  return setup;
}

describe('storage faults through the service', () => {
  it('refuses with a 5xx and keeps memory equal to the file when a write fails with ENOSPC', async () => {
    await assertRefusedThenRecovers({
      write: (path) => {
        if (isTemp(path)) throw injected('ENOSPC');
        return undefined;
      },
    });
  });

  it('refuses with a 5xx when a write fails with ENOSPC part-way through the file', async () => {
    let written = 0;
    await assertRefusedThenRecovers({
      write: (path, length) => {
        if (!isTemp(path)) return undefined;
        if (written > 0) throw injected('ENOSPC');
        written += 1;
        return Math.max(1, Math.floor(length / 2));
      },
    });
  });

  it('refuses with a 5xx, and does not spin, when a write keeps making no progress (0 bytes written)', async () => {
    let zeroWrites = 0;
    await assertRefusedThenRecovers({
      write: (path) => {
        if (!isTemp(path)) return undefined;
        zeroWrites += 1;
        return 0;
      },
    });
    assert.ok(zeroWrites <= 5 * 2, `the write loop retried a 0-byte write ${zeroWrites} times for 5 changes`);
  });

  it('completes every change when writes are short (a few bytes per call) but make progress', async () => {
    const { server, faults, adminToken } = await setUp();
    let calls = 0;
    faults.hooks = {
      write: (path) => {
        if (!isTemp(path)) return undefined;
        calls += 1;
        return 1 + (calls % 13);
      },
    };
    for (const change of changes(server, adminToken, '')) {
      const res = await change.send();
      assert.equal(res.status, 200, `${change.what}: ${res.text}`);
    }
    assert.ok(calls > 50, `expected many short writes, saw ${calls}`);
    const onDisk = await assertMemoryEqualsDisk(server, adminToken);
    assert.deepEqual(onDisk.map((user) => user.username).sort(), ['admin', 'alice', 'bob', 'caroline']);
    const alice = onDisk.find((user) => user.username === 'alice');
    assert.equal(alice?.level, 10);
    assert.deepEqual(alice?.client, { ...CLIENT_SETTINGS, socket: '/other' });
  });

  it('fails the change on EIO from fsync of the new file and never retries that fsync', async () => {
    const tempSyncs: string[] = [];
    const { faults } = await assertRefusedThenRecovers({
      sync: (path) => {
        if (!isTemp(path)) return;
        tempSyncs.push(path);
        throw injected('EIO');
      },
    });
    // One fsync per refused change, each on its own temp file: a failed fsync is not retried.
    assert.equal(tempSyncs.length, 5, `fsync calls on temp files: ${tempSyncs.join(', ')}`);
    assert.equal(new Set(tempSyncs).size, 5, 'the same temp file was fsynced twice');
    for (const path of tempSyncs) {
      const index = faults.calls.indexOf(`sync ${basename(path)}`);
      const later = faults.calls.slice(index + 1).filter((call) => call.endsWith(basename(path)));
      assert.ok(!later.some((call) => call.startsWith('sync ') || call.startsWith('rename ')), `after the failed fsync of ${basename(path)}: ${later.join(', ')}`);
    }
  });

  it('refuses with a 5xx when the temp file cannot be created (EROFS on open)', async () => {
    await assertRefusedThenRecovers({
      open: (path) => {
        if (isTemp(path)) throw injected('EROFS');
      },
    });
  });

  it('refuses with a 5xx when the rename onto users.json fails', async () => {
    await assertRefusedThenRecovers({
      rename: (from) => {
        if (isTemp(from)) throw injected('EIO');
      },
    });
  });

  it('refuses with a 5xx when keeping users.json.prev fails (link EIO)', async () => {
    await assertRefusedThenRecovers({
      link: () => {
        throw injected('EIO');
      },
    });
  });

  it('refuses with a 5xx and cleans up when both the write and the temp-file removal fail', async () => {
    const { server, faults, adminToken } = await setUp();
    const before = await readFile(join(server.dataDir, 'users.json'));
    faults.hooks = {
      write: (path) => {
        if (isTemp(path)) throw injected('EIO');
        return undefined;
      },
      unlink: (path) => {
        if (isTemp(path)) throw injected('EIO');
      },
    };
    const [change] = changes(server, adminToken, '');
    assertStorageError(await change!.send(), 'register with write and unlink failing');
    assert.deepEqual(await readFile(join(server.dataDir, 'users.json')), before);
    await assertMemoryEqualsDisk(server, adminToken);
    faults.hooks = {};
    const res = await change!.send();
    assert.equal(res.status, 200, res.text);
    await assertMemoryEqualsDisk(server, adminToken);
  });

  it('refuses every change of a group commit together when their shared write fails', async () => {
    const { server, faults, adminToken } = await setUp();
    const usersPath = join(server.dataDir, 'users.json');
    const before = await readFile(usersPath);
    faults.hooks = {
      sync: (path) => {
        if (isTemp(path)) throw injected('EIO');
      },
    };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: `batch${i}`, password: 'pw', client: CLIENT_SETTINGS, level: 5 } }),
      ),
    );
    for (const [i, res] of answers.entries()) assertStorageError(res, `batch${i}`);
    assert.deepEqual(await readFile(usersPath), before);
    await assertMemoryEqualsDisk(server, adminToken);
    faults.hooks = {};
    const retried = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: `batch${i}`, password: 'pw', client: CLIENT_SETTINGS, level: 5 } }),
      ),
    );
    for (const res of retried) assert.equal(res.status, 200, res.text);
    const onDisk = await assertMemoryEqualsDisk(server, adminToken);
    assert.equal(onDisk.length, 4 + 12);
  });

  describe('when the directory fsync after the rename fails', () => {
    const failDirectorySync = (dataDir: () => string): FaultHooks => ({
      sync: (path) => {
        if (path === dataDir()) throw injected('EIO');
      },
    });

    it('answers a 5xx, keeps memory equal to the file, and recovers', async () => {
      const { server, faults, adminToken } = await setUp();
      faults.hooks = failDirectorySync(() => server.dataDir);
      for (const change of changes(server, adminToken, '')) {
        assertStorageError(await change.send(), change.what);
        await assertMemoryEqualsDisk(server, adminToken);
      }
      faults.hooks = {};
      const res = await server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: 'after', password: 'pw', client: CLIENT_SETTINGS, level: 5 } });
      assert.equal(res.status, 200, res.text);
      const onDisk = await assertMemoryEqualsDisk(server, adminToken);
      assert.ok(onDisk.some((user) => user.username === 'after'));
    });

    // A client told "5xx: not applied" must be able to rely on it: the refused change should
    // not be what the service serves (and keeps on disk) afterwards.
    it('does not keep a change it refused, on disk or in memory', async () => {
      const { server, faults, adminToken } = await setUp();
      const usersPath = join(server.dataDir, 'users.json');
      const before = await readFile(usersPath);
      faults.hooks = failDirectorySync(() => server.dataDir);
      const res = await server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: 'refused', password: 'pw', client: CLIENT_SETTINGS, level: 5 } });
      faults.hooks = {};
      assertStorageError(res, 'register during a failing directory fsync');
      const onDisk = await assertMemoryEqualsDisk(server, adminToken);
      assert.ok(
        !onDisk.some((user) => user.username === 'refused'),
        `the register was answered ${res.status} ${res.text} but "refused" is in users.json and listed by the service`,
      );
      assert.deepEqual(await readFile(usersPath), before);
    });
  });
});

// A real file system that runs out of space: tmpfs of 256 KiB (needs root and mount).
describe('a logout whose revocation cannot be saved (--revoke-on-logout)', () => {
  let faults: FaultyFileSystem;
  let server: TestServer;
  before(async () => {
    faults = faultyFileSystem();
    server = await startTestServer({ GATEHOUSE_REVOKE_ON_LOGOUT: '1' }, { fileSystem: faults.fs });
  });
  after(() => server.close());

  // "Not applied" must be true: the token neither refused now nor after a restart, the cookie
  // not cleared; once the disk recovers, logout works.
  it('answers 5xx, keeps the session working as the file says, and revokes once the fault clears', async () => {
    const token = await registerUser(server, 'rv-admin', { level: 10 });
    faults.hooks = { rename: (from) => {
      if (basename(from).startsWith('.revoked-tokens.json')) throw injected('ENOSPC');
    } };
    const res = await server.request({ path: '/api/auth/logout', token });
    assertStorageError(res, 'logout with a failing revocation write');
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal((await server.request({ path: '/api/auth/verify', token })).status, 200, 'refused in memory but not on disk');
    faults.hooks = {};
    assert.equal((await server.request({ path: '/api/auth/logout', token })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/verify', token })).status, 401);
  });
});

describe('a real tmpfs that fills up', () => {
  let mountPoint = '';
  let mountError: string | undefined;
  let isMounted = false;
  let server: TestServer | undefined;

  before(async () => {
    mountPoint = await mkdtemp(join(tmpdir(), 'gatehouse-tmpfs-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', mountPoint], { stdio: 'pipe' });
      isMounted = true;
    } catch (error) {
      mountError = error instanceof Error ? error.message.split('\n')[0] : String(error);
    }
  });

  after(async () => {
    try {
      await server?.close();
    } finally {
      if (isMounted) execFileSync('umount', [mountPoint], { stdio: 'pipe' });
      await rm(mountPoint, { recursive: true, force: true });
    }
  });

  it('answers 5xx when the disk is full, keeps the previous file intact, and recovers once space is freed', async (t) => {
    if (!isMounted) {
      t.skip(`cannot mount a tmpfs here (${mountError ?? 'unknown'}): this test needs root and mount(8)`);
      return;
    }
    const dataDir = join(mountPoint, 'data');
    server = await startTestServer({ GATEHOUSE_LOG_LEVEL: 'silent' }, { dataDir });
    const adminToken = await registerUser(server, 'admin', { level: 10 });
    for (let i = 0; i < 20; i++) await registerUser(server, `user${i}`, { level: 5, asToken: adminToken });
    const usersPath = join(dataDir, 'users.json');
    const before = await readFile(usersPath);

    // Fill every remaining block.
    const fillerPath = join(mountPoint, 'filler');
    const fd = openSync(fillerPath, 'w');
    const chunk = Buffer.alloc(4096, 0x78);
    let isFull = false;
    try {
      for (let i = 0; i < 1024 && !isFull; i++) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          assert.equal((error as { code?: unknown }).code, 'ENOSPC');
          isFull = true;
        }
      }
    } finally {
      closeSync(fd);
    }
    assert.ok(isFull, 'the tmpfs never filled up');

    const refusedRegister = await server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: 'late', password: 'pw', client: CLIENT_SETTINGS, level: 5 } });
    assertStorageError(refusedRegister, 'register on a full disk');
    const refusedPatch = await server.request({ method: 'PATCH', path: '/api/auth/users/user3', token: adminToken, body: { client: { ...CLIENT_SETTINGS, socket: '/elsewhere' } } });
    assertStorageError(refusedPatch, 'PATCH on a full disk');
    assert.deepEqual(await readFile(usersPath), before, 'users.json changed on a full disk');
    assert.deepEqual(await tempFilesIn(dataDir), [], 'a temp file was left on the full disk');
    await assertMemoryEqualsDisk(server, adminToken);

    await unlink(fillerPath);
    const retried = await server.request({ method: 'POST', path: '/api/auth/register?cookie=false', token: adminToken, body: { username: 'late', password: 'pw', client: CLIENT_SETTINGS, level: 5 } });
    assert.equal(retried.status, 200, retried.text);
    const onDisk = await assertMemoryEqualsDisk(server, adminToken);
    assert.ok(onDisk.some((user) => user.username === 'late'));
    assert.equal(onDisk.length, 22);
  });
});
