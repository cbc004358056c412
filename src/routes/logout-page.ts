import { isVisibleAscii } from '../http/header-value.js';
import { sendStatic } from '../http/respond.js';
import type { Route, RouteDeps } from './context.js';
import { MAX_RD_LENGTH } from './forward.js';

const EMPTY = Buffer.alloc(0);

/**
 * GET `{base}/logout`, for a link or a typed address: ends the session as GET
 * `{base}/api/auth/logout` does (clears the cookie; revokes the token when --revoke-on-logout is
 * set) and sends the browser to the sign-in page beside it (`login`, relative, so it works under
 * any base URI and any mount), passing `rd` on for the sign-in page to judge. Without a session
 * it still clears the cookie and redirects: the page never shows an error or JSON.
 */
export function logoutPageRoutes(deps: Pick<RouteDeps, 'session' | 'revocations' | 'cookies' | 'now'>): Route[] {
  return [
    { method: 'GET', path: '/logout', body: 'none', async handler(ctx) {
      // Any factor: an administrator's one-factor session (--require-mfa-for-admins) is revoked too.
      const caller = deps.session.checkAnyFactor(ctx.credentials);
      if (!('refused' in caller) && deps.revocations !== undefined) {
        await deps.revocations.revoke(caller.token, caller.claims, Math.floor(deps.now() / 1000));
      }
      const rd = ctx.query['rd'];
      const location = rd !== undefined && rd !== '' && rd.length <= MAX_RD_LENGTH && isVisibleAscii(rd)
        ? `login?rd=${encodeURIComponent(rd)}`
        : 'login';
      sendStatic(ctx.res, 303, EMPTY, {
        location,
        'set-cookie': deps.cookies.cleared(ctx),
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'content-length': 0,
      });
    } },
  ];
}
