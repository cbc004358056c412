import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { createScryptPool } from '../../src/auth/scrypt-pool.js';

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

  /**
   * Runs `body` with a one-worker pool and the list of Workers created meanwhile: Node emits
   * 'worker' on process for every Worker, so the test reaches the pool's worker with no seam.
   */
  async function withWatchedPool(body: (pool: ReturnType<typeof createScryptPool>, workers: readonly Worker[]) => Promise<void>): Promise<void> {
    const workers: Worker[] = [];
    const onWorker = (worker: Worker): void => void workers.push(worker);
    process.on('worker', onWorker);
    const pool = createScryptPool(1);
    try {
      await body(pool, workers);
      const key = await within(pool.derive(job('after')), 10_000, 'the job after the death');
      assert.deepEqual(key, scryptSync('after', Buffer.alloc(16, 1), 32, { N: 1024, r: 8, p: 1 }));
      assert.equal(workers.length, 2, 'a new worker replaced the dead one');
    } finally {
      process.off('worker', onWorker);
      await pool.close();
    }
  }

  it('fails the job of a worker that dies mid-hash, and runs later jobs on a new worker', () =>
    withWatchedPool(async (pool) => {
      const spawned = once(process, 'worker');
      // About 64 MiB of scrypt: it cannot finish before the worker is ended just after coming online.
      const inFlight = pool.derive({ ...job('slow'), options: { N: 2 ** 16, r: 8, p: 1, maxmem: 256 * 1024 * 1024 } });
      const [dying] = (await spawned) as [Worker];
      await once(dying, 'online');
      await dying.terminate();
      await assert.rejects(within(inFlight, 10_000, 'the job of the dead worker'), /scrypt worker died mid-hash/);
    }));

  it('drops a worker that dies between jobs, without crashing, and runs the next job on a new one', () =>
    withWatchedPool(async (pool, workers) => {
      await pool.derive(job('first'));
      const [idle] = workers;
      assert.ok(idle !== undefined);
      const exited = once(idle, 'exit');
      await idle.terminate();
      await exited;
    }));
});
