import { randomBytes } from 'node:crypto';
import { hashPassword, verifyPassword, type ScryptCost } from './password.js';
import { createWorkLimiter, type WorkLimiter } from './work-limiter.js';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Checks a login. With no stored hash (unknown user) it still runs one scrypt at the
   * configured cost against a dummy hash, so timing does not reveal which usernames exist.
   */
  verify(password: string, stored: string | undefined): Promise<boolean>;
  /** Computes the dummy hash now, so the first unknown-user login costs no more than any other. */
  warmUp(): Promise<void>;
  readonly limiter: WorkLimiter;
  /** scrypt runs started so far (hash and verify, dummy included): lets tests prove a path ran none. */
  readonly runs: number;
}

export function createPasswordHasher(options: { cost: ScryptCost; maxConcurrent: number; maxQueued: number }): PasswordHasher {
  const limiter = createWorkLimiter(options.maxConcurrent, options.maxQueued);
  let runs = 0;
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> => (dummyHash ??= hashPassword(randomBytes(16).toString('hex'), options.cost));

  return {
    limiter,
    warmUp: async () => {
      await dummy();
    },
    get runs() {
      return runs;
    },
    hash: (password) =>
      limiter.run(() => {
        runs++;
        return hashPassword(password, options.cost);
      }),
    async verify(password, stored) {
      const target = stored ?? (await dummy());
      const matches = await limiter.run(() => {
        runs++;
        return verifyPassword(password, target);
      });
      return matches && stored !== undefined;
    },
  };
}
