import type { IncomingHttpHeaders } from 'node:http';
import { hasSecondFactor, isTwoFactor } from '../auth/amr.js';
import type { MachineTokenVerifier } from '../auth/machine-tokens.js';
import type { Credentials, SessionChecker } from '../auth/session.js';
import { parseQuery } from '../http/query.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser } from '../store/users.js';
import type { EpochMs } from '../time.js';
import { parseGroupFilter } from '../validate/groups.js';
import { isAdministrator } from '../validate/level.js';
import type { Missing } from './forbidden-page.js';
import { MAX_URL_LENGTH, isLoginPageRequest, loginLocation, switchAccountUrlOf } from './login-redirect.js';

export interface GateServiceDeps {
  readonly session: Pick<SessionChecker, 'check'>;
  readonly machineTokens: Pick<MachineTokenVerifier, 'check'> | undefined;
  /** `--require-mfa`: every check needs a two-factor session, as if the URL said `mfa=1`. */
  readonly requireMfa?: boolean;
  /** `--require-mfa-for-admins`: an administrator's one-factor session counts as none. */
  readonly isTwoFactorRequiredOfAdministrators: boolean;
  /** Hosts an absolute `login=` URL may point at (the login page's own host must be listed). */
  readonly allowedRedirectHosts: readonly string[];
  readonly isStopping: () => boolean;
  readonly logger: Logger;
  /** The wall clock (the pace of the redirect-loop warning); Date.now when absent. */
  readonly now?: () => EpochMs;
}

/** What the gate reads of a forward request: its query, its headers, the cookie and `?token=`. */
interface GateRequest {
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  readonly credentials: Credentials;
}

/** The gate's decision; the route writes it (docs/contract/gate.md "The forward endpoint", its answers). */
export type GateDecision =
  /** 200 with the Remote-* headers. */
  | { readonly kind: 'allowed'; readonly user: StoredUser; readonly via: 'session' | 'token' }
  /** 401 AUTH_REQUIRED or SECOND_FACTOR_REQUIRED; with `location`, a 302 there instead. */
  | { readonly kind: 'unauthenticated'; readonly refusal: 'no-session' | 'second-factor'; readonly location?: string }
  /** `basic=1`: a 401 with a Basic challenge, never a redirect. */
  | { readonly kind: 'basic-challenge' }
  /** 403 NOT_ADMINISTRATOR or NOT_IN_GROUP; `page` when a browser asked (Accept: text/html). */
  | {
    readonly kind: 'forbidden';
    readonly user: StoredUser;
    readonly missing: Missing;
    readonly page: { readonly switchAccountUrl: string | undefined } | undefined;
  }
  /** 403 for everyone: a query that cannot be meant. */
  | { readonly kind: 'unknown-level' | 'invalid-group-filter' }
  /** 503 while the service stops. */
  | { readonly kind: 'stopping' };

/** What the gate asks of a caller, read from the forward URL. */
interface GateAsks {
  readonly isAdministratorAsked: boolean;
  /** Any one of these groups; undefined when the URL names none. */
  readonly groups: readonly string[] | undefined;
  /** Two factors (`mfa=`, `--require-mfa`); a machine token then passes only where `tokens` says so. */
  readonly isTwoFactorAsked: boolean;
  readonly areTokensAllowed: boolean;
}

/** Who the caller is, against what the URL asks. */
type Verdict =
  | Extract<GateDecision, { kind: 'allowed' }>
  | { readonly kind: 'no-session' }
  /** `hint`: `code` when the account has a second factor to sign in with, `setup` when it has none. */
  | { readonly kind: 'second-factor'; readonly via: 'session' | 'token'; readonly hint: 'code' | 'setup' }
  | { readonly kind: 'lacking'; readonly user: StoredUser; readonly isAdministratorMissing: boolean; readonly isGroupMissing: boolean };

// The endpoint is public: a stranger's made-up levels must not use up the warnings an operator's typo needs.
const MAX_LOGGED_UNKNOWN_LEVELS = 32;
// Anyone can ask for the login page while it is gated: the warning says so at most this often.
const LOOP_WARNING_INTERVAL_MS = 60_000;
const MAX_CACHED_GROUP_FILTERS = 64;
// Fetch's request modes other than the two navigations (an unknown or repeated value counts as one).
const NON_NAVIGATION_MODES: readonly string[] = ['cors', 'no-cors', 'same-origin', 'websocket'];

// The decisions that carry nothing of the request, built once.
const STOPPING: GateDecision = Object.freeze({ kind: 'stopping' });
const UNKNOWN_LEVEL: GateDecision = Object.freeze({ kind: 'unknown-level' });
const INVALID_GROUP_FILTER: GateDecision = Object.freeze({ kind: 'invalid-group-filter' });
const BASIC_CHALLENGE: GateDecision = Object.freeze({ kind: 'basic-challenge' });
const NO_SESSION: GateDecision = Object.freeze({ kind: 'unauthenticated', refusal: 'no-session' });
const SECOND_FACTOR: GateDecision = Object.freeze({ kind: 'unauthenticated', refusal: 'second-factor' });
const NO_CALLER: Verdict = Object.freeze({ kind: 'no-session' });

export type GateService = ReturnType<typeof createGateService>;

/**
 * The gate's policy in one place (docs/contract/gate.md): what the forward URL asks (`level`,
 * `group`, `mfa`, `tokens`, `basic`, `login`), which credential is judged, and which answer a
 * refused caller gets. It only reads; routes/forward.ts writes the answer.
 */
export function createGateService(deps: GateServiceDeps) {
  const { session, allowedRedirectHosts, logger } = deps;
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

  /** The caller: a machine token in Authorization (judged alone), else the session. Never throws. */
  const callerVerdict = (headers: IncomingHttpHeaders, credentials: Credentials, asks: GateAsks): Verdict => {
    // Any Authorization that is not a machine token is the app's own, and left alone.
    const machine = deps.machineTokens?.check(headers.authorization);
    let user: StoredUser;
    let via: 'session' | 'token';
    let isTwoFactorSession: boolean;
    if (machine !== undefined) {
      if ('refused' in machine) return NO_CALLER;
      [user, via, isTwoFactorSession] = [machine.user, 'token', asks.areTokensAllowed];
    } else {
      const token = credentials.cookieToken ?? credentials.queryToken;
      const caller = token === undefined ? undefined : session.check(token);
      if (caller === undefined || 'refused' in caller) return NO_CALLER;
      [user, via, isTwoFactorSession] = [caller.user, 'session', isTwoFactor(caller.claims.amr)];
    }
    // docs/contract/gate.md "The query", `mfa=1`: a session without two factors counts as none; so does an
    // administrator's under --require-mfa-for-admins. The sign-in page learns which step is missing.
    const isTwoFactorAsked = asks.isTwoFactorAsked ||
      (deps.isTwoFactorRequiredOfAdministrators && isAdministrator(user.level));
    if (isTwoFactorAsked && !isTwoFactorSession) {
      return { kind: 'second-factor', via, hint: hasSecondFactor(user) ? 'code' : 'setup' };
    }
    const isAdministratorMissing = asks.isAdministratorAsked && !isAdministrator(user.level);
    const isGroupMissing = asks.groups !== undefined && !isInAnyGroup(user, asks.groups);
    if (isAdministratorMissing || isGroupMissing) {
      return { kind: 'lacking', user, isAdministratorMissing, isGroupMissing };
    }
    return { kind: 'allowed', user, via };
  };

  /** A 401: a Basic challenge, a redirect to `login=`, or the refusal as it is. */
  const refused = (request: GateRequest, refusal: GateDecision, hint: string | undefined): GateDecision => {
    const { query, headers } = request;
    if (query['basic'] === '1') return BASIC_CHALLENGE;
    const login = query['login'];
    const location = login === undefined ? undefined : loginLocation(login, headers, allowedRedirectHosts, hint);
    if (login === undefined || location === undefined) return refusal;
    if (isLoginPageRequest(login, headers)) {
      // A redirect would come back here, again and again, each time with a longer `rd`.
      if (now() - loopWarnedAt >= LOOP_WARNING_INTERVAL_MS) {
        loopWarnedAt = now();
        logger.warn('the login page is behind the gate, so sending a browser there would loop; answered 401 instead. Route the login page (and {base}/api/auth/) to Gatehouse without forward auth', { login: login.slice(0, 256) });
      }
      return refusal;
    }
    return refusal === NO_SESSION
      ? { kind: 'unauthenticated', refusal: 'no-session', location }
      : { kind: 'unauthenticated', refusal: 'second-factor', location };
  };

  /** Whether the forward URL's `level=` can be meant; each distinct one that cannot is logged (at most 32). */
  const isLevelKnown = (level: string | undefined): boolean => {
    if (level === undefined || level === 'ADMINISTRATOR' || level === 'USER') return true;
    const askedLevel = level.slice(0, 64);
    if (loggedUnknownLevels.size < MAX_LOGGED_UNKNOWN_LEVELS && !loggedUnknownLevels.has(askedLevel)) {
      loggedUnknownLevels.add(askedLevel);
      // Not `level`: that name is the log line's own severity field.
      logger.warn('the forward URL asks for an unknown level; every request there gets 403 (use ADMINISTRATOR or USER)', { askedLevel });
    }
    return false;
  };

  const decide = (request: GateRequest): GateDecision => {
    if (deps.isStopping()) return STOPPING;
    const { query, headers } = request;
    const level = query['level'];
    if (!isLevelKnown(level)) return UNKNOWN_LEVEL;
    const groupText = query['group'];
    const groups = groupText === undefined ? undefined : groupFilterOf(groupText);
    if (groupText !== undefined && groups === undefined) {
      if (!isInvalidGroupFilterLogged) {
        isInvalidGroupFilterLogged = true;
        logger.warn('the forward URL asks for groups that are not valid group names (a-z, 0-9, _ and -, comma-separated, at most 32); every request there gets 403');
      }
      return INVALID_GROUP_FILTER;
    }
    const asks: GateAsks = {
      isAdministratorAsked: level === 'ADMINISTRATOR',
      groups,
      isTwoFactorAsked: isTwoFactorAsked(query['mfa'], deps),
      areTokensAllowed: query['tokens'] === '1',
    };
    const verdict = callerVerdict(headers, credentialsOf(request.credentials, headers), asks);
    if (verdict.kind === 'allowed') return verdict;
    if (verdict.kind === 'no-session') return refused(request, NO_SESSION, undefined);
    // The sign-in page learns from `mfa=` whether to ask for the code or for a second factor to be set up.
    if (verdict.kind === 'second-factor') {
      if (verdict.via === 'session') return refused(request, SECOND_FACTOR, verdict.hint);
      return query['basic'] === '1' ? BASIC_CHALLENGE : SECOND_FACTOR;
    }
    const { user, isAdministratorMissing, isGroupMissing } = verdict;
    const missing: Missing = {
      isAdministratorNeeded: isAdministratorMissing,
      ...(isGroupMissing && groups !== undefined ? { groups } : {}),
    };
    const page = headers.accept?.includes('text/html') === true
      ? { switchAccountUrl: switchAccountUrlOf(query['login'], headers, allowedRedirectHosts) }
      : undefined;
    return { kind: 'forbidden', user, missing, page };
  };

  return { decide };
}

/** `mfa=` anything but absent, 0 or false asks for two factors (a typo fails closed); so may the operator. */
function isTwoFactorAsked(mfa: string | undefined, deps: GateServiceDeps): boolean {
  return (mfa !== undefined && mfa !== '0' && mfa !== 'false') || deps.requireMfa === true;
}

function isInAnyGroup(user: StoredUser, groups: readonly string[]): boolean {
  const own = user.groups;
  if (own === undefined) return false;
  for (const name of groups) if (own.includes(name)) return true;
  return false;
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
