import { fail, integerIn, matching, objectOf, pass, type Checker } from '../validate/check.js';
import type { StoredTotp } from '../store/stored-fields.js';
import { RECOVERY_CODE_COUNT, RECOVERY_DIGEST_FORMAT } from './codes.js';
import { SEALED_FORMAT } from './seal.js';

/**
 * An account's TOTP as users.json holds it (SECURITY.md "Two-step sign-in (TOTP)"): a seed sealed
 * in our format, the last step that signed in, at most ten recovery code digests; nothing else.
 */
export const checkStoredTotp: Checker<StoredTotp> = objectOf(
  {
    sealedSeed: matching(SEALED_FORMAT, 'a sealed seed'),
    lastUsedStep: integerIn(0, Number.MAX_SAFE_INTEGER),
    recoveryDigests: (input: unknown, path: string) => {
      if (!Array.isArray(input) || input.length > RECOVERY_CODE_COUNT) {
        return fail(path, `must be an array of at most ${RECOVERY_CODE_COUNT} digests`);
      }
      const bad = input.findIndex((item) => typeof item !== 'string' || !RECOVERY_DIGEST_FORMAT.test(item));
      if (bad !== -1) return fail(`${path}[${bad}]`, 'is not a recovery code digest');
      return pass(Object.freeze([...(input as string[])]) as readonly string[]);
    },
  },
  { rejectUnknownKeys: true },
);
