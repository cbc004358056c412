import { fail, integerIn, objectOf, optional, pass, stringOf, type Checker, type CheckedType } from './check.js';

// INTERFACE.md "Stored per account", machine tokens: id, name, SHA-256 digest of the token,
// created, expires (optional), last used; the token itself is never stored.
export const MAX_MACHINE_TOKENS = 32;
export const MAX_TOKEN_NAME_LENGTH = 64;
export const MAX_TOKEN_DAYS = 3650;
/** `gh_` and 43 base64url characters: 256 random bits. */
export const MACHINE_TOKEN_FORMAT = /^gh_[A-Za-z0-9_-]{43}$/;
export const MACHINE_TOKEN_LENGTH = 46;
export const MACHINE_TOKEN_ID_FORMAT = /^[A-Za-z0-9_-]{16}$/;
/** The SHA-256 digest of the whole token (prefix included), base64url. */
export const MACHINE_TOKEN_DIGEST_FORMAT = /^[A-Za-z0-9_-]{43}$/;

const matching =
  (format: RegExp, what: string): Checker<string> =>
  (input, path) =>
    typeof input === 'string' && format.test(input) ? pass(input) : fail(path, `is not ${what}`);

const checkTokenName = stringOf({ minLength: 1, maxLength: MAX_TOKEN_NAME_LENGTH });
const unixSeconds = integerIn(0, Number.MAX_SAFE_INTEGER);

const checkStoredMachineToken = objectOf(
  {
    id: matching(MACHINE_TOKEN_ID_FORMAT, 'a token id'),
    name: checkTokenName,
    digest: matching(MACHINE_TOKEN_DIGEST_FORMAT, 'a token digest'),
    /** Unix seconds, as every time in the users file. */
    createdAt: unixSeconds,
    expiresAt: optional(unixSeconds),
    /** Written at most once an hour per token: a coarse "in use lately", not an audit trail. */
    lastUsedAt: optional(unixSeconds),
  },
  { rejectUnknownKeys: true },
);
export type StoredMachineToken = Readonly<CheckedType<typeof checkStoredMachineToken>>;

/** An account's machine tokens as stored: 1 to 32 (absent when none), ids distinct. */
export const checkStoredMachineTokens: Checker<readonly StoredMachineToken[]> = (input, path) => {
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_MACHINE_TOKENS) {
    return fail(path, `must be an array of 1 to ${MAX_MACHINE_TOKENS} machine tokens`);
  }
  const tokens: StoredMachineToken[] = [];
  const ids = new Set<string>();
  for (const [index, item] of input.entries()) {
    const result = checkStoredMachineToken(item, `${path}[${index}]`);
    if (!result.ok) return result;
    if (ids.has(result.value.id)) return fail(`${path}[${index}].id`, 'repeats a token id');
    ids.add(result.value.id);
    tokens.push(Object.freeze(result.value));
  }
  return pass(Object.freeze(tokens));
};

/** POST /api/auth/account/tokens: a name, and optionally a lifetime in whole days (none: no expiry). */
export const checkNewMachineTokenBody = objectOf({ name: checkTokenName, days: optional(integerIn(1, MAX_TOKEN_DAYS)) });
export type NewMachineTokenBody = CheckedType<typeof checkNewMachineTokenBody>;

/** A token id taken from a path segment. */
export const checkMachineTokenId = matching(MACHINE_TOKEN_ID_FORMAT, 'a token id');
