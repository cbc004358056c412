import { fail, objectOf, optional, partialObjectOf, pass, stringOf, type Checker, type CheckedType } from './check.js';
import { checkClientSettings } from './client-settings.js';
import { checkGroups } from './groups.js';
import { checkAccessLevel } from './level.js';
import { checkDisplayName, checkEmail } from './profile.js';

// docs/contract/flood-api.md "Values": username 1-256 characters without control characters, kept exactly
// as sent; password 1-1,024 characters with a configurable higher minimum.
export const MAX_USERNAME_LENGTH = 256;
export const MAX_PASSWORD_LENGTH = 1024;

/** Any stored username: also what a login, the offline commands and an older users file may name. */
export const checkUsername = stringOf({ minLength: 1, maxLength: MAX_USERNAME_LENGTH });

const DOT_SEGMENT_PROBLEM = 'must not be "." or "..": browsers and proxies rewrite those as dot segments, so no request could name this user in a path';

/**
 * A username being created or renamed to, or taken from a path segment once percent-decoded
 * (docs/contract/flood-api.md "Values", username): not exactly "." or ".." (WHATWG URL resolves even %2E%2E). Names
 * merely holding dots or slashes are fine; an older users file may hold "." or "..", so stored
 * names are checked by checkUsername alone.
 */
export const checkNewUsername: Checker<string> = (input, path) => {
  const result = checkUsername(input, path);
  if (result.ok && (result.value === '.' || result.value === '..')) return fail(path, DOT_SEGMENT_PROBLEM);
  return result;
};

export const checkPathUsername = checkNewUsername;

export function passwordChecker(minLength: number): Checker<string> {
  return stringOf({ minLength: Math.max(1, minLength), maxLength: MAX_PASSWORD_LENGTH, allowControlCharacters: true });
}

/**
 * Login: any stored password was valid when set, so only the absolute bounds apply here. `code`:
 * a TOTP or recovery code, for an account with TOTP
 * (docs/contract/accounts.md "Two-step sign-in"); no longer text is one.
 */
export const checkAuthenticateBody = objectOf({
  username: checkUsername,
  password: passwordChecker(1),
  code: optional(stringOf({ minLength: 1, maxLength: 64 })),
});
export type AuthenticateBody = CheckedType<typeof checkAuthenticateBody>;

/** The fields a register body must have and an update body may have. */
function userFields(minPasswordLength: number) {
  return {
    username: checkNewUsername,
    password: passwordChecker(minPasswordLength),
    client: checkClientSettings,
    level: checkAccessLevel,
  };
}

export function registerBodyChecker(minPasswordLength: number) {
  return objectOf(userFields(minPasswordLength));
}

// docs/contract/access.md "Administrators and two factors": an administrator takes ways in away (`false`), never sets one up.
const takenAway = (what: string): Checker<false> => (input, path) =>
  (input === false ? pass(false as const) : fail(path, `can only be false: it removes ${what}, which only the account itself sets up`));

/** A field an update may set or, with null, remove. */
function orNull<T>(check: Checker<T>): Checker<T | null> {
  return (input, path) => (input === null ? pass(null) : check(input, path));
}

// `email` and `name` (docs/contract/oidc.md "Accounts"): an address an administrator sets counts as verified.
export function updateBodyChecker(minPasswordLength: number) {
  return partialObjectOf({
    ...userFields(minPasswordLength),
    groups: checkGroups,
    totp: takenAway('TOTP'),
    passkeys: takenAway('every passkey'),
    tokens: takenAway('every machine token'),
    email: orNull(checkEmail),
    name: orNull(checkDisplayName),
  });
}

/**
 * POST /api/auth/users (docs/contract/accounts.md "Administrators' routes"): an account made outside the Flood API,
 * without client settings (a `client` key is stripped like any unknown one), groups optional.
 */
export function createUserBodyChecker(minPasswordLength: number) {
  const { username, password, level } = userFields(minPasswordLength);
  return objectOf({ username, password, level, groups: optional(checkGroups) });
}
