import { ServerBusy } from '../errors.js';

export interface WorkLimiter {
  /** Runs `task` when a slot is free; throws ServerBusy at once when the queue is full. */
  run<T>(task: () => Promise<T>): Promise<T>;
  readonly active: number;
  readonly queued: number;
}

/** Bounds concurrent expensive work (scrypt) so a login storm queues instead of exhausting CPU and memory. */
export function createWorkLimiter(maxConcurrent: number, maxQueued: number): WorkLimiter {
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new TypeError('maxConcurrent must be a positive integer');
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new TypeError('maxQueued must be a non-negative integer');
  let active = 0;
  const waiting: Array<() => void> = [];

  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) active--;
    else next();
  };

  return {
    async run(task) {
      if (active >= maxConcurrent) {
        if (waiting.length >= maxQueued) throw new ServerBusy();
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        active++;
      }
      try {
        return await task();
      } finally {
        release();
      }
    },
    get active() {
      return active;
    },
    get queued() {
      return waiting.length;
    },
  };
}
