import { AuthRequired, NotAdministrator, SecondFactorSessionRequired } from '../errors.js';
import type { StoredUser, UserStore } from '../store/users.js';
import { isAdministrator } from '../validate/level.js';
import { hasSecondFactor, isTwoFactor } from './amr.js';
import type { SessionClaims, TokenCodec } from './jwt.js';
import type { RevocationList } from './revocations.js';

// The refusals every unauthenticated or non-administrator request gets, built once: a 401 or 403
// thrown per request then constructs no error (that was most of the cost of answering one).
const AUTH_REQUIRED = Object.freeze(new AuthRequired());
const NOT_ADMINISTRATOR = Object.freeze(new NotAdministrator());

export interface Caller {
  readonly user: StoredUser;
  readonly token: string;
  readonly claims: SessionClaims;
}

/**
 * `caller`, when its session may change what protects its account (password, second factors, machine
 * tokens): once the account has a second factor, only a session made with one (a code, or any passkey),
 * so a stolen password cannot add its own factor, remove the owner's, or mint a lasting token. Else
 * throws SecondFactorSessionRequired.
 */
export function requireProtectionChange(caller: Caller): Caller {
  const { amr } = caller.claims;
  const isSecondFactorSession = amr !== undefined && (amr.includes('otp') || amr.includes('hwk'));
  if (hasSecondFactor(caller.user) && !isSecondFactorSession) throw new SecondFactorSessionRequired();
  return caller;
}

/**
 * requireProtectionChange for adding a credential that can pass a two-factor gate (a passkey, or a
 * machine token where the gate says tokens=1): once the account has a second factor, only a
 * two-factor session (isTwoFactor). A passkey without user verification is one factor, and could
 * otherwise add one that claims verification, or mint a token, and pass as two.
 */
export function requireTwoFactorToAdd(caller: Caller): Caller {
  if (hasSecondFactor(caller.user) && !isTwoFactor(caller.claims.amr)) throw new SecondFactorSessionRequired();
  return caller;
}

export interface Credentials {
  /** The `jwt` cookie's value, if the request has a non-empty one. */
  readonly cookieToken: string | undefined;
  /** The `token` query parameter. */
  readonly queryToken: string | undefined;
}

type Checked = Caller | { readonly refused: string };
export type SessionAuthenticator = ReturnType<typeof createSessionAuthenticator>;

/**
 * The caller's account as `find` sees it now, while the caller's session still opens it; else
 * throws AuthRequired. Run again inside a store change (`find` = the change's view), so that a
 * change made since the request was authenticated counts.
 */
export function accountStillSignedIn(
  find: (username: string) => StoredUser | undefined, caller: Caller, revocations: RevocationList | undefined,
): StoredUser {
  const user = find(caller.user.username);
  if (user === undefined || sessionProblem(user, caller.token, caller.claims, revocations) !== undefined) {
    throw new AuthRequired();
  }
  return user;
}

/** Why a verified token no longer opens a session for `user`, or undefined when it does. */
function sessionProblem(
  user: StoredUser, token: string, claims: SessionClaims, revocations: RevocationList | undefined,
): string | undefined {
  if (claims.sid !== undefined) {
    // Tokens we issue name the session key; any credential change replaced it.
    if (claims.sid !== user.sessionKey) return 'issued before a credential change';
  } else if (Math.floor(claims.iat) < user.credentialsChangedAt) {
    // Tokens minted elsewhere: whole seconds, so one from the second of the change is accepted.
    return 'issued before a credential change';
  }
  if (revocations?.isRevoked(token, claims) === true) return 'revoked';
  return undefined;
}

export function createSessionAuthenticator(deps: {
  codec: TokenCodec;
  store: UserStore;
  revocations: RevocationList | undefined;
  nowSeconds: () => number;
  /** `--require-mfa-for-admins`: an administrator's session without two factors counts as none. */
  requireTwoFactorForAdministrators?: boolean;
}) {
  const isAdministratorRuleOn = deps.requireTwoFactorForAdministrators === true;
  /** check, without the administrators' two-factor rule (see authenticateAnyFactor). Never throws. */
  const checkAnyFactor = (credentials: Credentials): Checked => {
    // Spec section 5.2: the cookie wins; the query token is not even looked at then.
    const token = credentials.cookieToken ?? credentials.queryToken;
    if (token === undefined) return { refused: 'no token' };
    const inspected = deps.codec.inspect(token, deps.nowSeconds());
    if (!inspected.ok) return { refused: inspected.reason };
    const { claims } = inspected;
    const user = deps.store.find(claims.username);
    if (user === undefined) return { refused: 'unknown user' };
    const problem = sessionProblem(user, token, claims, deps.revocations);
    return problem === undefined ? { user, token, claims } : { refused: problem };
  };

  /** The caller behind the request's token, or the reason there is none. Never throws. */
  const check = (credentials: Credentials): Checked => {
    const result = checkAnyFactor(credentials);
    if (
      !isAdministratorRuleOn ||
      'refused' in result ||
      !isAdministrator(result.user.level) ||
      isTwoFactor(result.claims.amr)
    ) {
      return result;
    }
    return { refused: 'administrator without a second factor' };
  };

  // No cause: a 401 is never logged, so a TokenInvalid per refusal would be built for nobody.
  const orRefuse = (result: Checked): Caller => {
    if ('refused' in result) throw AUTH_REQUIRED;
    return result;
  };

  return {
    check,
    checkAnyFactor,
    /**
     * Like authenticate, but an administrator's one-factor session passes even when two factors
     * are required for administrators: the caller's own account API (where a second factor is set
     * up), logout, and the gate (which answers with a hint of its own) use it.
     */
    authenticateAnyFactor: (credentials: Credentials): Caller => orRefuse(checkAnyFactor(credentials)),
    /** The caller behind the request's token; throws AuthRequired. */
    authenticate: (credentials: Credentials): Caller => orRefuse(check(credentials)),
    /** Like authenticate, and throws NotAdministrator for any other level. */
    requireAdministrator(credentials: Credentials): Caller {
      const caller = orRefuse(check(credentials));
      if (!isAdministrator(caller.user.level)) throw NOT_ADMINISTRATOR;
      return caller;
    },
  };
}
