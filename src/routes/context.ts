import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { RevocationList } from '../auth/revocations.js';
import type { SessionRecords } from '../auth/session-records.js';
import type { CredentialChanges } from '../auth/credential-changes.js';
import type { AccessRow, Action } from '../auth/access.js';
import type { Admission, Judge } from '../auth/judge.js';
import { accountStillSignedIn, type Caller, type Credentials, type SessionChecker } from '../auth/session.js';
import type { Config } from '../config.js';
import { NotAdministrator, ValidationFailed } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import type { BodyUse } from '../http/body-policy.js';
import type { ProxyTrust } from '../http/client-address.js';
import type { ErrorForm } from '../http/errors.js';
import type { PathParams } from '../http/router.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser, UserStore, UserView } from '../store/users.js';
import type { Checker } from '../validate/check.js';
import { isAdministrator } from '../validate/level.js';
import type { SessionCookies } from './session-cookie.js';
import type { EpochMs } from '../time.js';

/** What a handler gets: the parsed pieces of one request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: Readonly<Record<string, string>>;
  /** The path parameters by their names in the route's path, decoded (http/router.ts PathParams). */
  readonly params: PathParams;
  readonly address: string;
  readonly credentials: Credentials;
  /** The request's row of the access table. */
  readonly row: AccessRow;
  /** What the judge (auth/judge.ts) let in for this request's row, before the handler ran. */
  readonly admission: Admission;
}

export type Handler = (ctx: RequestContext) => Promise<void> | void;

export interface Route {
  readonly method: string;
  readonly path: string;
  /** The route's row in the access table (auth/access.ts): the judge admits the request by it first. */
  readonly access: Action;
  /** What the route does with a request body (http/body-policy.ts); every route says. */
  readonly body: BodyUse;
  /** The shape of its error answers (http/errors.ts); Gatehouse's own unless it says. */
  readonly errorForm?: ErrorForm;
  readonly handler: Handler;
}

/** What the account route groups are built from (server.ts makes one); each reads the part it needs. */
export interface RouteDeps {
  readonly config: Config;
  readonly store: UserStore;
  readonly session: SessionChecker;
  readonly judge: Judge;
  readonly hasher: PasswordHasher;
  readonly throttle: LoginThrottle;
  readonly revocations: RevocationList | undefined;
  /** The session records (auth/session-records.ts): every sign-in begins one, and ending one ends its tokens. */
  readonly sessions: SessionRecords;
  readonly logger: Logger;
  readonly proxyTrust: ProxyTrust;
  /** Told when an account's credentials change, so what a feature held under the old ones goes. */
  readonly credentialChanges: CredentialChanges;
  readonly cookies: SessionCookies;
  readonly now: () => EpochMs;
}

/**
 * The request's JSON body as `check` accepts it; else throws ValidationFailed with the problems. Outside
 * the Flood endpoints (row body `json`) no body reads as `{}`.
 */
export async function readCheckedBody<T>(ctx: RequestContext, check: Checker<T>, maxBodyBytes: number): Promise<T> {
  const body = await readJsonBody(ctx.req, maxBodyBytes);
  const result = check(body === undefined && ctx.row.body === 'json' ? {} : body, '');
  if (!result.ok) throw new ValidationFailed(result.problems);
  return result.value;
}

/** The caller the judge let in; a route whose row lets anyone in has none (a bug to ask then). */
export function callerOf(ctx: RequestContext): Caller {
  const { caller } = ctx.admission;
  if (caller === undefined) throw new TypeError('this route\'s access row admits no caller');
  return caller;
}

/**
 * The caller's account as `users` hold it now (a store change's view, or the store), while its
 * session still opens it; else throws AuthRequired.
 */
export function stillSignedIn(
  deps: Pick<RouteDeps, 'revocations' | 'sessions'>, users: Pick<UserView, 'get'> | UserStore, caller: Caller,
): StoredUser {
  const find = 'get' in users ? (name: string) => users.get(name) : (name: string) => users.find(name);
  return accountStillSignedIn(find, caller, deps);
}

/**
 * Re-checked when a change is made (a store change's view, or the store): the caller is still an
 * administrator with a live session, so a session ended or demoted since the judge admitted it changes
 * nothing. Throws AuthRequired or NotAdministrator.
 */
export function assertStillAdministrator(
  deps: Pick<RouteDeps, 'revocations' | 'sessions'>, users: Pick<UserView, 'get'> | UserStore, caller: Caller,
): void {
  if (!isAdministrator(stillSignedIn(deps, users, caller).level)) throw new NotAdministrator();
}
