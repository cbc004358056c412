// One writer per data directory, with the BUILT service: a second `serve` on the same
// directory exits 1 naming the pid that holds gatehouse.lock; a lock left by a SIGKILLed
// process is taken over; a graceful stop removes it; two starts racing for the directory
// never both run.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { sendRequest } from '../helpers/server.js';
import { childEnv, CLI_PATH, CLIENT_JSON, runCli, runToExit, spawnService, killAllChildren, removeTempDirs, serveArgs, tempDir } from '../helpers/process.js';

const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' };
after(async () => {
  await killAllChildren();
  await removeTempDirs();
});

const dataDir = (): Promise<string> => tempDir('gatehouse-lock-');


async function lockHolder(dir: string): Promise<unknown> {
  return (JSON.parse(await readFile(join(dir, 'gatehouse.lock'), 'utf8')) as { pid?: unknown }).pid;
}

/** A pid that is certainly not running: a child that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  const pid = Number(child.stdout.toString());
  assert.ok(Number.isInteger(pid) && pid > 0);
  return pid;
}

describe('the data directory lock (built service)', () => {
  it('refuses a second server on the same data directory with exit 1 and the pid holding the lock', async () => {
    const dir = await dataDir();
    const first = await spawnService({ args: serveArgs(dir) });
    assert.equal(await lockHolder(dir), first.pid);

    const second = await runToExit({ args: serveArgs(dir) });
    assert.equal(second.didListen, false, `the second server started:\n${second.stdout}${second.stderr}`);
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, new RegExp(`\\bpid ${first.pid}\\b`));
    assert.ok(second.stderr.includes(dir), `the message should name the directory: ${second.stderr}`);

    // The holder is untouched: still serving, still the lock's owner.
    const health = await sendRequest(first.port, { path: '/healthz' });
    assert.equal(health.status, 200);
    assert.equal(await lockHolder(dir), first.pid);
    assert.deepEqual(await first.stop('SIGTERM'), { code: 0, signal: null });
    assert.equal(existsSync(join(dir, 'gatehouse.lock')), false, 'a graceful stop should remove the lock file');
  });

  it('takes over the lock of a holder killed with SIGKILL, keeping its data', async () => {
    const dir = await dataDir();
    const first = await spawnService({ args: serveArgs(dir) });
    const registered = await sendRequest(first.port, { method: 'POST', path: '/api/auth/register?cookie=false', body: { username: 'kept', password: 'pw', client: CLIENT, level: 10 } });
    assert.equal(registered.status, 200, registered.text);
    assert.equal((await first.stop('SIGKILL')).signal, 'SIGKILL');
    assert.equal(await lockHolder(dir), first.pid, 'SIGKILL leaves the lock file behind');

    const next = await spawnService({ args: serveArgs(dir) });
    assert.equal(await lockHolder(dir), next.pid);
    const verify = await sendRequest(next.port, { path: '/api/auth/verify' });
    assert.equal(verify.status, 401, 'the user registered before the kill should still exist');
    assert.deepEqual(await next.stop('SIGTERM'), { code: 0, signal: null });
  });

  it('takes over a lock file that names no valid pid (torn or garbage)', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'gatehouse.lock'), 'not json', { mode: 0o600 });
    // Older than the lease expiry: a fresh unreadable file is watched for that long first.
    await utimes(join(dir, 'gatehouse.lock'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const service = await spawnService({ args: serveArgs(dir) });
    assert.equal(await lockHolder(dir), service.pid);
    await service.stop('SIGTERM');
  });

  it('refuses to start while the lock names another live process, and says which', async () => {
    const dir = await dataDir();
    // This test runner is alive and is not a Gatehouse process: the service cannot tell, so it refuses.
    await writeFile(join(dir, 'gatehouse.lock'), `${JSON.stringify({ pid: process.pid })}\n`, { mode: 0o600 });
    const result = await runToExit({ args: serveArgs(dir) });
    assert.equal(result.didListen, false);
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`\\bpid ${process.pid}\\b`));
  });

  // Two starts at once after a crash (a supervisor restarting while an operator starts it by
  // hand): both read the stale lock, both unlink "it", both create "their" lock, and both run.
  // Node start-up jitter hides the window when whole servers race, so this races the built
  // lock code itself (dist/store/lock.js) in two processes released at the same instant. The
  // winner holds (and renews) until both have answered: the loser sees the renewal and refuses.
  // (A winner that went away on a timer let a loser delayed past it take over a dead holder's
  // lock, rightly, which read as a double under load.)
  it('never lets two processes racing for a stale lock both take it', { timeout: 60_000 }, async () => {
    const lockModule = pathToFileURL(join(CLI_PATH, '..', 'store', 'lock.js')).href;
    const taker = `
      import { lockDataDir } from ${JSON.stringify(lockModule)};
      const [dir, at] = process.argv.slice(-2);
      while (Date.now() < Number(at)) {}
      // A renewal every 50 ms, so the loser refuses at once; an expiry far beyond any scheduling
      // delay, so only a second holder, never a starved first one, makes both take it.
      try { await lockDataDir(dir, { purpose: 'race', timing: { renewEveryMs: 50, expiryMs: 5000, pollMs: 10 } }); process.stdout.write('took'); process.stdin.resume(); }
      catch (error) { process.stdout.write('refused: ' + error.message); }`;
    /** Starts one taker: its answer, and `release` (its standard input closed) to let a holder end. */
    const race = (dir: string, at: number): { outcome: Promise<string>; release: () => void; closed: Promise<void> } => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', taker, '--', dir, String(at)], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const outcome = new Promise<string>((resolve) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          resolve(out);
        });
        void closed.then(() => resolve(out));
      });
      return { outcome, release: () => child.stdin.end(), closed };
    };
    const stale = deadPid();
    const doubles: string[] = [];
    for (let trial = 0; trial < 10 && doubles.length === 0; trial++) {
      const dir = await dataDir();
      await writeFile(join(dir, 'gatehouse.lock'), `${JSON.stringify({ pid: stale })}\n`, { mode: 0o600 });
      await utimes(join(dir, 'gatehouse.lock'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      const at = Date.now() + 300;
      const takers = [race(dir, at), race(dir, at)];
      const outcomes = await Promise.all(takers.map((taker) => taker.outcome));
      for (const taker of takers) taker.release();
      await Promise.all(takers.map((taker) => taker.closed));
      assert.ok(outcomes.some((outcome) => outcome === 'took'), `neither process took the lock: ${outcomes.join(' / ')}`);
      if (outcomes.every((outcome) => outcome === 'took')) doubles.push(`trial ${trial}: both processes took the stale lock in ${dir}`);
    }
    assert.deepEqual(doubles, [], 'two processes held the same data directory');
  });

  it('a service whose lease is taken over stops writing and exits 1 with a line that says so', { timeout: 60_000 }, async () => {
    const dir = await dataDir();
    const service = await spawnService({ args: serveArgs(dir) });
    await writeFile(join(dir, 'gatehouse.lock'), `${JSON.stringify(otherHolder())}\n`, { mode: 0o600 });
    const exit = await service.waitForExit(15_000);
    assert.deepEqual(exit, { code: 1, signal: null }, service.output());
    assert.match(service.stderr(), /stopping: lost the lock on the data directory .*another process took the lock over: Gatehouse \(serve\) on host \\?"elsewhere\\?", pid 1/);
    assert.equal(JSON.parse(await readFile(join(dir, 'gatehouse.lock'), 'utf8')).nonce, 'c'.repeat(32), 'the new holder keeps its lock');
  });

  it('SIGTERM while serve waits for a lock stops it at once, without taking the lock or listening', { timeout: 60_000 }, async () => {
    const dir = await dataDir();
    const planted = `${JSON.stringify(otherHolder())}\n`;
    await writeFile(join(dir, 'gatehouse.lock'), planted, { mode: 0o600 });
    const child = spawn(process.execPath, [CLI_PATH, ...serveArgs(dir)], { env: childEnv({ GATEHOUSE_LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // It waits up to 10 s for a lease from another boot id; stop it a second into the wait.
    for (let i = 0; i < 400 && !output.includes('waiting up to'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.match(output, /waiting up to 10 s/);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    const tookMs = Date.now() - stoppedAt;
    assert.ok(tookMs < 4_000, `it exited ${tookMs} ms after SIGTERM (Docker kills at 10 s):\n${output}`);
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /listening on/);
    assert.equal(await readFile(join(dir, 'gatehouse.lock'), 'utf8'), planted, 'the planted lock was touched');
  });

  it('an offline command whose lease is taken over during the password prompt fails and writes nothing', { timeout: 60_000 }, async () => {
    const dir = await dataDir();
    const added = await runCli(['users', 'add', 'alice', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin', '--data-dir', dir], { stdin: 'first password' });
    assert.equal(added.code, 0, added.stderr);
    const before = await readFile(join(dir, 'users.json'), 'utf8');
    const child = spawn(process.execPath, [CLI_PATH, 'users', 'passwd', 'alice', '--password-stdin', '--data-dir', dir], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // Wait until it holds the lock (it reads the password while holding it).
    for (let i = 0; i < 200 && !(await readFile(join(dir, 'gatehouse.lock'), 'utf8').catch(() => '')).includes('users passwd'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    await writeFile(join(dir, 'gatehouse.lock'), `${JSON.stringify(otherHolder())}\n`, { mode: 0o600 });
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // past one renewal
    child.stdin.end('second password');
    assert.equal(await exited, 1, stderr);
    assert.match(stderr, /lost the lock/);
    assert.equal(await readFile(join(dir, 'users.json'), 'utf8'), before, 'the offline change was written after the lease was lost');
    assert.equal(JSON.parse(await readFile(join(dir, 'gatehouse.lock'), 'utf8')).nonce, 'c'.repeat(32));
  });
});

/** A fresh lease of a holder in another container on another host. */
function otherHolder(): Record<string, unknown> {
  const now = new Date().toISOString();
  return { format: 2, nonce: 'c'.repeat(32), purpose: 'serve', host: 'elsewhere', pid: 1, bootId: 'another-boot', pidNamespace: 'pid:[1]', startedAt: now, renewedAt: now };
}
