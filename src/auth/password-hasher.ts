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
}

export function createPasswordHasher(options: { cost: ScryptCost; maxConcurrent: number; maxQueued: number }): PasswordHasher {
  const limiter = createWorkLimiter(options.maxConcurrent, options.maxQueued);
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> => (dummyHash ??= hashPassword(randomBytes(16).toString('hex'), options.cost));

  return {
    limiter,
    warmUp: async () => {
      await dummy();
    },
    hash: (password) => limiter.run(() => hashPassword(password, options.cost)),
    async verify(password, stored) {
      const target = stored ?? (await dummy());
      const matches = await limiter.run(() => verifyPassword(password, target));
      return matches && stored !== undefined;
    },
  };
}
