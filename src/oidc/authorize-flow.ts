import { hasSecondFactor, isTwoFactor, type Amr } from '../auth/amr.js';
import { AuthRequired, OAuthRefused } from '../errors.js';
import { MAX_RD_LENGTH } from '../routes/forward.js';
import { withSubjectIn } from '../store/account-rules.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { RedirectTarget } from './authorize-request.js';
import { readAuthorizeRequest } from './authorize-request.js';
import type { StoredClient } from './clients.js';
import type { CodeStore, SignedInSession } from './codes.js';
import type { FormParameters } from './form.js';
import type { FreshMarks } from './fresh-mark.js';
import { isAllowedBy } from './token-service.js';
import type { EpochSeconds } from '../time.js';

// What an authorization request comes to, once its client and redirect URI are known good
// (docs/contract/oidc.md "Authorize"): a code sent back to the app, an error sent back
// to the app, or the sign-in page, which returns here. The session cookie is SameSite=Strict, so a
// browser arriving from the app's site brings none: the sign-in page (a same-origin page, whose own
// requests carry it) sends a signed-in browser straight back, and that navigation carries the cookie.

/** Added to the authorize URL the sign-in page returns to: the hop through it has happened (prompt=none). */
const HOP_MARK = 'gatehouse_hop';
/** Added for prompt=login and max_age: a session made at or after the second it names is fresh enough (fresh-mark.ts). */
const FRESH_MARK = 'gatehouse_signed_in_after';

/** The session an authorization request comes with, from its cookie. */
export interface AuthorizeSession {
  readonly user: StoredUser;
  readonly amr: Amr;
  /** When the session was made (its token's iat): the id_token's auth_time. */
  readonly signedInAt: number;
  /** Its session record (the token's `ses`) and the cookie's expiry; undefined for tokens that name none. */
  readonly session: SignedInSession | undefined;
}

export interface AuthorizeDeps {
  readonly issuer: string;
  readonly users: UserStore;
  readonly codes: CodeStore;
  /** Signs and reads FRESH_MARK: only a mark authorize made counts. */
  readonly freshMarks: FreshMarks;
  /** Whether this client, for this account, needs a two-factor session (its `mfa`, --require-mfa, or the administrators' rule). */
  readonly needsTwoFactors: (client: StoredClient, user: StoredUser) => boolean;
  readonly nowSeconds: () => EpochSeconds;
}

/**
 * What an authorization request comes to: a 303 (`location` relative to {base}/oidc/authorize, or
 * absolute: the app), or the page of an account the app's groups refuse (with the links it offers).
 */
type AuthorizeAnswer =
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'not-open'; readonly username: string; readonly appName: string; readonly backToApp: string; readonly switchAccount: string };

/** Where the browser goes next. */
export async function authorizeAnswer(
  deps: AuthorizeDeps, target: RedirectTarget, parameters: FormParameters, session: AuthorizeSession | undefined,
): Promise<AuthorizeAnswer> {
  try {
    const decided = await decide(deps, target, parameters, session);
    return typeof decided === 'string' ? { kind: 'redirect', location: decided } : decided;
  } catch (error) {
    if (!(error instanceof OAuthRefused)) throw error;
    return { kind: 'redirect', location: backToApp(deps.issuer, target, { error: error.error, error_description: error.message }) };
  }
}

async function decide(
  deps: AuthorizeDeps, target: RedirectTarget, parameters: FormParameters, session: AuthorizeSession | undefined,
): Promise<string | AuthorizeAnswer> {
  const { client } = target;
  const request = readAuthorizeRequest(parameters, client);
  const isPromptNone = request.prompt === 'none';
  if (session === undefined) {
    // prompt=none: one hop to the sign-in page, which comes straight back; no session then is login_required.
    if (isPromptNone && parameters.get(HOP_MARK) === '1') throw new OAuthRefused('login_required', 'No one is signed in to Gatehouse.');
    return signInPage(parameters, { [HOP_MARK]: '1' }, isPromptNone ? { prompt: 'none' } : {});
  }
  const now = deps.nowSeconds();
  const isFresh = session.signedInAt >= deps.freshMarks.signedInAfter(parameters.get(FRESH_MARK), client.clientId, now);
  const isTooOld = request.prompt === 'login' ||
    (request.maxAgeSeconds !== undefined && now - session.signedInAt > request.maxAgeSeconds);
  if (isTooOld && !isFresh) {
    if (isPromptNone) throw new OAuthRefused('login_required', 'A new sign-in is needed.');
    return signInPage(parameters, { [FRESH_MARK]: deps.freshMarks.make(client.clientId, now) }, { prompt: 'login' });
  }
  if (!isAllowedBy(client, session.user)) {
    const denied = new OAuthRefused('access_denied', 'This account may not sign in to this app.');
    // prompt=none shows no page; else the person may switch accounts or go back (docs/contract/oidc.md, authorize).
    if (isPromptNone) throw denied;
    return {
      kind: 'not-open',
      username: session.user.username,
      appName: client.name,
      backToApp: backToApp(deps.issuer, target, { error: denied.error, error_description: denied.message }),
      switchAccount: switchAccountUrl(parameters),
    };
  }
  if (deps.needsTwoFactors(client, session.user) && !isTwoFactor(session.amr)) {
    if (isPromptNone) throw new OAuthRefused('login_required', 'This app needs a sign-in with two factors.');
    return signInPage(parameters, {}, { mfa: hasSecondFactor(session.user) ? 'code' : 'setup' });
  }
  const user = await withSubject(deps.users, session.user.username);
  // The code is bound to the session as it was checked; the exchange refuses it if that has ended since.
  if (user.sessionKey !== session.user.sessionKey) throw new AuthRequired();
  const code = deps.codes.issue({
    clientId: client.clientId,
    redirectUri: target.redirectUri,
    codeChallenge: request.codeChallenge,
    nonce: request.nonce,
    username: user.username,
    sessionKey: user.sessionKey,
    session: session.session,
    scopes: request.scopes,
    amr: session.amr,
    authTime: session.signedInAt,
  }, now);
  return backToApp(deps.issuer, target, { code });
}

/**
 * The redirect URI with `fields`, the state and `iss` (RFC 9207) added to its query; the URI is one
 * registered for the client, compared exactly, never one taken from elsewhere.
 */
function backToApp(issuer: string, target: RedirectTarget, fields: Record<string, string>): string {
  const query = new URLSearchParams({ ...fields, ...(target.state === undefined ? {} : { state: target.state }), iss: issuer });
  return `${target.redirectUri}${target.redirectUri.includes('?') ? '&' : '?'}${query.toString()}`;
}

/** The sign-in page ({base}/login, beside {base}/oidc/), returning to this authorize request with `marks`. */
function signInPage(parameters: FormParameters, marks: Record<string, string>, pageQuery: Record<string, string>): string {
  const back = withoutMarks(parameters);
  for (const [name, value] of Object.entries(marks)) back.append(name, value);
  const query = new URLSearchParams({ ...pageQuery, rd: `oidc/authorize?${back.toString()}` });
  return `../login?${query.toString()}`;
}

/**
 * The sign-out page ({base}/logout, beside {base}/oidc/), which signs out a same-origin navigation and
 * sends the browser to the sign-in page with `rd`: this same request. Past the length the sign-out
 * page passes on, it signs out alone and the person opens the app again.
 */
function switchAccountUrl(parameters: FormParameters): string {
  const rd = `oidc/authorize?${withoutMarks(parameters).toString()}`;
  return rd.length > MAX_RD_LENGTH ? '../logout' : `../logout?${new URLSearchParams({ rd }).toString()}`;
}

/** The request's own parameters, without the marks authorize adds on the way through the sign-in page. */
function withoutMarks(parameters: FormParameters): URLSearchParams {
  const own = new URLSearchParams();
  for (const [name, value] of parameters) if (name !== HOP_MARK && name !== FRESH_MARK) own.append(name, value);
  return own;
}

/**
 * The account with its `sub`, made now if it has none (once per account: kept through renames, never
 * reused). Throws AuthRequired when the account is gone.
 */
async function withSubject(users: UserStore, username: string): Promise<StoredUser> {
  const user = users.find(username);
  if (user?.sub !== undefined) return user;
  return users.change((view) => {
    if (!view.has(username)) throw new AuthRequired();
    return withSubjectIn(view, username);
  });
}
