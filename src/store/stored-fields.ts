import type { Checker } from '../validate/check.js';

// The fields a feature keeps in an account of users.json: the core holds them, copies them, counts
// them (a second factor, the account's summary) and drops them when a way in is taken away; the
// feature that writes a field gives the check it is read back with (src/features.ts lists them), so
// the users file is checked against the code that writes it (docs/contract/accounts.md "Stored per
// account").

/**
 * An account's TOTP (SECURITY.md "Two-step sign-in (TOTP)"): the seed sealed with the seal key, the
 * last time step that signed in (a step signs in once), and the digests of the unused recovery codes.
 */
export interface StoredTotp {
  readonly sealedSeed: string;
  readonly lastUsedStep: number;
  readonly recoveryDigests: readonly string[];
}

/** One passkey: the credential id and the user handle it was made under (base64url), its COSE key and algorithm, its counter and times. */
export interface StoredPasskey {
  readonly id: string;
  readonly name: string;
  /** The COSE_Key as the authenticator sent it, base64url; imported again at each use. */
  readonly publicKey: string;
  readonly algorithm: number;
  readonly signCount: number;
  readonly userHandle: string;
  readonly createdAt: number;
  readonly lastUsedAt?: number;
}

/** The check of each field a feature keeps in an account, from the feature that writes it. */
export interface FeatureFieldChecks {
  /** src/totp/stored.ts */
  readonly totp: Checker<StoredTotp>;
  /** src/passkeys/checks.ts */
  readonly passkeys: Checker<readonly StoredPasskey[]>;
}
