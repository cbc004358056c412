import type { Amr } from '../auth/amr.js';
import type { StoredUser } from '../store/users.js';
import { ID_TOKEN_TTL_SECONDS } from './limits.js';
import type { Scope } from './parameters.js';

// The claims an app receives (docs/contract/oidc.md "id_token" and "Userinfo"), by
// scope (OpenID Connect Core section 5.4): profile -> preferred_username and name, email -> email
// and email_verified (only when the account has an address), groups -> groups. The same in the
// id_token and at userinfo, since apps read them from one or the other (Grafana from the id_token).

/** `sub` and the claims of `scopes`, from the account as it is now. */
export function userClaims(user: StoredUser, sub: string, scopes: readonly Scope[]): Record<string, unknown> {
  const claims: Record<string, unknown> = { sub };
  if (scopes.includes('profile')) {
    claims['preferred_username'] = user.username;
    if (user.name !== undefined) claims['name'] = user.name;
  }
  if (scopes.includes('email') && user.email !== undefined) {
    claims['email'] = user.email;
    claims['email_verified'] = user.emailVerified === true;
  }
  if (scopes.includes('groups')) claims['groups'] = user.groups ?? [];
  return claims;
}

interface IdTokenFacts {
  readonly issuer: string;
  readonly clientId: string;
  readonly user: StoredUser;
  readonly sub: string;
  readonly scopes: readonly Scope[];
  /** Absent on a refresh (OpenID Connect Core section 12.2). */
  readonly nonce: string | undefined;
  readonly amr: Amr;
  readonly authTime: number;
  readonly nowSeconds: number;
}

/** The id_token's claims (OpenID Connect Core section 2): the user's, then iss, aud, azp, exp, iat, auth_time, nonce, amr. */
export function idTokenClaims(facts: IdTokenFacts): Record<string, unknown> {
  return {
    iss: facts.issuer,
    ...userClaims(facts.user, facts.sub, facts.scopes),
    aud: facts.clientId,
    azp: facts.clientId,
    exp: facts.nowSeconds + ID_TOKEN_TTL_SECONDS,
    iat: facts.nowSeconds,
    auth_time: facts.authTime,
    ...(facts.nonce === undefined ? {} : { nonce: facts.nonce }),
    amr: facts.amr,
  };
}
