import { Worker } from 'node:worker_threads';

import type { ScryptRequest } from './password.js';

type ScryptJob = ScryptRequest;

export interface ScryptPool {
  /** Derives a key on a worker thread; at most `size` run at once, the rest wait in order. */
  derive(job: ScryptJob): Promise<Buffer>;
  /** Ends the workers; pending and later jobs are refused. */
  close(): Promise<void>;
}

// Lower priority than the event loop (Linux applies nice per thread): under load, logins wait
// for CPU rather than slowing every verify. 10 keeps logins moving when verify saturates a core.
export const HASH_THREAD_NICE = 10;

// The worker's whole program. It is a constant, so no request data becomes code; a string keeps
// the worker loadable the same way from the tsc build and from TypeScript under tsx.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try { require('node:os').setPriority(workerData.nice); } catch {}
parentPort.on('message', (job) => {
  try {
    const key = scryptSync(job.password, Buffer.from(job.salt), job.keyBytes, job.options);
    parentPort.postMessage({ key });
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
`;

interface Slot {
  readonly worker: Worker;
  /** The job running on this worker, if any. */
  current: Waiting | undefined;
  /** The worker's uncaught error, kept as the cause when it then exits. */
  error: Error | undefined;
}

interface Waiting {
  readonly job: ScryptJob;
  readonly resolve: (key: Buffer) => void;
  readonly reject: (error: Error) => void;
  /** Set when its worker died under it once; a second death fails it. */
  wasRetried: boolean;
}

/**
 * A fixed pool of scrypt worker threads. Hashing never runs on the event loop, and the pool's
 * size bounds the hashes in flight (and so the memory: 128·N·r bytes each).
 */
export function createScryptPool(size: number): ScryptPool {
  if (!Number.isInteger(size) || size < 1) throw new TypeError('the scrypt pool size must be a positive integer');
  const slots: Slot[] = [];
  const waiting: Waiting[] = [];
  let isClosed = false;

  // A worker holds the process open while it hashes, never while it is idle.
  const runOn = (slot: Slot, item: Waiting): void => {
    slot.current = item;
    slot.worker.ref();
    slot.worker.postMessage({ password: item.job.password, salt: item.job.salt, keyBytes: item.job.keyBytes, options: item.job.options });
  };

  const onReply = (slot: Slot, reply: { key?: Uint8Array; error?: string }): void => {
    const item = slot.current;
    slot.current = undefined;
    const next = waiting.shift();
    if (next !== undefined) runOn(slot, next);
    else slot.worker.unref();
    if (reply.key !== undefined) item?.resolve(Buffer.from(reply.key));
    else item?.reject(new Error(`scrypt failed: ${reply.error ?? 'unknown error'}`));
  };

  // Every death ends in 'exit' (an uncaught error, terminate(), process.exit), idle or mid-job.
  const onExit = (slot: Slot, code: number): void => {
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    const item = slot.current;
    slot.current = undefined;
    if (isClosed) return; // close() has settled the job and ends the workers itself
    if (item !== undefined) {
      // Its job runs once more (scrypt is safe to repeat, and the job may have reached a worker
      // that was already dying); a second death fails it.
      if (item.wasRetried) item.reject(new Error(`the scrypt worker died mid-hash, twice (exit code ${code})`, { cause: slot.error }));
      else {
        item.wasRetried = true;
        waiting.unshift(item);
      }
    }
    // A dead worker is replaced only when there is work for it.
    const next = waiting.shift();
    if (next !== undefined) runOn(spawn(), next);
  };

  const spawn = (): Slot => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { nice: HASH_THREAD_NICE } });
    const slot: Slot = { worker, current: undefined, error: undefined };
    slots.push(slot);
    worker.on('message', (reply: { key?: Uint8Array; error?: string }) => onReply(slot, reply));
    worker.on('error', (error: Error) => {
      slot.error = error;
    });
    worker.once('exit', (code: number) => onExit(slot, code));
    // After the listeners, which ref the worker's port again.
    worker.unref();
    return slot;
  };

  return {
    derive(job) {
      if (isClosed) return Promise.reject(new Error('the scrypt pool is closed'));
      return new Promise<Buffer>((resolve, reject) => {
        const item: Waiting = { job, resolve, reject, wasRetried: false };
        const idle = slots.find((slot) => slot.current === undefined) ?? (slots.length < size ? spawn() : undefined);
        if (idle === undefined) waiting.push(item);
        else runOn(idle, item);
      });
    },
    async close() {
      isClosed = true;
      const closed = new Error('the scrypt pool is closed');
      for (const item of waiting.splice(0)) item.reject(closed);
      await Promise.all(
        slots.splice(0).map((slot) => {
          slot.current?.reject(closed);
          return slot.worker.terminate();
        }),
      );
    },
  };
}
