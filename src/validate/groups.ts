import { fail, pass, type Checker } from './check.js';

// docs/contract/accounts.md "Stored per account": 0 to 32 group names, each 1 to 64 of a-z 0-9 _ -.
// Names this narrow go into the Remote-Groups header and a forward URL as they are.
const MAX_GROUPS = 32;
const MAX_GROUP_NAME_LENGTH = 64;
const GROUP_NAME = /^[a-z0-9_-]{1,64}$/;

/**
 * An account's groups: an array of at most 32 distinct group names. A longer list is refused
 * before any name in it is looked at, with one problem, however long it is.
 */
export const checkGroups: Checker<readonly string[]> = (input, path) => {
  if (!Array.isArray(input)) return fail(path, 'must be an array of group names');
  if (input.length > MAX_GROUPS) return fail(path, `must hold at most ${MAX_GROUPS} groups`);
  const seen = new Set<string>();
  for (const [index, name] of input.entries()) {
    if (typeof name !== 'string' || !GROUP_NAME.test(name)) {
      return fail(`${path}[${index}]`, `must be 1 to ${MAX_GROUP_NAME_LENGTH} characters of a-z, 0-9, _ and -`);
    }
    if (seen.has(name)) return fail(`${path}[${index}]`, 'repeats a group');
    seen.add(name);
  }
  return pass(Object.freeze([...seen]));
};

/** Stored groups: as checkGroups, and never empty (an account without groups has no field). */
export const checkStoredGroups: Checker<readonly string[]> = (input, path) => {
  const result = checkGroups(input, path);
  if (result.ok && result.value.length === 0) {
    return fail(path, 'must not be empty (an account without groups has no "groups" field)');
  }
  return result;
};

/**
 * A forward URL's `group=a,b`: the list of groups of which a caller must be in one, or
 * undefined when it is not a comma-separated list of valid names (too long, empty, a bad name).
 */
export function parseGroupFilter(text: string): readonly string[] | undefined {
  if (text.length === 0 || text.length > MAX_GROUPS * (MAX_GROUP_NAME_LENGTH + 1)) return undefined;
  const names = text.split(',');
  return names.length <= MAX_GROUPS && names.every((name) => GROUP_NAME.test(name)) ? names : undefined;
}
