import { PASSWORD_AND_CODE } from '../auth/amr.js';
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { WorkKey } from '../auth/work-limiter.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { TokenCodec } from '../auth/jwt.js';
import type { RevocationList } from '../auth/revocations.js';
import { accountStillSignedIn, type Caller, type SessionAuthenticator } from '../auth/session.js';
import { newSessionKey } from '../auth/session-key.js';
import type { TotpAccounts } from '../auth/totp-account.js';
import type { Config } from '../config.js';
import {
  AuthRequired,
  HostNotAllowed,
  InvalidCredentials,
  InvalidSecondFactor,
  InvalidPathParameter,
  NotAdministrator,
  ProxyRequired,
  SecondFactorRequired,
  TooManyAttempts,
  UserNotFound,
  ValidationFailed,
} from '../errors.js';
import { readJsonBody } from '../http/body.js';
import { throttleKeyOf, type ProxyTrust } from '../http/client-address.js';
import { toPublicError } from '../http/errors.js';
import { createFirstRegistrationHostCheck } from '../http/host-header.js';
import { networkKeyOf } from '../http/network-key.js';
import { prepareAnswer, sendJson, sendPrepared, type PreparedAnswer } from '../http/respond.js';
import type { Logger } from '../log/logger.js';
import { addUser, changeUser, removeUser, type UserChanges } from '../store/account-rules.js';
import { accountSummaryOf } from '../store/account-summary.js';
import type { StoredUser, UserStore, UserView } from '../store/users.js';
import { checkAuthenticateBody, checkPathUsername, createUserBodyChecker, registerBodyChecker, updateBodyChecker } from '../validate/auth.js';
import type { Checker } from '../validate/check.js';
import { isAdministrator } from '../validate/level.js';
import type { RequestContext, Route } from './context.js';
import { createSessionCookies } from './session-cookie.js';

export interface AuthRouteDeps {
  readonly config: Config;
  readonly store: UserStore;
  readonly codec: TokenCodec;
  readonly session: SessionAuthenticator;
  readonly hasher: PasswordHasher;
  readonly throttle: LoginThrottle;
  readonly revocations: RevocationList | undefined;
  readonly logger: Logger;
  readonly proxyTrust: ProxyTrust;
  readonly totp: TotpAccounts;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** How to run an offline command (its arguments) where this service runs: a sentence ending in the command line. */
  readonly offlineInstruction: (args: readonly string[]) => string;
}

function checked<T>(check: Checker<T>, input: unknown): T {
  const result = check(input, '');
  if (!result.ok) throw new ValidationFailed(result.problems);
  return result.value;
}

/** Percent-decodes a path parameter once ("%2F" is part of the name); bad escapes, "." and "..", and control characters give 400. */
function usernameFromPath(raw: string | undefined): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw ?? '');
  } catch {
    throw new InvalidPathParameter();
  }
  const result = checkPathUsername(decoded, 'username');
  if (!result.ok) throw new InvalidPathParameter();
  return result.value;
}

/**
 * The hash queue's key for a request (SECURITY.md "Login storms"): an administrator's work queues
 * as that account, without the per-client caps (a script adding users in parallel is normal);
 * anyone else's under the throttle's client key and its network.
 */
function hashKeyOf(address: string, caller: Caller | undefined): WorkKey {
  // The comma keeps it apart from every address key: no X-Forwarded-For hop holds one.
  if (caller !== undefined) return { client: `,account:${caller.user.username}`, network: `,account:${caller.user.username}`, isUncapped: true };
  const client = throttleKeyOf(address);
  return { client, network: networkKeyOf(client) };
}

/** Re-checks, inside a store change, that the caller is still an administrator with a live session. */
function assertStillAdministrator(view: UserView, caller: Caller, revocations: RevocationList | undefined): void {
  if (!isAdministrator(accountStillSignedIn((name) => view.get(name), caller, revocations).level)) throw new NotAdministrator();
}

export function authRoutes(deps: AuthRouteDeps): Route[] {
  const { config, store, session, hasher, throttle, logger } = deps;
  const registerBody = registerBodyChecker(config.minPasswordLength);
  const isFirstRegistrationHost = createFirstRegistrationHostCheck(config.allowedHosts);
  const firstAdministratorOffline = deps.offlineInstruction(['users', 'add', 'admin', '--level', 'ADMINISTRATOR']);
  const updateBody = updateBodyChecker(config.minPasswordLength);
  const createUserBody = createUserBodyChecker(config.minPasswordLength);
  const configs = Object.freeze({ authMethod: config.authMethod, pollInterval: config.pollIntervalMs });
  const unauthenticatedVerify = prepareAnswer(401, JSON.stringify({ configs }));
  // Stored users are immutable and replaced on change, so a verify answer can hang off the record.
  const verifyAnswers = new WeakMap<StoredUser, PreparedAnswer>();
  // The list is rebuilt only when the store has changed since it was last sent.
  let userList: { version: number; answer: PreparedAnswer } | undefined;
  // The refusals of GET /users (what a scanner gets) are answered, not thrown: no unwinding, no lookup.
  const authRequired = toPublicError(new AuthRequired()).prepared;
  const notAdministrator = toPublicError(new NotAdministrator()).prepared;
  const cookies = createSessionCookies(deps);
  const nowSeconds = (): number => Math.floor(deps.now() / 1000);
  const sessionCookieFor = cookies.issue;

  if (config.authMethod === 'none') {
    // INTERFACE.md `authMethod: "none"`: a proxy authenticates; everyone is the built-in administrator.
    const builtIn = { username: '_config', level: 10 } as const;
    // Every caller gets the same answer: serialized once (and no spread on the hot path, see respond.ts).
    const verifyAnswer = prepareAnswer(200, JSON.stringify({ initialUser: false, username: builtIn.username, level: builtIn.level, configs }));
    // Everyone is administrator here, so only the proxy that authenticates (or loopback) is
    // answered, even when the port is reachable some other way.
    const guard = (ctx: RequestContext): void => {
      if (!deps.proxyTrust.isTrustedPeer(ctx.req)) throw new ProxyRequired();
    };
    return [
      { method: 'POST', path: '/api/auth/authenticate', body: 'json', handler: async (ctx) => {
        guard(ctx);
        await readJsonBody(ctx.req, config.maxBodyBytes);
        sendJson(ctx.res, 200, { success: true, ...builtIn });
      } },
      { method: 'GET', path: '/api/auth/verify', body: 'none', handler: (ctx) => {
        guard(ctx);
        sendPrepared(ctx.res, verifyAnswer);
      } },
      { method: 'GET', path: '/api/auth/logout', body: 'none', handler: (ctx) => {
        guard(ctx);
        sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.cleared(ctx) });
      } },
    ];
  }

  return [
    {
      method: 'POST',
      path: '/api/auth/authenticate',
      body: 'json',
      async handler(ctx) {
        const body = checked(checkAuthenticateBody, await readJsonBody(ctx.req, config.maxBodyBytes));
        // Throttled attempts are refused before any hashing: an attacker cannot buy scrypt time.
        // The attempt counts as a failure from here on, until it succeeds.
        const hashKey = hashKeyOf(ctx.address, undefined);
        const addressKey = hashKey.client;
        const wait = throttle.beginAttempt(body.username, addressKey, deps.now());
        if (wait > 0) throw new TooManyAttempts(wait);
        const user = store.find(body.username);
        let matches: boolean;
        try {
          matches = await hasher.verify(body.password, user?.passwordHash, hashKey, () => ctx.req.socket.destroyed);
        } catch (error) {
          // Busy or abandoned: the password was never judged, so it is not a failed login.
          throttle.cancelAttempt(body.username, addressKey);
          throw error;
        }
        // The user may have been changed or removed while we hashed.
        const current = store.find(body.username);
        if (!matches || current === undefined || current.passwordHash !== user?.passwordHash) {
          logger.warn('login failed', { event: 'login_failed', address: ctx.address, username: body.username });
          throw new InvalidCredentials();
        }
        if (current.totp === undefined) {
          throttle.recordSuccess(body.username, addressKey);
          logger.info('login succeeded', { event: 'login_succeeded', address: ctx.address, username: current.username });
          sendJson(ctx.res, 200, { success: true, username: current.username, level: current.level }, { 'set-cookie': sessionCookieFor(ctx, current) });
          return;
        }
        // INTERFACE.md "Signing in": the password was right, and the account asks for a code.
        if (body.code === undefined) {
          // Not a guess, so not a failure; but not a success either, which would clear the
          // username's failed codes and let a holder of the password guess codes without end.
          throttle.cancelAttempt(body.username, addressKey);
          throw new SecondFactorRequired();
        }
        const use = deps.totp.judge(current.totp, body.code, deps.now());
        // A code judged good is spent inside the store change, against the account as it is
        // then: of two requests with the same code, one signs in.
        const signedIn =
          use === undefined
            ? undefined
            : await store.change((view) => {
                const latest = view.get(current.username);
                if (latest?.totp === undefined || latest.passwordHash !== current.passwordHash) return undefined;
                const spent = deps.totp.spend(latest.totp, use);
                if (spent === undefined) return undefined;
                const updated: StoredUser = { ...latest, totp: spent };
                view.set(updated);
                return updated;
              });
        if (signedIn === undefined) {
          // The attempt stays counted: failed codes feed the throttle like wrong passwords.
          logger.warn('login failed: wrong second factor', { event: 'login_failed', address: ctx.address, username: body.username });
          throw new InvalidSecondFactor();
        }
        throttle.recordSuccess(body.username, addressKey);
        logger.info('login succeeded', { event: 'login_succeeded', address: ctx.address, username: signedIn.username, secondFactor: use !== undefined && 'step' in use ? 'totp' : 'recovery code' });
        sendJson(ctx.res, 200, { success: true, username: signedIn.username, level: signedIn.level }, { 'set-cookie': sessionCookieFor(ctx, signedIn, PASSWORD_AND_CODE) });
      },
    },
    {
      method: 'POST',
      path: '/api/auth/register',
      body: 'json',
      async handler(ctx) {
        // Spec section 5.7: once users exist, credentials come first (401 / 403, no cookie),
        // before any of the body is read.
        const caller = store.size > 0 ? session.requireAdministrator(ctx.credentials) : undefined;
        // No credentials are needed for the first user: only through a host a rebinding page cannot pose as.
        if (caller === undefined && !isFirstRegistrationHost(ctx.req.headers.host)) throw new HostNotAllowed(firstAdministratorOffline);
        const body = checked(registerBody, await readJsonBody(ctx.req, config.maxBodyBytes));
        const passwordHash = await hasher.hash(body.password, hashKeyOf(ctx.address, caller));
        const user = await store.change((view) => {
          if (caller !== undefined) assertStillAdministrator(view, caller, deps.revocations);
          else if (view.size > 0) throw new AuthRequired(); // another first registration won the race
          const created: StoredUser = {
            username: body.username,
            level: body.level,
            passwordHash,
            client: body.client,
            credentialsChangedAt: nowSeconds(),
            sessionKey: newSessionKey(),
          };
          addUser(view, created);
          return created;
        });
        if (store.size === 1 && !isAdministrator(user.level)) {
          logger.warn(`the first user is not an administrator, so no one can add users; raise its level offline: ${deps.offlineInstruction(['users', 'set-level', user.username, 'ADMINISTRATOR'])}`);
        }
        if (ctx.query['cookie'] === 'false') {
          sendJson(ctx.res, 200, { username: user.username });
          return;
        }
        sendJson(ctx.res, 200, { success: true, username: user.username, level: user.level }, { 'set-cookie': sessionCookieFor(ctx, user) });
      },
    },
    {
      method: 'GET',
      path: '/api/auth/verify',
      body: 'none',
      handler(ctx) {
        if (store.size === 0) {
          sendJson(ctx.res, 200, { initialUser: true, configs });
          return;
        }
        const caller = session.check(ctx.credentials);
        if ('refused' in caller) {
          // Spec section 4: the 401 on verify carries configs and nothing else.
          sendPrepared(ctx.res, unauthenticatedVerify);
          return;
        }
        let answer = verifyAnswers.get(caller.user);
        if (answer === undefined) {
          answer = prepareAnswer(200, JSON.stringify({ initialUser: false, username: caller.user.username, level: caller.user.level, configs }));
          verifyAnswers.set(caller.user, answer);
        }
        sendPrepared(ctx.res, answer);
      },
    },
    {
      method: 'GET',
      path: '/api/auth/logout',
      body: 'none',
      async handler(ctx) {
        const caller = session.authenticateAnyFactor(ctx.credentials);
        if (deps.revocations !== undefined) await deps.revocations.revoke(caller.token, caller.claims, nowSeconds());
        sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.cleared(ctx) });
      },
    },
    {
      method: 'GET',
      path: '/api/auth/users',
      body: 'none',
      handler(ctx) {
        const caller = session.check(ctx.credentials);
        if ('refused' in caller) {
          sendPrepared(ctx.res, authRequired);
          return;
        }
        if (!isAdministrator(caller.user.level)) {
          sendPrepared(ctx.res, notAdministrator);
          return;
        }
        if (userList?.version !== store.version) {
          const entries: Array<{ username: string; level: StoredUser['level'] }> = [];
          for (const user of store.list()) entries.push({ username: user.username, level: user.level });
          userList = { version: store.version, answer: prepareAnswer(200, JSON.stringify(entries)) };
        }
        sendPrepared(ctx.res, userList.answer);
      },
    },
    {
      // INTERFACE.md "Administrators": an account without client settings, for apps behind the gate.
      method: 'POST',
      path: '/api/auth/users',
      body: 'json',
      async handler(ctx) {
        const caller = session.requireAdministrator(ctx.credentials);
        const body = checked(createUserBody, await readJsonBody(ctx.req, config.maxBodyBytes));
        const passwordHash = await hasher.hash(body.password, hashKeyOf(ctx.address, caller));
        await store.change((view) => {
          assertStillAdministrator(view, caller, deps.revocations);
          addUser(view, {
            username: body.username,
            level: body.level,
            passwordHash,
            ...(body.groups === undefined || body.groups.length === 0 ? {} : { groups: body.groups }),
            credentialsChangedAt: nowSeconds(),
            sessionKey: newSessionKey(),
          });
        });
        sendJson(ctx.res, 200, { username: body.username });
      },
    },
    {
      method: 'GET',
      path: '/api/auth/users/:username',
      body: 'none',
      handler(ctx) {
        session.requireAdministrator(ctx.credentials);
        const user = store.find(usernameFromPath(ctx.param));
        if (user === undefined) throw new UserNotFound();
        sendJson(ctx.res, 200, accountSummaryOf(user));
      },
    },
    {
      method: 'PATCH',
      path: '/api/auth/users/:username',
      body: 'json',
      async handler(ctx) {
        const caller = session.requireAdministrator(ctx.credentials);
        const target = usernameFromPath(ctx.param);
        const patch = checked(updateBody, await readJsonBody(ctx.req, config.maxBodyBytes));
        const passwordHash = patch.password === undefined ? undefined : await hasher.hash(patch.password, hashKeyOf(ctx.address, caller));
        const changes: UserChanges = {
          ...(patch.username === undefined ? {} : { username: patch.username }),
          ...(patch.level === undefined ? {} : { level: patch.level }),
          ...(patch.client === undefined ? {} : { client: patch.client }),
          ...(patch.groups === undefined ? {} : { groups: patch.groups }),
          ...(patch.totp === false ? { removeTotp: true } : {}),
          ...(passwordHash === undefined ? {} : { passwordHash }),
        };
        await store.change((view) => {
          assertStillAdministrator(view, caller, deps.revocations);
          changeUser(view, target, changes, nowSeconds());
        });
        sendJson(ctx.res, 200, {});
      },
    },
    {
      method: 'DELETE',
      path: '/api/auth/users/:username',
      body: 'none',
      async handler(ctx) {
        const caller = session.requireAdministrator(ctx.credentials);
        const target = usernameFromPath(ctx.param);
        await store.change((view) => {
          assertStillAdministrator(view, caller, deps.revocations);
          removeUser(view, target);
        });
        sendJson(ctx.res, 200, { username: target });
      },
    },
  ];
}
