import { randomBytes } from 'node:crypto';
import { ClientAborted } from '../errors.js';
import { hashPassword, verifyPassword, type ScryptCost, type ScryptRequest } from './password.js';
import { createScryptPool } from './scrypt-pool.js';
import { createWorkLimiter, DEFAULT_FAIRNESS, type FairnessLimits, type WorkKey } from './work-limiter.js';

export interface PasswordHasher {
  /** Hashes a new password, queued fairly under `key` (the caller's); throws ServerBusy when its queue is full. */
  hash(password: string, key: WorkKey): Promise<string>;
  /**
   * Checks a login, queued fairly under `key` (the client's). With no stored hash (unknown
   * user) it still runs one scrypt at the configured cost against a dummy hash, so timing does
   * not reveal which usernames exist. Throws ServerBusy when the queue is full and
   * ClientAborted when `isAbandoned` says the client left while queued.
   */
  verify(password: string, stored: string | undefined, key: WorkKey, isAbandoned?: () => boolean): Promise<boolean>;
  /** Computes the dummy hash now, so the first unknown-user login costs no more than any other. */
  warmUp(): Promise<void>;
  /** Ends the hashing threads. */
  close(): Promise<void>;
  /** scrypt runs started so far (hash and verify, dummy included): lets tests prove a path ran none. */
  readonly runs: number;
  /** Hashes waiting for a slot now. */
  readonly queued: number;
}

/** Hashes on `maxConcurrent` low-priority worker threads; at most `maxQueued` more wait (then ServerBusy). */
export function createPasswordHasher(options: { cost: ScryptCost; maxConcurrent: number; maxQueued: number; fairness?: FairnessLimits }): PasswordHasher {
  const limiter = createWorkLimiter(options.maxConcurrent, options.maxQueued, options.fairness ?? DEFAULT_FAIRNESS);
  const pool = createScryptPool(options.maxConcurrent);
  const derive = (request: ScryptRequest): Promise<Buffer> => pool.derive(request);
  let runs = 0;
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> => (dummyHash ??= hashPassword(randomBytes(16).toString('hex'), options.cost, derive));

  return {
    close: () => pool.close(),
    warmUp: async () => {
      await dummy();
    },
    get runs() {
      return runs;
    },
    get queued() {
      return limiter.queued;
    },
    hash: (password, key) =>
      limiter.run(key, () => {
        runs++;
        return hashPassword(password, options.cost, derive);
      }),
    async verify(password, stored, key, isAbandoned) {
      const target = stored ?? (await dummy());
      const matches = await limiter.run(key, () => {
        // A queued login whose client has gone is not worth a hash.
        if (isAbandoned?.() === true) return Promise.reject(new ClientAborted());
        runs++;
        return verifyPassword(password, target, derive);
      });
      return matches && stored !== undefined;
    },
  };
}
