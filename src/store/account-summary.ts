import type { StoredUser } from './users.js';

/**
 * What an administrator sees of an account (INTERFACE.md "Administrators", GET
 * /api/auth/users/{username}): counts and flags, never a secret, a digest or client settings.
 */
export interface AccountSummary {
  readonly username: string;
  readonly level: StoredUser['level'];
  readonly groups: readonly string[];
  readonly totp: boolean;
  readonly passkeys: number;
  readonly tokens: number;
}

// Read by name so each stored field counts here the moment it exists in StoredUser: the second
// factors are stored by their own modules. An enrolment still pending confirmation is not a
// second factor in force, so `totp` reads `confirmed` when the stored value has one.
export function accountSummaryOf(user: StoredUser): AccountSummary {
  const fields = user as unknown as Readonly<Record<string, unknown>>;
  return {
    username: user.username,
    level: user.level,
    groups: user.groups ?? [],
    totp: isInForce(fields['totp']),
    passkeys: countOf(fields['passkeys']),
    tokens: countOf(fields['tokens']),
  };
}

function isInForce(totp: unknown): boolean {
  if (typeof totp !== 'object' || totp === null) return false;
  const confirmed = (totp as Readonly<Record<string, unknown>>)['confirmed'];
  return confirmed === undefined || confirmed === true;
}

function countOf(list: unknown): number {
  return Array.isArray(list) ? list.length : 0;
}
