import { AuthRequired } from '../errors.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { SessionClaims, TokenCodec } from './jwt.js';
import type { RevocationList } from './revocations.js';
import type { SessionRecords } from './session-records.js';
import type { EpochSeconds } from '../time.js';

/** A request's account, as the session token it carried opens it. */
export interface Caller {
  readonly user: StoredUser;
  readonly token: string;
  readonly claims: SessionClaims;
}

export interface Credentials {
  /** The `jwt` cookie's value, if the request has a non-empty one. */
  readonly cookieToken: string | undefined;
  /** The `token` query parameter; counts only where the access table says (auth/access.ts `urlToken`). */
  readonly queryToken: string | undefined;
}

export type SessionChecker = ReturnType<typeof createSessionChecker>;

/** What ends a session besides a credential change. */
interface SessionEnds {
  /** `--revoke-on-logout`'s list of logged-out tokens, when set. */
  readonly revocations: RevocationList | undefined;
  /** The session records (auth/session-records.ts): a token naming one (`ses`) opens only while it is there. */
  readonly sessions: Pick<SessionRecords, 'isOpen'>;
}

/**
 * The caller's account as `find` sees it now, while the caller's session still opens it; else
 * throws AuthRequired. Run again inside a store change (`find` = the change's view), so that a
 * change made since the request was authenticated counts.
 */
export function accountStillSignedIn(
  find: (username: string) => StoredUser | undefined, caller: Caller, ends: SessionEnds,
): StoredUser {
  const user = find(caller.user.username);
  if (user === undefined || sessionProblem(user, caller.token, caller.claims, ends) !== undefined) {
    throw new AuthRequired();
  }
  return user;
}

/** Why a verified token no longer opens a session for `user`, or undefined when it does. */
function sessionProblem(user: StoredUser, token: string, claims: SessionClaims, ends: SessionEnds): string | undefined {
  if (claims.sid !== undefined) {
    // Tokens we issue name the session key; any credential change replaced it.
    if (claims.sid !== user.sessionKey) return 'issued before a credential change';
    // And their session: one lookup in memory, gone once it was ended
    // (docs/contract/links-and-sessions.md "Sessions"). Tokens issued before sessions were recorded name none.
    if (claims.ses !== undefined && !ends.sessions.isOpen(claims.ses, user.username, claims.sid)) return 'session ended';
  } else if (Math.floor(claims.iat) < user.credentialsChangedAt) {
    // Tokens minted elsewhere: whole seconds, so one from the second of the change is accepted.
    return 'issued before a credential change';
  }
  if (ends.revocations?.isRevoked(token, claims) === true) return 'revoked';
  return undefined;
}

/**
 * Opens session tokens: the same checks for every token wherever it came from
 * (docs/contract/flood-api.md "Tokens and cookies"). Which tokens a request may use, and what else
 * it needs, is auth/judge.ts's to say.
 */
export function createSessionChecker(deps: SessionEnds & {
  codec: TokenCodec;
  store: UserStore;
  nowSeconds: () => EpochSeconds;
}) {
  return {
    /** The caller behind `token`, or the reason there is none. Never throws. */
    check(token: string): Caller | { readonly refused: string } {
      const inspected = deps.codec.inspect(token, deps.nowSeconds());
      if (!inspected.ok) return { refused: inspected.reason };
      const { claims } = inspected;
      const user = deps.store.find(claims.username);
      if (user === undefined) return { refused: 'unknown user' };
      const problem = sessionProblem(user, token, claims, deps);
      return problem === undefined ? { user, token, claims } : { refused: problem };
    },
  };
}
