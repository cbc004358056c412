import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { createScryptPool } from '../../src/auth/password-hasher.js';

/** `promise`, or a failure naming `what` after `ms` (a pending job alone would not keep the test running). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const job = (password: string, N = 1024) => ({ password, salt: Buffer.alloc(16, 1), keyBytes: 32, options: { N, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } });

describe('scrypt pool', () => {
  it('derives the same key as scrypt on the main thread', async () => {
    const pool = createScryptPool(1);
    try {
      const key = await pool.derive(job('correct horse'));
      assert.deepEqual(key, scryptSync('correct horse', Buffer.alloc(16, 1), 32, { N: 1024, r: 8, p: 1 }));
    } finally {
      await pool.close();
    }
  });

  it('runs more jobs than workers, in order, and all of them finish', async () => {
    const pool = createScryptPool(2);
    try {
      const keys = await Promise.all(Array.from({ length: 7 }, (_, i) => pool.derive(job(`password ${i}`))));
      keys.forEach((key, i) => assert.deepEqual(key, scryptSync(`password ${i}`, Buffer.alloc(16, 1), 32, { N: 1024, r: 8, p: 1 })));
    } finally {
      await pool.close();
    }
  });

  it('rejects a job scrypt refuses (maxmem too small) and keeps working', async () => {
    const pool = createScryptPool(1);
    try {
      await assert.rejects(pool.derive({ ...job('x', 2 ** 15), options: { N: 2 ** 15, r: 8, p: 1, maxmem: 1024 } }), /scrypt failed/);
      assert.equal((await pool.derive(job('y'))).length, 32);
    } finally {
      await pool.close();
    }
  });

  it('settles running and waiting jobs when closed, and refuses later ones', async () => {
    const pool = createScryptPool(1);
    const running = assert.rejects(pool.derive(job('slow', 2 ** 16)), /closed/);
    const waiting = assert.rejects(pool.derive(job('next')), /closed/);
    await pool.close();
    await running;
    await waiting;
    await assert.rejects(pool.derive(job('late')), /closed/);
  });

  const AFTER_KEY = scryptSync('after', Buffer.alloc(16, 1), 32, { N: 1024, r: 8, p: 1 });
  // About 64 MiB of scrypt: it cannot finish before its worker is ended just after coming online.
  const slowJob = (): ReturnType<typeof job> => ({ ...job('slow'), options: { N: 2 ** 16, r: 8, p: 1, maxmem: 256 * 1024 * 1024 } });

  /**
   * Runs `body` with a one-worker pool and the Workers created meanwhile: Node emits 'worker' on
   * process for every Worker, so the test reaches the pool's workers with no seam in the pool.
   */
  async function withWatchedPool(body: (pool: ReturnType<typeof createScryptPool>, workers: readonly Worker[]) => Promise<void>): Promise<void> {
    const workers: Worker[] = [];
    const onWorker = (worker: Worker): void => void workers.push(worker);
    process.on('worker', onWorker);
    const pool = createScryptPool(1);
    try {
      await body(pool, workers);
    } finally {
      process.off('worker', onWorker);
      await pool.close();
    }
  }

  /** Ends the pool's `index`-th worker (counting from 0) as soon as it exists, whatever it is doing. */
  async function killWorker(workers: readonly Worker[], index: number): Promise<void> {
    while (workers[index] === undefined) await new Promise((resolve) => setTimeout(resolve, 2));
    await workers[index]?.terminate();
  }

  // A running scrypt cannot be interrupted (terminate() waits for it), and a hash whose job is
  // refused writes nothing: a shutdown waiting for it would take it for a write still in flight.
  it('settles close() at once while a hash is under way: its job is refused, its worker ends later', () =>
    withWatchedPool(async (pool, workers) => {
      await pool.derive(job('first'));
      // The last announced: a worker an earlier test's pool is still ending may come before it.
      const worker = workers.at(-1);
      assert.ok(worker !== undefined);
      let hasExited = false;
      const exited = once(worker, 'exit').then(() => (hasExited = true));
      // Sent to the idle worker, which is online: the 64 MiB hash starts as soon as it arrives.
      const inFlight = assert.rejects(pool.derive(slowJob()), /closed/);
      await pool.close();
      assert.equal(hasExited, false, 'close() waited for the worker to end');
      await inFlight;
      await within(exited, 20_000, "the worker's end");
    }));

  it('runs the job of a worker that dies mid-hash once more, on a new worker', () =>
    withWatchedPool(async (pool, workers) => {
      const inFlight = pool.derive(slowJob());
      await killWorker(workers, 0);
      assert.equal((await within(inFlight, 20_000, 'the retried job')).length, 32);
      assert.equal(workers.length, 2, 'a new worker replaced the dead one');
    }));

  it('fails a job whose worker dies twice, and runs later jobs on a new worker', () =>
    withWatchedPool(async (pool, workers) => {
      const inFlight = pool.derive(slowJob());
      await killWorker(workers, 0);
      await killWorker(workers, 1);
      await assert.rejects(within(inFlight, 10_000, 'the job of the dead workers'), /scrypt worker died mid-hash, twice/);
      assert.deepEqual(await within(pool.derive(job('after')), 10_000, 'the job after the deaths'), AFTER_KEY);
      assert.equal(workers.length, 3);
    }));

  it('drops a worker that dies between jobs, without crashing, and runs the next job on a new one', () =>
    withWatchedPool(async (pool, workers) => {
      await pool.derive(job('first'));
      const [idle] = workers;
      assert.ok(idle !== undefined);
      const exited = once(idle, 'exit');
      await idle.terminate();
      await exited;
      assert.deepEqual(await within(pool.derive(job('after')), 10_000, 'the job after an idle death'), AFTER_KEY);
      assert.equal(workers.length, 2, 'a new worker replaced the dead one');
    }));

  it('runs a job that reached a worker just as it died (before its exit was seen) on a new one', () =>
    withWatchedPool(async (pool, workers) => {
      await pool.derive(job('first'));
      const [idle] = workers;
      assert.ok(idle !== undefined);
      void idle.terminate();
      assert.deepEqual(await within(pool.derive(job('after')), 10_000, 'the job sent to a dying worker'), AFTER_KEY);
    }));
});
