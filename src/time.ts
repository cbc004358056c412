// Times as numbers, named by what they count from and in: the service reads the wall clock in
// milliseconds (Date.now) and writes seconds into tokens and stored records (JWT `iat`, `exp`).

/** Milliseconds since the Unix epoch (1970-01-01T00:00:00Z), as Date.now() returns them. */
export type EpochMs = number;

/** Whole seconds since the Unix epoch: JWT claims (RFC 7519 NumericDate) and stored times. */
export type EpochSeconds = number;

/** The whole second `ms` falls in: how a time is written into a token or a stored record. */
export function epochSeconds(ms: EpochMs): EpochSeconds {
  return Math.floor(ms / 1000);
}
