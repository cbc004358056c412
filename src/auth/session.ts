import { AuthRequired, NotAdministrator, TokenInvalid } from '../errors.js';
import type { StoredUser, UserStore } from '../store/users.js';
import { isAdministrator } from '../validate/level.js';
import type { SessionClaims, TokenCodec } from './jwt.js';
import type { RevocationList } from './revocations.js';

export interface Caller {
  readonly user: StoredUser;
  readonly token: string;
  readonly claims: SessionClaims;
}

export interface Credentials {
  /** The `jwt` cookie's value, if the request has a non-empty one. */
  readonly cookieToken: string | undefined;
  /** The `token` query parameter. */
  readonly queryToken: string | undefined;
}

export interface SessionAuthenticator {
  /** The caller behind the request's token, or the reason there is none. Never throws. */
  check(credentials: Credentials): Caller | { readonly refused: string };
  /** The caller behind the request's token; throws AuthRequired (with the reason as cause). */
  authenticate(credentials: Credentials): Caller;
  /** Like authenticate, and throws NotAdministrator for any other level. */
  requireAdministrator(credentials: Credentials): Caller;
}

export function createSessionAuthenticator(deps: {
  codec: TokenCodec;
  store: UserStore;
  revocations: RevocationList | undefined;
  nowSeconds: () => number;
}): SessionAuthenticator {
  const check = (credentials: Credentials): Caller | { readonly refused: string } => {
    // Spec section 5.2: the cookie wins; the query token is not even looked at then.
    const token = credentials.cookieToken ?? credentials.queryToken;
    if (token === undefined) return { refused: 'no token' };
    const inspected = deps.codec.inspect(token, deps.nowSeconds());
    if (!inspected.ok) return { refused: inspected.reason };
    const { claims } = inspected;
    const user = deps.store.find(claims.username);
    if (user === undefined) return { refused: 'unknown user' };
    // iat has whole seconds: a token issued in the same second as the change is accepted, so
    // the session the change itself hands out works at once.
    if (Math.floor(claims.iat) < user.credentialsChangedAt) return { refused: 'issued before a credential change' };
    if (deps.revocations?.isRevoked(token, claims) === true) return { refused: 'revoked' };
    return { user, token, claims };
  };

  const authenticate = (credentials: Credentials): Caller => {
    const result = check(credentials);
    if ('refused' in result) throw new AuthRequired({ cause: new TokenInvalid(result.refused) });
    return result;
  };

  return {
    check,
    authenticate,
    requireAdministrator(credentials) {
      const caller = authenticate(credentials);
      if (!isAdministrator(caller.user.level)) throw new NotAdministrator();
      return caller;
    },
  };
}
