import { endOnLogout } from '../auth/logout.js';
import { isVisibleAscii } from '../http/header-value.js';
import { sendStatic } from '../http/respond.js';
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import { buildPage, type Sha256Base64 } from '../pages/shell.js';
import type { Route, RouteDeps } from './context.js';
import { MAX_RD_LENGTH } from './forward.js';

const EMPTY = Buffer.alloc(0);
/** The sign-in page, saying the person is signed out (pages/sign-in.ts). */
const SIGNED_OUT = 'login?signed_out=1';

/**
 * GET `{base}/logout`, for a link or a typed address: ends the session as a browser's GET
 * `{base}/api/auth/logout` does (clears the cookie, ends its session record and what apps got
 * through it; revokes the token when --revoke-on-logout is set: auth/logout.ts) and sends the browser
 * to the sign-in page beside it (`login`, relative, so it works under any base URI and any mount),
 * which says the person is signed out (`signed_out=1`), passing `rd` on for the sign-in page to
 * judge. Without a session
 * it still clears the cookie and redirects: the page never shows an error or JSON. A navigation
 * another site started (access row `signOutPage`) signs nothing out: it gets a page whose button does.
 */
export function logoutPageRoutes(
  deps: Pick<RouteDeps, 'revocations' | 'sessions' | 'cookies' | 'now'>, sha256Base64: Sha256Base64,
): Route[] {
  const confirmPage = buildPage({ title: 'Sign out', body: CONFIRM_BODY, scripts: [BUILT_SCRIPTS['pages/sign-out']] }, sha256Base64);
  return [
    { method: 'GET', path: '/logout', access: 'signOutPage', body: 'none', async handler(ctx) {
      if (ctx.admission.isCrossSite) {
        sendStatic(ctx.res, 200, confirmPage.body, confirmPage.headers);
        return;
      }
      // Any factor: an administrator's one-factor session (--require-mfa-for-admins) is revoked too.
      const { caller } = ctx.admission;
      if (caller !== undefined) await endOnLogout(deps, caller, 'browser');
      const rd = ctx.query['rd'];
      const location = rd !== undefined && rd !== '' && rd.length <= MAX_RD_LENGTH && isVisibleAscii(rd)
        ? `${SIGNED_OUT}&rd=${encodeURIComponent(rd)}`
        : SIGNED_OUT;
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

const CONFIRM_BODY = `
<h1>Sign out</h1>
<p>Another site sent you here. Sign out of Gatehouse?</p>
<p id="message" class="message" role="alert" hidden></p>
<button type="button" id="sign-out">Sign out</button>
<p><a id="stay" class="button secondary" href="login">Stay signed in</a></p>
`;
