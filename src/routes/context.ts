import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { RevocationList } from '../auth/revocations.js';
import { accountStillSignedIn, type Caller, type Credentials, type SessionAuthenticator } from '../auth/session.js';
import type { TotpAccounts } from '../auth/totp-account.js';
import type { Config } from '../config.js';
import { ValidationFailed } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import type { BodyUse } from '../http/body-policy.js';
import type { ProxyTrust } from '../http/client-address.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser, UserStore, UserView } from '../store/users.js';
import type { Checker } from '../validate/check.js';
import type { SessionCookies } from './session-cookie.js';

/** What a handler gets: the parsed pieces of one request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: Readonly<Record<string, string>>;
  /** The raw path parameter, still percent-encoded. */
  readonly param: string | undefined;
  readonly address: string;
  readonly credentials: Credentials;
}

export type Handler = (ctx: RequestContext) => Promise<void> | void;

export interface Route {
  readonly method: string;
  readonly path: string;
  /** What the route does with a request body (http/body-policy.ts); every route says. */
  readonly body: BodyUse;
  readonly handler: Handler;
}

/** What the account route groups are built from (server.ts makes one); each reads the part it needs. */
export interface RouteDeps {
  readonly config: Config;
  readonly store: UserStore;
  readonly session: SessionAuthenticator;
  readonly hasher: PasswordHasher;
  readonly throttle: LoginThrottle;
  readonly revocations: RevocationList | undefined;
  readonly logger: Logger;
  readonly proxyTrust: ProxyTrust;
  readonly totp: TotpAccounts;
  readonly cookies: SessionCookies;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/** The request's JSON body as `check` accepts it; else throws ValidationFailed with the problems. */
export async function readCheckedBody<T>(ctx: RequestContext, check: Checker<T>, maxBodyBytes: number): Promise<T> {
  const result = check(await readJsonBody(ctx.req, maxBodyBytes), '');
  if (!result.ok) throw new ValidationFailed(result.problems);
  return result.value;
}

/** The caller's account in a store change's `view`, while its session still opens it; else throws AuthRequired. */
export function stillSignedIn(deps: Pick<RouteDeps, 'revocations'>, view: UserView, caller: Caller): StoredUser {
  return accountStillSignedIn((name) => view.get(name), caller, deps.revocations);
}
