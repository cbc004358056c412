import type { IncomingHttpHeaders } from 'node:http';
import type { GateAsks, Judge } from '../auth/judge.js';
import type { Credentials } from '../auth/session.js';
import {
  AuthRequired, SecondFactorRequired, InvalidGroupFilter, NotAdministrator, NotInGroup, ServiceStopping, UnknownLevel,
} from '../errors.js';
import { toPublicError, type PublicError } from '../http/errors.js';
import { isVisibleAscii, percentEncodeHeaderValue } from '../http/header-value.js';
import { parseQuery } from '../http/query.js';
import { prepareAnswer, sendPrepared, sendRawJson, sendStatic, type PreparedAnswer } from '../http/respond.js';
import { ANY_METHOD } from '../http/router.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser } from '../store/users.js';
import { parseGroupFilter } from '../validate/groups.js';
import { isAdministrator } from '../validate/level.js';
import type { Route, RequestContext } from './context.js';
import type { ForbiddenPage, Missing } from './forbidden-page.js';
import type { EpochMs } from '../time.js';

interface ForwardRouteDeps {
  readonly judge: Judge;
  /** Hosts an absolute `login=` URL may point at (the login page's own host must be listed). */
  readonly allowedRedirectHosts: readonly string[];
  readonly isStopping: () => boolean;
  readonly logger: Logger;
  /** `--require-mfa`: every check needs a two-factor session, as if the URL said `mfa=1`. */
  readonly requireMfa?: boolean;
  /** The wall clock (the pace of the redirect-loop warning); Date.now when absent. */
  readonly now?: () => EpochMs;
  /** The 403 page for a browser (Accept: text/html); without it every 403 is JSON. */
  readonly forbiddenPage?: ForbiddenPage;
}

// Far above any URL of the apps behind the gate; a token is at most 4,096 characters.
const MAX_URL_LENGTH = 8192;
// nginx's default proxy_buffer_size (4 KiB) turns a longer Location into a 502: a longer `rd` is left out.
export const MAX_RD_LENGTH = 2048;
// The endpoint is public: a stranger's made-up levels must not use up the warnings an operator's typo needs.
const MAX_LOGGED_UNKNOWN_LEVELS = 32;
// Anyone can ask for the login page while it is gated: the warning says so at most this often.
const LOOP_WARNING_INTERVAL_MS = 60_000;
const MAX_CACHED_GROUP_FILTERS = 64;
// Fetch's request modes other than the two navigations (an unknown or repeated value counts as one).
const NON_NAVIGATION_MODES: readonly string[] = ['cors', 'no-cors', 'same-origin', 'websocket'];

/**
 * `{base}/api/auth/forward`: the decision for a reverse proxy's auth subrequest (nginx
 * auth_request, Caddy forward_auth, Traefik forwardAuth), for every method, from the headers
 * alone. Answers only 200, 401, 403, 503 while stopping, and 302 to a login page when asked:
 * nginx turns any other status into a 500.
 */
export function forwardRoutes(deps: ForwardRouteDeps): Route[] {
  const { judge, allowedRedirectHosts, isStopping, logger } = deps;
  const unauthenticated = toPublicError(new AuthRequired());
  const notAdministrator = toPublicError(new NotAdministrator()).prepared;
  const unknownLevel = toPublicError(new UnknownLevel()).prepared;
  const notInGroup = toPublicError(new NotInGroup()).prepared;
  // ?basic=1: clients that only speak Basic answer a challenge (RFC 7617), never a redirect.
  const basicChallenge = prepareAnswer(401, unauthenticated.json, { 'www-authenticate': 'Basic realm="Gatehouse"' });
  const invalidGroupFilter = toPublicError(new InvalidGroupFilter()).prepared;
  const stopping = toPublicError(new ServiceStopping()).prepared;
  const secondFactorRequired = toPublicError(new SecondFactorRequired());
  // The 200 with its encoded headers hangs off the (immutable) stored user: one for a session, one for a token.
  const allowedAnswers = {
    session: new WeakMap<StoredUser, PreparedAnswer>(),
    token: new WeakMap<StoredUser, PreparedAnswer>(),
  };
  const loggedUnknownLevels = new Set<string>();
  const now = deps.now ?? Date.now;
  let loopWarnedAt = -Infinity;
  let isInvalidGroupFilterLogged = false;
  // A proxy sends the same few `group=` values: each is parsed once, in a bounded cache (anyone can send any).
  const groupFilters = new Map<string, readonly string[] | undefined>();
  const groupFilterOf = (text: string): readonly string[] | undefined => {
    if (groupFilters.has(text)) return groupFilters.get(text);
    const filter = parseGroupFilter(text);
    if (groupFilters.size >= MAX_CACHED_GROUP_FILTERS) groupFilters.clear();
    groupFilters.set(text, filter);
    return filter;
  };

  /** A 401 (AuthRequired or SecondFactorRequired): a Basic challenge, a redirect to `login=`, or the JSON refusal. */
  const refuse = (ctx: RequestContext, answer: PublicError, hint: string | undefined): void => {
    const { res, req } = ctx;
    if (ctx.query['basic'] === '1') {
      sendPrepared(res, basicChallenge);
      return;
    }
    const login = ctx.query['login'];
    const location = login === undefined ? undefined : loginLocation(login, req.headers, allowedRedirectHosts, hint);
    if (login === undefined || location === undefined) {
      sendPrepared(res, answer.prepared);
    } else if (isLoginPageRequest(login, req.headers)) {
      // A redirect would come back here, again and again, each time with a longer `rd`.
      if (now() - loopWarnedAt >= LOOP_WARNING_INTERVAL_MS) {
        loopWarnedAt = now();
        logger.warn('the login page is behind the gate, so sending a browser there would loop; answered 401 instead. Route the login page (and {base}/api/auth/) to Gatehouse without forward auth', { login: login.slice(0, 256) });
      }
      sendPrepared(res, answer.prepared);
    } else {
      sendRawJson(res, 302, answer.json, { location });
    }
  };

  /** A browser's page load refused with 403 gets a page saying who is signed in and what is missing; false for JSON. */
  const sendForbiddenPage = (ctx: RequestContext, user: StoredUser, missing: Missing): boolean => {
    const { forbiddenPage } = deps;
    if (forbiddenPage === undefined || ctx.req.headers.accept?.includes('text/html') !== true) return false;
    const switchAccountUrl = switchAccountUrlOf(ctx.query['login'], ctx.req.headers, allowedRedirectHosts);
    const page = forbiddenPage({ username: user.username, missing, switchAccountUrl });
    sendStatic(ctx.res, 403, page.body, page.headers);
    return true;
  };

  const handler = (ctx: RequestContext): void => {
    const { req, res } = ctx;
    if (isStopping()) {
      sendPrepared(res, stopping);
      return;
    }
    const level = ctx.query['level'];
    if (level !== undefined && level !== 'ADMINISTRATOR' && level !== 'USER') {
      const askedLevel = level.slice(0, 64);
      if (loggedUnknownLevels.size < MAX_LOGGED_UNKNOWN_LEVELS && !loggedUnknownLevels.has(askedLevel)) {
        loggedUnknownLevels.add(askedLevel);
        // Not `level`: that name is the log line's own severity field.
        logger.warn(
          'the forward URL asks for an unknown level; every request there gets 403 (use ADMINISTRATOR or USER)',
          { askedLevel },
        );
      }
      sendPrepared(res, unknownLevel);
      return;
    }
    const groupText = ctx.query['group'];
    const groups = groupText === undefined ? undefined : groupFilterOf(groupText);
    if (groupText !== undefined && groups === undefined) {
      if (!isInvalidGroupFilterLogged) {
        isInvalidGroupFilterLogged = true;
        logger.warn('the forward URL asks for groups that are not valid group names (a-z, 0-9, _ and -, comma-separated, at most 32); every request there gets 403');
      }
      sendPrepared(res, invalidGroupFilter);
      return;
    }
    const asks: GateAsks = {
      isAdministratorAsked: level === 'ADMINISTRATOR',
      groups,
      isTwoFactorAsked: isTwoFactorAsked(ctx.query['mfa'], deps),
      areTokensAllowed: ctx.query['tokens'] === '1',
    };
    const verdict = judge.gate(req.headers, credentialsOf(ctx.credentials, req.headers), asks);
    if (!verdict.allowed) {
      if (verdict.refusal === 'no-session') {
        refuse(ctx, unauthenticated, undefined);
      } else if (verdict.refusal === 'second-factor') {
        // The sign-in page learns from `mfa=` whether to ask for the code or for a second factor to be set up.
        if (verdict.via === 'session') refuse(ctx, secondFactorRequired, verdict.hint);
        else sendPrepared(res, ctx.query['basic'] === '1' ? basicChallenge : secondFactorRequired.prepared);
      } else {
        const { user, isAdministratorMissing, isGroupMissing } = verdict;
        const missing: Missing = {
          isAdministratorNeeded: isAdministratorMissing,
          ...(isGroupMissing && groups !== undefined ? { groups } : {}),
        };
        if (!sendForbiddenPage(ctx, user, missing)) {
          sendPrepared(res, isAdministratorMissing ? notAdministrator : notInGroup);
        }
      }
      return;
    }
    const { user, via: auth } = verdict;
    // After `token`, the shared snippets keep Authorization from the app (a Basic token has no pattern to spot).
    let answer = allowedAnswers[auth].get(user);
    if (answer === undefined) {
      answer = prepareAnswer(200, '{}', {
        'remote-user': percentEncodeHeaderValue(user.username),
        'remote-level': isAdministrator(user.level) ? 'ADMINISTRATOR' : 'USER',
        // Group names are a-z 0-9 _ - only: safe in a header as they are.
        'remote-groups': (user.groups ?? []).join(','),
        'remote-auth': auth,
      });
      allowedAnswers[auth].set(user, answer);
    }
    sendPrepared(res, answer);
  };

  // The body is never read, never 413: nginx may pass on the original request's Content-Length
  // without sending a byte. The body policy closes the connection when one was announced.
  return [{ method: ANY_METHOD, path: '/api/auth/forward', access: 'forward', body: 'ignored', handler }];
}

/** `mfa=` anything but absent, 0 or false asks for two factors (a typo fails closed); so may the operator. */
function isTwoFactorAsked(mfa: string | undefined, deps: ForwardRouteDeps): boolean {
  return (mfa !== undefined && mfa !== '0' && mfa !== 'false') || deps.requireMfa === true;
}

/**
 * The cookie; else `token` in the original request's query (X-Original-URI, then X-Forwarded-Uri);
 * else `?token=` on the forward request. The first present is judged, as the cookie wins everywhere;
 * a token from a URL counts only where isUrlTokenHonoured says so.
 */
function credentialsOf(credentials: Credentials, headers: IncomingHttpHeaders): Credentials {
  if (credentials.cookieToken !== undefined) return credentials;
  const original = tokenOfUri(headers['x-original-uri']) ??
    tokenOfUri(headers['x-forwarded-uri']) ??
    credentials.queryToken;
  if (original === undefined) return credentials;
  return { cookieToken: undefined, queryToken: isUrlTokenHonoured(headers) ? original : undefined };
}

/**
 * Login CSRF: a SameSite=Strict cookie stays off a request another site starts, so a `?token=` in
 * its link would make a signed-in user act as the link's author. A URL token counts only for a
 * request that does not accept text/html (every browser page and frame load does, Fetch Metadata
 * or not), is not a navigation, and was not started by another site's page. Download tools
 * (wget, curl, media players) accept any type and send no Fetch Metadata.
 */
function isUrlTokenHonoured(headers: IncomingHttpHeaders): boolean {
  const accept = headers.accept;
  if (accept !== undefined && accept.toLowerCase().includes('text/html')) return false;
  const mode = headers['sec-fetch-mode'];
  if (mode !== undefined && !(typeof mode === 'string' && NON_NAVIGATION_MODES.includes(mode))) return false;
  const site = headers['sec-fetch-site'];
  return site === undefined || site === 'none' || site === 'same-origin';
}

/** The `token` parameter of a request target's query; anything malformed just has none. */
function tokenOfUri(uri: string | string[] | undefined): string | undefined {
  if (typeof uri !== 'string') return undefined;
  const queryStart = uri.indexOf('?');
  if (queryStart < 0 || uri.length - queryStart - 1 > MAX_URL_LENGTH) return undefined;
  // Most requests behind the gate carry no token: skip the parse unless one could be there.
  if (uri.indexOf('token', queryStart) < 0 && uri.indexOf('%', queryStart) < 0) return undefined;
  const fragment = uri.indexOf('#', queryStart);
  const token = parseQuery(uri.slice(queryStart + 1, fragment < 0 ? uri.length : fragment))['token'];
  return token === '' ? undefined : token;
}

/** Where to send a browser without a session (`login`, the hint, `rd`); undefined keeps the 401. */
function loginLocation(
  login: string, headers: IncomingHttpHeaders, allowedHosts: readonly string[], mfaHint: string | undefined,
): string | undefined {
  if (headers.accept?.includes('text/html') !== true || !isLoginTarget(login, allowedHosts)) return undefined;
  return withOriginalUrl(mfaHint === undefined ? login : withParameter(login, 'mfa', mfaHint), headers);
}

/** "Sign in as someone else" on the 403 page: the `logout` page beside a `login` target whose path ends in `login`. */
function switchAccountUrlOf(
  login: string | undefined, headers: IncomingHttpHeaders, allowedHosts: readonly string[],
): string | undefined {
  if (login === undefined || !isLoginTarget(login, allowedHosts)) return undefined;
  const path = pathOf(login);
  if (!/(?:^|\/)login$/.test(path)) return undefined;
  return withOriginalUrl(`${path.slice(0, -'login'.length)}logout`, headers);
}

/** `target` with `rd`, the original URL percent-encoded, unless there is none or it is too long. */
function withOriginalUrl(target: string, headers: IncomingHttpHeaders): string {
  const original = originalUrlOf(headers);
  const rd = original === undefined ? '' : encodeURIComponent(original);
  return rd === '' || rd.length > MAX_RD_LENGTH ? target : withParameter(target, 'rd', rd);
}

function withParameter(target: string, name: string, value: string): string {
  return `${target}${target.includes('?') ? '&' : '?'}${name}=${value}`;
}

/**
 * True when the request being checked is for the login page itself. A path `login` is on the
 * original request's own site; an absolute one must name its host (an unknown host is not judged
 * a loop). Paths are compared as sent and decoded.
 */
function isLoginPageRequest(login: string, headers: IncomingHttpHeaders): boolean {
  const uri = forwardedUriOf(headers);
  if (uri === undefined) return false;
  const requestedPath = pathOf(uri);
  let loginPath = pathOf(login);
  if (!login.startsWith('/')) {
    const host = forwardedHostOf(headers);
    const url = host === undefined ? undefined : parsedUrl(login);
    if (url === undefined || parsedUrl(`${url.protocol}//${host}/`)?.host !== url.host) return false;
    loginPath = url.pathname;
  }
  if (requestedPath === loginPath) return true;
  const decoded = decodedPath(requestedPath);
  return decoded !== undefined && decoded === decodedPath(loginPath);
}

function pathOf(uri: string): string {
  const end = uri.search(/[?#]/);
  return end < 0 ? uri : uri.slice(0, end);
}

function decodedPath(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

function isLoginTarget(login: string, allowedHosts: readonly string[]): boolean {
  if (login.length > MAX_URL_LENGTH || !isVisibleAscii(login)) return false;
  // A single slash: `//host` and `/\host` are other sites to a browser.
  if (login.startsWith('/')) return login[1] !== '/' && login[1] !== '\\';
  if (!login.startsWith('https://') && !login.startsWith('http://')) return false;
  const url = parsedUrl(login);
  // Anyone can put a link to this endpoint on a page: only the operator's hosts are redirected to.
  return url !== undefined && url.username === '' && url.password === '' && allowedHosts.includes(url.hostname);
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * The URL the user asked for, from the X-Forwarded-* headers (else Host and X-Original-URI); only
 * the path when the scheme or host is unknown, which the login page resolves against its origin.
 */
function originalUrlOf(headers: IncomingHttpHeaders): string | undefined {
  const uri = forwardedUriOf(headers);
  if (
    uri === undefined ||
    !uri.startsWith('/') ||
    uri.length > MAX_URL_LENGTH ||
    !isVisibleAscii(uri)
  ) {
    return undefined;
  }
  const proto = headers['x-forwarded-proto'];
  const host = forwardedHostOf(headers);
  if ((proto !== 'https' && proto !== 'http') || host === undefined || !isPlainHost(host)) return uri;
  return `${proto}://${host}${uri}`;
}

// X-Forwarded-Uri first, while credentialsOf looks for a token in X-Original-URI first: the shipped
// snippets set exactly one of the two and remove the other, so the orders never disagree there.
function forwardedUriOf(headers: IncomingHttpHeaders): string | undefined {
  return headerText(headers['x-forwarded-uri']) ?? headerText(headers['x-original-uri']);
}

function forwardedHostOf(headers: IncomingHttpHeaders): string | undefined {
  return headerText(headers['x-forwarded-host']) ?? headers.host;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A host and optional port, nothing that would change where a URL points. */
function isPlainHost(host: string): boolean {
  if (host === '' || host.length > 300 || !isVisibleAscii(host)) return false;
  return (
    !host.includes('/') &&
    !host.includes('\\') &&
    !host.includes('@') &&
    !host.includes('?') &&
    !host.includes('#')
  );
}
