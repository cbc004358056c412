import { PASSWORD_ONLY, type Amr } from '../auth/amr.js';
import type { TokenCodec } from '../auth/jwt.js';
import { newTokenId } from '../auth/session-key.js';
import type { Config } from '../config.js';
import type { ProxyTrust } from '../http/client-address.js';
import { clearedSessionCookie, sessionCookie } from '../http/cookies.js';
import type { StoredUser } from '../store/users.js';
import type { RequestContext } from './context.js';

export interface SessionCookies {
  /** A Set-Cookie line with a new session token for `user`, made as `amr` says. */
  issue(ctx: RequestContext, user: StoredUser, amr?: Amr): string;
  /** The Set-Cookie line that clears the session cookie. */
  cleared(ctx: RequestContext): string;
}

/** The one place session cookies are made, for the Flood endpoints and the account API alike. */
export function createSessionCookies(
  deps: { config: Config; codec: TokenCodec; proxyTrust: ProxyTrust; now: () => number },
): SessionCookies {
  const { config } = deps;
  const path = config.baseUri === '' ? '/' : config.baseUri;
  // Secure when configured, or when a trusted proxy says the client came over HTTPS.
  const isSecure = (ctx: RequestContext): boolean => config.secureCookie || deps.proxyTrust.isForwardedHttps(ctx.req);
  return {
    issue(ctx, user, amr = PASSWORD_ONLY) {
      const iat = Math.floor(deps.now() / 1000);
      // jti makes every token unique, so two logins in one second never share a token (and
      // revoking one on logout cannot end the other).
      const token = deps.codec.sign({
        username: user.username,
        iat,
        exp: iat + config.tokenTtlSeconds,
        sid: user.sessionKey,
        jti: newTokenId(),
        amr,
      });
      return sessionCookie(token, config.tokenTtlSeconds, deps.now(), {
        path,
        isSecure: isSecure(ctx),
        domain: config.cookieDomain,
      });
    },
    cleared(ctx) {
      return clearedSessionCookie({ path, isSecure: isSecure(ctx), domain: config.cookieDomain });
    },
  };
}
