// The data directory lock between containers, without Docker: the BUILT service and
// the offline commands each run in a PID namespace of their own (`unshare --pid --fork
// --mount-proc`, as root), so each is pid 1 there, as in a container, on one data directory.
// Needs root and unshare; it fails (never skips) without them: CI runs it as root.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, childEnv, CLI_PATH, CLIENT_JSON, removeTempDirs, tempDir } from '../../helpers/process.js';
import { sendRequest } from '../../helpers/server.js';

const CLIENT = JSON.parse(CLIENT_JSON) as unknown;
/** The lease expiry (src/store/lock.ts DEFAULT_LEASE): a dead holder's lock is taken over after it. */
const EXPIRY_MS = 10_000;
const running = new Set<Namespaced>();

before(() => {
  if (process.getuid?.() !== 0) throw new Error('the namespaces suite needs root (unshare --pid): run it as root, as CI does');
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', 'echo $$'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0 || probe.stdout.trim() !== '1') {
    throw new Error(`unshare --pid --fork --mount-proc does not work here: ${probe.error?.message ?? probe.stderr}`);
  }
  assertBuilt();
});

after(async () => {
  for (const namespaced of running) namespaced.unshare.kill('SIGKILL');
  await removeTempDirs();
});

interface Namespaced {
  readonly unshare: ChildProcess;
  /** The pid, as this namespace sees it, of the command that is pid 1 in its own. */
  readonly hostPid: () => number;
  readonly exited: Promise<number | null>;
  output(): string;
  stderr(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** `node dist/cli.js ...args` as pid 1 of a new PID namespace. */
function inNamespace(args: readonly string[], options: { keepStdinOpen?: boolean; env?: Record<string, string> } = {}): Namespaced {
  const unshare = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, CLI_PATH, ...args], {
    env: childEnv({ GATEHOUSE_LOG_LEVEL: 'info', ...options.env }),
    stdio: [options.keepStdinOpen === true ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let all = '';
  let err = '';
  const waiters = new Set<() => void>();
  unshare.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    all += chunk;
    for (const waiter of [...waiters]) waiter();
  });
  unshare.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    all += chunk;
    err += chunk;
    for (const waiter of [...waiters]) waiter();
  });
  const exited = new Promise<number | null>((resolve) => unshare.once('close', (code) => resolve(code)));
  const namespaced: Namespaced = {
    unshare,
    hostPid: () => {
      const children = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim().split(/\s+/);
      const pid = Number(children[0]);
      assert.ok(Number.isInteger(pid) && pid > 0, `no child of unshare ${unshare.pid}`);
      return pid;
    },
    exited,
    output: () => all,
    stderr: () => err,
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        let isDone = false;
        const check = (): void => {
          const match = pattern.exec(all);
          if (match === null || isDone) return;
          isDone = true;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(match[0]);
        };
        const timer = setTimeout(() => {
          isDone = true;
          waiters.delete(check);
          reject(new Error(`no output matched ${pattern} within ${timeoutMs} ms:\n${all}`));
        }, timeoutMs);
        void exited.then(() => {
          if (isDone) return;
          check();
          if (isDone) return;
          isDone = true;
          clearTimeout(timer);
          reject(new Error(`exited before printing ${pattern}:\n${all}`));
        });
        waiters.add(check);
        check();
      }),
  };
  running.add(namespaced);
  void exited.then(() => running.delete(namespaced));
  return namespaced;
}

async function startService(dir: string): Promise<{ service: Namespaced; port: number }> {
  const service = inNamespace(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], { env: { GATEHOUSE_SECRET: 'namespaces-test-secret-0123456789-abcdefgh' } });
  const line = await service.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
  return { service, port: Number(/:(\d+)$/.exec(line)?.[1]) };
}

async function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function lockRecord(dir: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dir, 'gatehouse.lock'), 'utf8')) as Record<string, unknown>;
}

async function register(port: number, username: string, password: string, level = 10): Promise<number> {
  return (await sendRequest(port, { method: 'POST', path: '/api/auth/register?cookie=false', body: { username, password, client: CLIENT, level } })).status;
}

async function login(port: number, username: string, password: string): Promise<number> {
  return (await sendRequest(port, { method: 'POST', path: '/api/auth/authenticate', body: { username, password } })).status;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('the data directory lock across PID namespaces (each holder is pid 1)', () => {
  it('refuses a second service, saying where the first runs, and leaves the first and its lock alone', { timeout: 90_000 }, async () => {
    const dir = await tempDir('gatehouse-ns-');
    const first = await startService(dir);
    const held = await lockRecord(dir);
    assert.equal(held['pid'], 1, 'the service is pid 1 in its namespace');
    assert.equal(await register(first.port, 'admin', 'first password'), 200);

    const second = inNamespace(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], { env: { GATEHOUSE_SECRET: 'namespaces-test-secret-0123456789-abcdefgh' } });
    const code = await withinMs(second.exited, EXPIRY_MS, 'the refusal');
    assert.equal(code, 1, second.output());
    assert.doesNotMatch(second.output(), /listening on/);
    assert.match(second.stderr(), /in use by Gatehouse \(serve\) on host "[^"]+", pid 1 in another PID namespace on this machine \(another container\), started [^,]+, lease last renewed/);

    assert.equal((await lockRecord(dir))['nonce'], held['nonce'], 'the refused service left the lock as it was');
    assert.equal((await sendRequest(first.port, { path: '/healthz' })).status, 200);
    assert.equal(await register(first.port, 'second-user', 'pw'), 401, 'still the one service, with its administrator');
    process.kill(first.service.hostPid(), 'SIGTERM');
    assert.equal(await withinMs(first.service.exited, 15_000, 'the stop'), 0, first.service.output());
    assert.equal(existsSync(join(dir, 'gatehouse.lock')), false, 'a clean stop removes its own lock');
  });

  it('refuses a service while an offline `users passwd` holds the lock at its prompt (renewed past the expiry); the offline change lands', { timeout: 120_000 }, async () => {
    const dir = await tempDir('gatehouse-ns-');
    const add = inNamespace(['users', 'add', 'alice', '--level', 'ADMINISTRATOR', '--client', CLIENT_JSON, '--password-stdin', '--data-dir', dir], { keepStdinOpen: true });
    add.unshare.stdin?.end('old password');
    assert.equal(await add.exited, 0, add.output());

    const passwd = inNamespace(['users', 'passwd', 'alice', '--password-stdin', '--data-dir', dir], { keepStdinOpen: true });
    for (let i = 0; i < 200 && !(await readFile(join(dir, 'gatehouse.lock'), 'utf8').catch(() => '')).includes('"users passwd"'); i++) await sleep(50);
    const held = await lockRecord(dir);
    assert.equal(held['purpose'], 'users passwd');
    assert.equal(held['pid'], 1);
    // Longer than the expiry: only renewal keeps the prompt's lease alive.
    await sleep(EXPIRY_MS + 1_000);

    const service = inNamespace(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], { env: { GATEHOUSE_SECRET: 'namespaces-test-secret-0123456789-abcdefgh' } });
    assert.equal(await withinMs(service.exited, EXPIRY_MS, 'the refusal'), 1, service.output());
    assert.match(service.stderr(), /in use by Gatehouse \(users passwd\) on host "[^"]+", pid 1 in another PID namespace/);
    assert.equal((await lockRecord(dir))['nonce'], held['nonce'], 'the refused service did not touch the offline command\'s lock');

    passwd.unshare.stdin?.end('new password');
    assert.equal(await passwd.exited, 0, passwd.output());
    assert.equal(existsSync(join(dir, 'gatehouse.lock')), false);

    const after = await startService(dir);
    assert.equal(await login(after.port, 'alice', 'new password'), 200, 'the offline change was lost');
    assert.equal(await login(after.port, 'alice', 'old password'), 401);
    process.kill(after.service.hostPid(), 'SIGTERM');
    assert.equal(await after.service.exited, 0);
  });

  it('after SIGKILL of a service, an offline command and then a new service take over once the lease is stale', { timeout: 120_000 }, async () => {
    const dir = await tempDir('gatehouse-ns-');
    const first = await startService(dir);
    assert.equal(await register(first.port, 'kept', 'pw'), 200);
    // A dead namespace's number can be handed to the next one, which then (rightly) sees the
    // holder's pid 1 as gone and takes over at once; holding the namespace open keeps its number
    // taken, so this test sees what a container on another kernel sees: the lease running out.
    const pinned = [openSync(`/proc/${first.service.hostPid()}/ns/pid`, 'r')];
    after(() => pinned.forEach((fd) => closeSync(fd)));
    process.kill(first.service.hostPid(), 'SIGKILL');
    await first.service.exited;
    assert.equal((await lockRecord(dir))['pid'], 1, 'SIGKILL leaves the lock behind');

    const startedAt = Date.now();
    const list = inNamespace(['users', 'list', '--data-dir', dir]);
    assert.equal(await withinMs(list.exited, EXPIRY_MS + 10_000, 'the takeover'), 0, list.output());
    assert.match(list.output(), /waiting up to 10 s for the lock .* held by Gatehouse \(serve\)/);
    assert.match(list.output(), /^kept\t10$/m);
    assert.ok(Date.now() - startedAt <= EXPIRY_MS + 8_000, `took ${Date.now() - startedAt} ms`);

    const second = await startService(dir);
    pinned.push(openSync(`/proc/${second.service.hostPid()}/ns/pid`, 'r'));
    process.kill(second.service.hostPid(), 'SIGKILL');
    await second.service.exited;
    const third = inNamespace(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], { env: { GATEHOUSE_SECRET: 'namespaces-test-secret-0123456789-abcdefgh' } });
    const line = await third.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, EXPIRY_MS + 15_000);
    const port = Number(/:(\d+)$/.exec(line)?.[1]);
    assert.match(third.output(), /waiting up to 10 s for the lock/);
    assert.equal(await login(port, 'kept', 'pw'), 200, 'the user registered before the kills is kept');
    process.kill(third.hostPid(), 'SIGTERM');
    assert.equal(await third.exited, 0);
  });

  it('a paused holder whose lease was taken over exits 1 on waking and never removes the new holder\'s lock', { timeout: 120_000 }, async () => {
    const dir = await tempDir('gatehouse-ns-');
    const first = await startService(dir);
    assert.equal(await register(first.port, 'admin', 'pw'), 200);
    const firstPid = first.service.hostPid();
    process.kill(firstPid, 'SIGSTOP'); // a frozen container: it renews nothing
    try {
      const second = inNamespace(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], { env: { GATEHOUSE_SECRET: 'namespaces-test-secret-0123456789-abcdefgh' } });
      const line = await second.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, EXPIRY_MS + 15_000);
      const secondPort = Number(/:(\d+)$/.exec(line)?.[1]);
      const taken = await lockRecord(dir);
      process.kill(firstPid, 'SIGCONT');
      assert.equal(await withinMs(first.service.exited, 15_000, 'the paused holder stopping'), 1, first.service.output());
      assert.match(first.service.stderr(), /stopping: lost the lock on the data directory/);
      assert.equal((await lockRecord(dir))['nonce'], taken['nonce'], 'the old holder removed or replaced the new holder\'s lock');
      assert.equal(await login(secondPort, 'admin', 'pw'), 200);
      process.kill(second.hostPid(), 'SIGTERM');
      assert.equal(await second.exited, 0);
    } finally {
      try {
        process.kill(firstPid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
  });
});
