import type { IncomingMessage } from 'node:http';
import { PASSWORD_ONLY, type Amr } from '../auth/amr.js';
import type { TokenCodec } from '../auth/jwt.js';
import type { Caller } from '../auth/session.js';
import type { SessionRecords } from '../auth/session-records.js';
import { newTokenId } from '../auth/session-key.js';
import type { Config } from '../config.js';
import { AuthRequired } from '../errors.js';
import { browserNameOf } from './browser-name.js';
import type { ProxyTrust } from '../http/client-address.js';
import { clearedSessionCookie, sessionCookie } from '../http/cookies.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser } from '../store/users.js';
import { epochSeconds, type EpochMs } from '../time.js';

/** What a cookie is made for: the request (its scheme, through a trusted proxy; its browser) and its client's address. */
type CookieRequest = { readonly req: IncomingMessage; readonly address: string };

export interface SessionCookies {
  /**
   * A sign-in: records a new session of `user` made as `amr` says (auth/session-records.ts), and
   * resolves with the Set-Cookie line of its token once the record is durable. Throws what the
   * sessions file's write throws (StoreWriteFailed, StoreOutcomeUnknown, StoreClosed).
   */
  begin(ctx: CookieRequest, user: StoredUser, amr?: Amr): Promise<string>;
  /**
   * After a credential change the caller made from its own session (`user` has a new session key):
   * that session goes on under the new key, now made as `amr` says; the Set-Cookie line of its new
   * token. A token without a session id (issued before sessions were recorded) begins a new session.
   * Throws AuthRequired when the session was ended meanwhile.
   */
  carryOver(ctx: CookieRequest, caller: Caller, user: StoredUser, amr: Amr): Promise<string>;
  /** The Set-Cookie line that clears the session cookie. */
  cleared(ctx: CookieRequest): string;
}

/** The one place session cookies are made, for the Flood endpoints and the account API alike. */
export function createSessionCookies(deps: {
  config: Config;
  codec: TokenCodec;
  proxyTrust: ProxyTrust;
  sessions: SessionRecords;
  logger: Logger;
  now: () => EpochMs;
}): SessionCookies {
  const { config, sessions } = deps;
  const path = config.baseUri === '' ? '/' : config.baseUri;
  // Secure when configured, or when a trusted proxy says the client came over HTTPS.
  const isSecure = (ctx: CookieRequest): boolean => config.secureCookie || deps.proxyTrust.isForwardedHttps(ctx.req);

  const cookieOf = (ctx: CookieRequest, user: StoredUser, amr: Amr, session: { id: string; iat: number }): string => {
    // jti makes every token unique, so two logins in one second never share a token (and
    // revoking one on logout cannot end the other).
    const token = deps.codec.sign({
      username: user.username,
      iat: session.iat,
      exp: session.iat + config.tokenTtlSeconds,
      sid: user.sessionKey,
      ses: session.id,
      jti: newTokenId(),
      amr,
    });
    return sessionCookie(token, config.tokenTtlSeconds, deps.now(), {
      path,
      isSecure: isSecure(ctx),
      domain: config.cookieDomain,
    });
  };

  const begin = async (ctx: CookieRequest, user: StoredUser, amr: Amr = PASSWORD_ONLY): Promise<string> => {
    const iat = epochSeconds(deps.now());
    const { id, ended } = await sessions.begin({
      user,
      amr,
      address: ctx.address,
      browser: browserNameOf(ctx.req.headers['user-agent']),
      expiresAt: iat + config.tokenTtlSeconds,
    });
    if (ended.length > 0) {
      deps.logger.info('oldest sessions ended: the account reached its limit of sessions', {
        event: 'sessions_ended_by_limit',
        username: user.username,
        count: ended.length,
      });
    }
    return cookieOf(ctx, user, amr, { id, iat });
  };

  return {
    begin,
    async carryOver(ctx, caller, user, amr) {
      const { ses, sid } = caller.claims;
      if (ses === undefined || sid === undefined) return begin(ctx, user, amr);
      const iat = epochSeconds(deps.now());
      const isCarried = await sessions.carryOver({
        id: ses,
        username: user.username,
        fromSessionKey: sid,
        sessionKey: user.sessionKey,
        amr,
        expiresAt: iat + config.tokenTtlSeconds,
      });
      if (!isCarried) throw new AuthRequired();
      return cookieOf(ctx, user, amr, { id: ses, iat });
    },
    cleared(ctx) {
      return clearedSessionCookie({ path, isSecure: isSecure(ctx), domain: config.cookieDomain });
    },
  };
}
