// The provider's lifetimes and limits, in one place (docs/contract/oidc.md; the
// reasons are in docs/security-notes.md, "OpenID Connect").

/** An authorization code lives 60 seconds and is used once. */
export const CODE_TTL_SECONDS = 60;
/** id_tokens: "exp (at most 1 hour)". */
export const ID_TOKEN_TTL_SECONDS = 3600;
/** Access tokens: short-lived, at most 1 hour; apps refresh or sign in again. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** A refresh token not used for this long stops working; each use makes a new one with a new 30 days. */
export const REFRESH_TOKEN_IDLE_SECONDS = 30 * 86_400;
/** A retired signing key stays in the JWKS this long after `keys rotate`: the longest an id_token it signed lives. */
export const RETIRED_KEY_KEEP_SECONDS = ID_TOKEN_TTL_SECONDS;

export const MAX_CLIENTS = 256;
export const MAX_REDIRECT_URIS = 16;
export const MAX_REDIRECT_URI_LENGTH = 2048;
export const MAX_CLIENT_NAME_LENGTH = 128;

/** Codes waiting to be exchanged, all clients together; past it the oldest goes. */
export const MAX_PENDING_CODES = 10_000;
/** Live access tokens kept in memory; past it the oldest goes (its app refreshes or signs in again). */
export const MAX_ACCESS_TOKENS = 100_000;
/** Refresh token families per account and client; a new sign-in beyond ends the oldest. */
export const MAX_GRANTS_PER_ACCOUNT_AND_CLIENT = 16;
/** Refresh token families in all. */
export const MAX_GRANTS = 20_000;
