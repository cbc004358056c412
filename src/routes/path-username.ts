import { InvalidPathParameter } from '../errors.js';
import { checkPathUsername } from '../validate/auth.js';

/**
 * The username a path names, as the router decoded it once ("%2F" is part of the name): a segment the
 * router refused (a bad escape, "." or "..", a control character) or a name no account could have gives 400.
 */
export function usernameFromPath(decoded: string | undefined): string {
  const result = decoded === undefined ? undefined : checkPathUsername(decoded, 'username');
  if (result === undefined || !result.ok) throw new InvalidPathParameter();
  return result.value;
}
