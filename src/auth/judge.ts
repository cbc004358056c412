import type { IncomingMessage } from 'node:http';
import {
  AuthRequired, CrossSiteRequest, NotAdministrator, NotGatehouseOrigin, ProxyRequired, SecondFactorSessionRequired,
  UnsupportedMediaType, WrongPassword,
} from '../errors.js';
import { announcesBody, isJsonContentType } from '../http/body.js';
import type { ProxyTrust } from '../http/client-address.js';
import type { OriginReader } from '../http/request-origin.js';
import { isCrossSiteRequest } from '../http/same-origin.js';
import type { Logger } from '../log/logger.js';
import { isAdministrator, type AccessLevel } from '../validate/level.js';
import { ACCESS, type AccessRow } from './access.js';
import { hasSecondFactor, isTwoFactor } from './amr.js';
import type { Caller, Credentials, SessionChecker } from './session.js';
import { confirmedPassword, type PasswordChecks } from './throttled-password.js';

// The refusals, built once: a 401 or 403 thrown per request then constructs no error.
const AUTH_REQUIRED = Object.freeze(new AuthRequired());
const NOT_ADMINISTRATOR = Object.freeze(new NotAdministrator());
const SECOND_FACTOR_SESSION_REQUIRED = Object.freeze(new SecondFactorSessionRequired());
const CROSS_SITE_REQUEST = Object.freeze(new CrossSiteRequest());
const UNSUPPORTED_MEDIA_TYPE = Object.freeze(new UnsupportedMediaType());
const PROXY_REQUIRED = Object.freeze(new ProxyRequired());

/** What the judge lets a handler have for one request. */
export interface Admission {
  /** The caller the row let in; undefined where anyone may ask, and on password rows (see confirmPassword). */
  readonly caller: Caller | undefined;
  /** On a row with crossSite `page`: another site started this navigation, so the page asks first. */
  readonly isCrossSite: boolean;
  /**
   * On a row that needs the current password: the caller, once `password` is the account's (checked
   * under the login throttle: 429 when throttled, 403 WRONG_PASSWORD when wrong). The only way such a
   * handler gets its caller.
   */
  confirmPassword(password: string): Promise<Caller>;
}

const NOT_CONFIRMED = (): Promise<Caller> => Promise.reject(new TypeError('this row does not take the current password'));

export type Judge = ReturnType<typeof createJudge>;

/**
 * The one judge of who may do what (auth/access.ts). `admit` runs before every handler, in this
 * order: the origin the request was sent to, where it came from, the credential the row counts, the
 * administrators' two-factor setting, the level, the factors, the body's type; the password, which
 * needs the body, comes last through Admission.confirmPassword. The forward endpoint's caller is
 * judged against what its URL asks by the gate (routes/gate-service.ts).
 */
export function createJudge(deps: {
  readonly session: SessionChecker;
  readonly proxyTrust: ProxyTrust;
  /** How many accounts exist (`first-or-administrator`). */
  readonly accountCount: () => number;
  /** Which origin a request was sent to: Gatehouse's own, a Flood web client's, or an app's. */
  readonly origins: OriginReader;
  /** `--require-mfa-for-admins`. */
  readonly isTwoFactorRequiredOfAdministrators: boolean;
  readonly passwords: PasswordChecks;
  readonly logger: Logger;
}) {
  const { session, proxyTrust, origins } = deps;
  const NOT_GATEHOUSE_ORIGIN = Object.freeze(new NotGatehouseOrigin(origins.homeUrl && `${origins.homeUrl}/gatehouse/account`));

  /** Where a `home` row answers (access.ts OriginRule): home; a Flood origin too for the Flood endpoints; anywhere before the first account. */
  const isAnsweredHere = (row: AccessRow, req: IncomingMessage): boolean => {
    const kind = origins.kindOf(req);
    return kind === 'home' ||
      (kind === 'flood' && row.body === 'flood') ||
      (row.caller === 'first-or-administrator' && deps.accountCount() === 0);
  };
  // Where the request was sent, as the browser named it: an `any` row answers on apps' origins too,
  // and a Flood row on a Flood origin, so --public-url's host is not the only one (an http site's
  // browser sends Origin without Sec-Fetch-Site; docs/contract/access.md "Cross-site rule").
  const requestHost = (req: IncomingMessage): string | undefined => proxyTrust.browserHost(req);

  /** Counts as no session: an administrator's session without two factors, where the setting applies. */
  const isHeldBackByAdministratorRule = (row: AccessRow, caller: Caller): boolean =>
    row.adminTwoFactor &&
    deps.isTwoFactorRequiredOfAdministrators &&
    isAdministrator(caller.user.level) &&
    !isTwoFactor(caller.claims.amr);

  /** The session the row counts: the cookie; `?token=` only where the row says so (docs/contract/flood-api.md "Authentication", rule 2: the cookie wins). */
  const sessionOf = (row: AccessRow, credentials: Credentials): Caller | undefined => {
    const token = credentials.cookieToken ?? (row.urlToken ? credentials.queryToken : undefined);
    if (token === undefined) return undefined;
    const caller = session.check(token);
    if ('refused' in caller || isHeldBackByAdministratorRule(row, caller)) return undefined;
    return caller;
  };

  /** Throws unless `caller` has the level and factors `row` needs (the session itself was judged already). */
  const requireRow = (row: AccessRow, caller: Caller): void => {
    if (isHeldBackByAdministratorRule(row, caller)) throw AUTH_REQUIRED;
    const isAdministratorNeeded = row.caller === 'administrator' || row.caller === 'first-or-administrator';
    if (isAdministratorNeeded && !isAdministrator(caller.user.level)) throw NOT_ADMINISTRATOR;
    if (row.factors === 'two-once-enrolled' && hasSecondFactor(caller.user) && !isTwoFactor(caller.claims.amr)) {
      throw SECOND_FACTOR_SESSION_REQUIRED;
    }
  };

  const admit = (row: AccessRow, req: IncomingMessage, credentials: Credentials, address: string): Admission => {
    // First, before the credential: the refusal says nothing of the session. `any` rows pay one comparison.
    if (row.origin === 'home' && !isAnsweredHere(row, req)) throw NOT_GATEHOUSE_ORIGIN;
    const isCrossSite = row.crossSite !== 'allowed' && isCrossSiteRequest(req.headers, requestHost(req));
    if (isCrossSite && row.crossSite === 'refused') throw CROSS_SITE_REQUEST;
    if (row.caller === 'proxy' && !proxyTrust.isTrustedPeer(req)) throw PROXY_REQUIRED;
    const caller = row.caller === 'anyone' || row.caller === 'proxy' || row.caller === 'gate'
      ? undefined
      : sessionOf(row, credentials);
    if (caller !== undefined) {
      requireRow(row, caller);
    } else if (
      row.caller === 'account' ||
      row.caller === 'administrator' ||
      (row.caller === 'first-or-administrator' && deps.accountCount() > 0)
    ) {
      throw AUTH_REQUIRED;
    }
    if (row.body === 'json' && isBodyOfWrongType(req)) throw UNSUPPORTED_MEDIA_TYPE;
    if (!row.password || caller === undefined) return { caller, isCrossSite, confirmPassword: NOT_CONFIRMED };
    return {
      caller: undefined,
      isCrossSite,
      confirmPassword: async (password) => {
        const isRight = await confirmedPassword(deps.passwords, caller.user, password, address, req);
        if (!isRight) {
          deps.logger.warn('wrong current password for a change of an account', {
            event: 'login_failed',
            address,
            username: caller.user.username,
          });
          throw new WrongPassword();
        }
        return caller;
      },
    };
  };

  return {
    admit,
    /** For a handler whose request turns out to be another row's (a PATCH touching ways in): throws as admit would. */
    requireRow,
    /**
     * Giving an account `level` (a new account, an invitation, a level changed): an administrator's
     * level is judged as touching ways in (row updateUserWaysIn), since the new administrator could
     * set every account's password; other levels need nothing more than the route's own row.
     */
    requireToGrant(level: AccessLevel | undefined, caller: Caller): void {
      if (level !== undefined && isAdministrator(level)) requireRow(ACCESS.updateUserWaysIn, caller);
    },
  };
}

/**
 * Outside the Flood endpoints a POST or PATCH says application/json even with no body, and any other
 * request with a body says so too: a form or text body is what any page can send cross-site unasked.
 */
function isBodyOfWrongType(req: IncomingMessage): boolean {
  if (req.method !== 'POST' && req.method !== 'PATCH' && !announcesBody(req)) return false;
  const type = req.headers['content-type'];
  return type === undefined || !isJsonContentType(type);
}
