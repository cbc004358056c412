import { fail, objectOf, partialObjectOf, stringOf, type Checker, type CheckedType } from './check.js';
import { checkClientSettings } from './client-settings.js';
import { checkAccessLevel } from './level.js';

// INTERFACE.md "Values": username 1-256 characters without control characters, kept exactly
// as sent; password 1-1,024 characters with a configurable higher minimum.
export const MAX_USERNAME_LENGTH = 256;
export const MAX_PASSWORD_LENGTH = 1024;

export const checkUsername = stringOf({ minLength: 1, maxLength: MAX_USERNAME_LENGTH });

export function passwordChecker(minLength: number): Checker<string> {
  return stringOf({ minLength: Math.max(1, minLength), maxLength: MAX_PASSWORD_LENGTH, allowControlCharacters: true });
}

/** Login: any stored password was valid when set, so only the absolute bounds apply here. */
export const checkAuthenticateBody = objectOf({ username: checkUsername, password: passwordChecker(1) });
export type AuthenticateBody = CheckedType<typeof checkAuthenticateBody>;

/** The fields a register body must have and an update body may have. */
function userFields(minPasswordLength: number) {
  return {
    username: checkUsername,
    password: passwordChecker(minPasswordLength),
    client: checkClientSettings,
    level: checkAccessLevel,
  };
}

export function registerBodyChecker(minPasswordLength: number) {
  return objectOf(userFields(minPasswordLength));
}
export type RegisterBody = CheckedType<ReturnType<typeof registerBodyChecker>>;

export function updateBodyChecker(minPasswordLength: number) {
  return partialObjectOf(userFields(minPasswordLength));
}
export type UpdateBody = CheckedType<ReturnType<typeof updateBodyChecker>>;

/**
 * A username taken from a path segment, after percent-decoding. A decoded "/" or a dot
 * segment is refused so that no path spelling can address anything but one plain name.
 */
export const checkPathUsername: Checker<string> = (input, path) => {
  const result = checkUsername(input, path);
  if (!result.ok) return result;
  if (result.value.includes('/') || result.value === '.' || result.value === '..') {
    return fail(path, 'must not contain "/" or be a dot segment');
  }
  return result;
};
