/**
 * How a session was made (RFC 8176 `amr` values we issue): `pwd` a password, `otp` a TOTP or
 * recovery code, `hwk` a passkey, `user` the authenticator verified the user (PIN, biometric).
 */
const AMR_VALUES = ['pwd', 'otp', 'hwk', 'user'] as const;
type AmrValue = (typeof AMR_VALUES)[number];
export type Amr = readonly AmrValue[];

export const PASSWORD_ONLY: Amr = Object.freeze(['pwd']);
export const PASSWORD_AND_CODE: Amr = Object.freeze(['pwd', 'otp']);

/** Two factors (docs/contract/accounts.md "Two-step sign-in"): a code after the password, or a passkey that verified its user. */
export function isTwoFactor(amr: Amr | undefined): boolean {
  if (amr === undefined) return false;
  return amr.includes('otp') || (amr.includes('hwk') && amr.includes('user'));
}

/** The account (a stored user) has a second factor in force: TOTP, or a passkey (whose sign-in can verify its user). */
export function hasSecondFactor(account: { readonly totp?: unknown; readonly passkeys?: unknown }): boolean {
  return account.totp !== undefined || account.passkeys !== undefined;
}

/** The passkey `amr`: `hwk`, plus `user` when the authenticator says it verified the user. */
export function passkeyAmr(isUserVerified: boolean): Amr {
  return isUserVerified ? PASSKEY_VERIFIED : PASSKEY_PRESENT;
}
const PASSKEY_VERIFIED: Amr = Object.freeze(['hwk', 'user']);
const PASSKEY_PRESENT: Amr = Object.freeze(['hwk']);

/** An `amr` claim as read from a token we signed: undefined unless an array of at most 4 known values. */
export function readAmr(input: unknown): Amr | undefined {
  if (!Array.isArray(input) || input.length > AMR_VALUES.length) return undefined;
  const values: AmrValue[] = [];
  for (const item of input) {
    const known = AMR_VALUES.find((value) => value === item);
    if (known === undefined) return undefined;
    values.push(known);
  }
  return Object.freeze(values);
}

/**
 * The `amr` of the caller's new cookie after a change of its account's ways in
 * (docs/contract/access.md "Ways in"): `pwd` (the change carried the password), and the factors the
 * session proved that the account still has: `otp` while it has TOTP, `hwk` (with `user`) while it has
 * a passkey; plus `added`, a factor the change itself proved (confirming TOTP proves `otp`).
 */
export function amrAfterChange(
  proved: Amr | undefined,
  account: { readonly totp?: unknown; readonly passkeys?: unknown },
  added?: AmrValue,
): Amr {
  const has = (value: AmrValue): boolean => proved?.includes(value) === true || value === added;
  const kept = AMR_VALUES.filter((value) => {
    if (value === 'pwd') return true;
    if (value === 'otp') return has('otp') && account.totp !== undefined;
    return has(value) && account.passkeys !== undefined;
  });
  return kept.length === 1 ? PASSWORD_ONLY : Object.freeze(kept);
}
