import { integerIn, matching, objectOf, optional, storedList, stringOf, unixSeconds } from './check.js';
import type { CheckedType } from './check.js';
import { passwordChecker } from './auth.js';

// docs/contract/accounts.md "Stored per account", machine tokens: id, name, SHA-256 digest of the token,
// created, expires (optional), last used; the token itself is never stored.
export const MAX_MACHINE_TOKENS = 32;
export const MAX_TOKEN_DAYS = 3650;
/** `gh_` and 43 base64url characters: 256 random bits. */
export const MACHINE_TOKEN_FORMAT = /^gh_[A-Za-z0-9_-]{43}$/;
export const MACHINE_TOKEN_LENGTH = 46;

/** A token id taken from a path segment. */
export const checkMachineTokenId = matching(/^[A-Za-z0-9_-]{16}$/, 'a token id');
const checkTokenName = stringOf({ minLength: 1, maxLength: 64 });

const checkStoredMachineToken = objectOf(
  {
    id: checkMachineTokenId,
    name: checkTokenName,
    /** The SHA-256 digest of the whole token (prefix included), base64url. */
    digest: matching(/^[A-Za-z0-9_-]{43}$/, 'a token digest'),
    createdAt: unixSeconds,
    expiresAt: optional(unixSeconds),
    /** Written at most once an hour per token: a coarse "in use lately", not an audit trail. */
    lastUsedAt: optional(unixSeconds),
  },
  { rejectUnknownKeys: true },
);
export type StoredMachineToken = Readonly<CheckedType<typeof checkStoredMachineToken>>;

/** An account's machine tokens as stored: 1 to 32 (absent when none), ids distinct. */
export const checkStoredMachineTokens =
  storedList(checkStoredMachineToken, MAX_MACHINE_TOKENS, 'machine tokens', 'token id');

const newMachineTokenFields = { name: checkTokenName, days: optional(integerIn(1, MAX_TOKEN_DAYS)) };

/** A new token: a name, and optionally a lifetime in whole days (none: no expiry). */
export const checkNewMachineToken = objectOf(newMachineTokenFields);

/**
 * POST /api/auth/account/tokens: a new token and the account's current password (a token is a way
 * in: docs/contract/access.md "Ways in").
 */
export const checkNewMachineTokenBody = objectOf({ ...newMachineTokenFields, password: passwordChecker(1) });
