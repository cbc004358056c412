import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { ClientAborted } from '../errors.js';
import { hashPassword, verifyPassword, type ScryptCost, type ScryptRequest } from './password.js';
import { createWorkLimiter, type FairnessLimits, type WorkKey } from './work-limiter.js';

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;

/** Hashes on `maxConcurrent` low-priority worker threads; at most `maxQueued` more wait (then ServerBusy). */
export function createPasswordHasher(
  options: { cost: ScryptCost; maxConcurrent: number; maxQueued: number; fairness?: FairnessLimits },
) {
  const limiter = createWorkLimiter(options.maxConcurrent, options.maxQueued, options.fairness);
  const pool = createScryptPool(options.maxConcurrent);
  let runs = 0;
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> =>
    (dummyHash ??= hashPassword(randomBytes(16).toString('hex'), options.cost, pool.derive));

  return {
    /** Ends the hashing threads. */
    close: pool.close,
    /** Computes the dummy hash now, so the first unknown-user login costs no more than any other. */
    async warmUp(): Promise<void> {
      await dummy();
    },
    /** scrypt runs started so far (hash and verify, dummy included): lets tests prove a path ran none. */
    get runs(): number {
      return runs;
    },
    /** Hashes waiting for a slot now. */
    get queued(): number {
      return limiter.queued;
    },
    /** Hashes a new password, queued fairly under `key` (the caller's); throws ServerBusy when its queue is full. */
    hash: (password: string, key: WorkKey): Promise<string> =>
      limiter.run(key, () => {
        runs++;
        return hashPassword(password, options.cost, pool.derive);
      }),
    /**
     * Checks a login, queued fairly under `key` (the client's). With no stored hash (unknown
     * user) it still runs one scrypt at the configured cost against a dummy hash, so timing does
     * not reveal which usernames exist. Throws ServerBusy when the queue is full and
     * ClientAborted when `isAbandoned` says the client left while queued.
     */
    async verify(
      password: string, stored: string | undefined, key: WorkKey, isAbandoned?: () => boolean,
    ): Promise<boolean> {
      const target = stored ?? (await dummy());
      const matches = await limiter.run(key, () => {
        // A queued login whose client has gone is not worth a hash.
        if (isAbandoned?.() === true) return Promise.reject(new ClientAborted());
        runs++;
        return verifyPassword(password, target, pool.derive);
      });
      return matches && stored !== undefined;
    },
  };
}

// The worker's whole program: a constant, so no request data becomes code, and loadable alike from
// the tsc build and under tsx. Nice 10 (Linux applies it per thread): under load, logins wait for
// CPU rather than slowing every verify.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try { require('node:os').setPriority(10); } catch {}
parentPort.on('message', (job) => {
  try {
    parentPort.postMessage({ key: scryptSync(job.password, Buffer.from(job.salt), job.keyBytes, job.options) });
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
`;

interface Job {
  readonly request: ScryptRequest;
  readonly resolve: (key: Buffer) => void;
  readonly reject: (error: Error) => void;
  /** Set when its worker died under it once; a second death fails it. */
  wasRetried: boolean;
}

interface Slot {
  readonly worker: Worker;
  job: Job | undefined;
  /** The worker's uncaught error, kept as the cause when it then exits. */
  error: Error | undefined;
}

/**
 * A fixed pool of scrypt worker threads: hashing never runs on the event loop, and `size` bounds
 * the hashes in flight (and so the memory: 128·N·r bytes each); later jobs wait in order.
 */
export function createScryptPool(size: number) {
  if (!Number.isInteger(size) || size < 1) throw new TypeError('the scrypt pool size must be a positive integer');
  const slots: Slot[] = [];
  const waiting: Job[] = [];
  let isClosed = false;

  // A worker holds the process open while it hashes, never while it is idle.
  const runOn = (slot: Slot, job: Job | undefined): void => {
    slot.job = job;
    if (job === undefined) slot.worker.unref();
    else {
      slot.worker.ref();
      slot.worker.postMessage(job.request);
    }
  };

  const onReply = (slot: Slot, reply: { key?: Uint8Array; error?: string }): void => {
    const job = slot.job;
    runOn(slot, waiting.shift());
    if (reply.key !== undefined) job?.resolve(Buffer.from(reply.key));
    else job?.reject(new Error(`scrypt failed: ${reply.error ?? 'unknown error'}`));
  };

  // Every death ends in 'exit' (an uncaught error, terminate(), process.exit), idle or mid-job.
  const onExit = (slot: Slot, code: number): void => {
    if (isClosed) return; // close() has settled the job and ends the workers itself
    slots.splice(slots.indexOf(slot), 1);
    const job = slot.job;
    // Its job runs once more (scrypt is safe to repeat; the worker may have been dying already).
    if (job?.wasRetried === true) {
      job.reject(new Error(`the scrypt worker died mid-hash, twice (exit code ${code})`, { cause: slot.error }));
    } else if (job !== undefined) {
      job.wasRetried = true;
      waiting.unshift(job);
    }
    // A dead worker is replaced only when there is work for it.
    const next = waiting.shift();
    if (next !== undefined) runOn(spawn(), next);
  };

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true }), job: undefined, error: undefined };
    slots.push(slot);
    slot.worker.on('message', (reply: { key?: Uint8Array; error?: string }) => onReply(slot, reply));
    slot.worker.on('error', (error: Error) => {
      slot.error = error;
    });
    slot.worker.once('exit', (code: number) => onExit(slot, code));
    // After the listeners, which ref the worker's port again.
    slot.worker.unref();
    return slot;
  };

  return {
    /** Derives a key on a worker thread; throws when scrypt refuses the job or the pool is closed. */
    derive: (request: ScryptRequest): Promise<Buffer> =>
      new Promise((resolve, reject) => {
        if (isClosed) throw new Error('the scrypt pool is closed');
        const job: Job = { request, resolve, reject, wasRetried: false };
        const idle = slots.find((slot) => slot.job === undefined) ?? (slots.length < size ? spawn() : undefined);
        if (idle === undefined) waiting.push(job);
        else runOn(idle, job);
      }),
    // Refuses every job and ends the workers, unawaited: a running scrypt cannot be cut short
    // (terminate() waits for it) and a refused one writes nothing, so no shutdown need wait.
    async close(): Promise<void> {
      isClosed = true;
      const closed = new Error('the scrypt pool is closed');
      for (const job of waiting.splice(0)) job.reject(closed);
      for (const slot of slots.splice(0)) {
        slot.job?.reject(closed);
        void slot.worker.terminate();
      }
    },
  };
}
