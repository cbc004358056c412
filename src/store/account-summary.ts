import type { StoredUser } from './users.js';

/**
 * What an administrator sees of an account (docs/contract/accounts.md "Administrators' routes", GET
 * /api/auth/users/{username}): counts and flags, never a secret, a digest or client settings.
 */
interface AccountSummary {
  readonly username: string;
  readonly level: StoredUser['level'];
  readonly groups: readonly string[];
  readonly totp: boolean;
  readonly passkeys: number;
  readonly tokens: number;
  /** OpenID Connect's e-mail address and display name, present when the account has them. */
  readonly email?: string;
  readonly name?: string;
}

/** The summary of `user`; a stored TOTP is always a confirmed one (a pending set-up lives in memory). */
export function accountSummaryOf(user: StoredUser): AccountSummary {
  return {
    username: user.username,
    level: user.level,
    groups: user.groups ?? [],
    totp: user.totp !== undefined,
    passkeys: user.passkeys?.length ?? 0,
    tokens: user.tokens?.length ?? 0,
    ...(user.email === undefined ? {} : { email: user.email }),
    ...(user.name === undefined ? {} : { name: user.name }),
  };
}
