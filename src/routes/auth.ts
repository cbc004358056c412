import { PASSWORD_AND_CODE, PASSWORD_ONLY } from '../auth/amr.js';
import { endOnLogout } from '../auth/logout.js';
import { ACCESS } from '../auth/access.js';
import type { SignedIn, SignInStep } from '../feature.js';
import { hashKeyOf, throttledMatch } from '../auth/throttled-password.js';
import type { WorkKey } from '../auth/work-limiter.js';
import {
  AuthRequired,
  HostNotAllowed,
  InvalidCredentials,
  UserNotFound,
} from '../errors.js';
import { readJsonBody } from '../http/body.js';
import { throttleKeyOf } from '../http/client-address.js';
import { createFirstRegistrationHostCheck } from '../http/host-header.js';
import { prepareAnswer, sendJson, sendPrepared, type PreparedAnswer } from '../http/respond.js';
import { addUser, changeUser, newAccount, removeUser, type UserChanges } from '../store/account-rules.js';
import { accountSummaryOf } from '../store/account-summary.js';
import type { StoredUser } from '../store/users.js';
import {
  checkAuthenticateBody,
  createUserBodyChecker,
  registerBodyChecker,
  updateBodyChecker,
  type AuthenticateBody,
} from '../validate/auth.js';
import { isAdministrator } from '../validate/level.js';
import { usernameFromPath } from './path-username.js';
import { assertStillAdministrator, callerOf, readCheckedBody, type RequestContext, type Route, type RouteDeps } from './context.js';
import { epochSeconds, type EpochSeconds } from '../time.js';

interface AuthRouteDeps extends RouteDeps {
  /** How to run an offline command (its arguments) where this service runs: a sentence ending in the command line. */
  readonly offlineInstruction: (args: readonly string[]) => string;
  /** The steps after the password, in order (src/feature.ts): TOTP's code. */
  readonly signInSteps: readonly SignInStep[];
}

export function authRoutes(deps: AuthRouteDeps): Route[] {
  if (deps.config.authMethod === 'none') return proxyAuthenticatedRoutes(deps);
  const api = authApiOf(deps);
  const on = (handler: AuthHandler) => (ctx: RequestContext) => handler(api, ctx);
  return [
    { method: 'POST', path: '/api/auth/authenticate', access: 'signIn', body: 'json', handler: on(signIn) },
    { method: 'POST', path: '/api/auth/register', access: 'register', body: 'json', handler: on(register) },
    { method: 'GET', path: '/api/auth/verify', access: 'verify', body: 'none', handler: on(verify) },
    { method: 'GET', path: '/api/auth/logout', access: 'logout', body: 'none', handler: on(logout) },
    { method: 'GET', path: '/api/auth/users', access: 'listUsers', body: 'none', handler: on(listUsers) },
    // docs/contract/accounts.md "Administrators' routes": an account without client settings, for apps behind the gate.
    { method: 'POST', path: '/api/auth/users', access: 'createUser', body: 'json', handler: on(createUser) },
    { method: 'GET', path: '/api/auth/users/:username', access: 'showUser', body: 'none', handler: on(showUser) },
    { method: 'PATCH', path: '/api/auth/users/:username', access: 'updateUser', body: 'json', handler: on(updateUser) },
    { method: 'DELETE', path: '/api/auth/users/:username', access: 'deleteUser', body: 'none', handler: on(deleteUser) },
  ];
}

/**
 * docs/contract/flood-api.md "authMethod none": a proxy authenticates, and everyone is the built-in
 * administrator; so only the proxy that authenticates (or loopback) is answered, even when the
 * port is reachable some other way.
 */
function proxyAuthenticatedRoutes(deps: AuthRouteDeps): Route[] {
  const { configs, cookies } = authApiOf(deps);
  const builtIn = { username: '_config', level: 10 } as const;
  // Every caller gets the same answer: serialized once (and no spread on the hot path, see respond.ts).
  const verifyAnswer = prepareAnswer(200, JSON.stringify({ initialUser: false, ...builtIn, configs }));
  // The judge answers anyone but the proxy that authenticates (or loopback) with 403 (rows proxy*).
  return [
    { method: 'POST', path: '/api/auth/authenticate', access: 'proxySignIn', body: 'json', handler: async (ctx) => {
      await readJsonBody(ctx.req, deps.config.maxBodyBytes);
      sendJson(ctx.res, 200, { success: true, ...builtIn });
    } },
    { method: 'GET', path: '/api/auth/verify', access: 'proxyVerify', body: 'none', handler: (ctx) => {
      sendPrepared(ctx.res, verifyAnswer);
    } },
    { method: 'GET', path: '/api/auth/logout', access: 'proxyLogout', body: 'none', handler: (ctx) => {
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.cleared(ctx) });
    } },
  ];
}

/** What the Flood API's handlers share: the deps, and what is built from them once. */
function authApiOf(deps: AuthRouteDeps) {
  // Flood's register and PATCH keep Flood's minimum; POST /api/auth/users is Gatehouse's own (config.ts PasswordMinimums).
  const { gatehouse, flood } = deps.config.passwordMinimums;
  const configs = Object.freeze({ authMethod: deps.config.authMethod, pollInterval: deps.config.pollIntervalMs });
  return {
    ...deps,
    configs,
    registerBody: registerBodyChecker(flood),
    updateBody: updateBodyChecker(flood),
    createUserBody: createUserBodyChecker(gatehouse),
    // --public-url's host is the operator's own name: no rebinding page can send it.
    isFirstRegistrationHost: createFirstRegistrationHostCheck([
      ...deps.config.allowedHosts, ...(deps.config.publicUrl === undefined ? [] : [new URL(deps.config.publicUrl).hostname]),
    ]),
    unauthenticatedVerify: prepareAnswer(401, JSON.stringify({ configs })),
    // Stored users are immutable and replaced on change, so a verify answer can hang off the record.
    verifyAnswers: new WeakMap<StoredUser, PreparedAnswer>(),
    // The list is rebuilt only when the store has changed since it was last sent.
    userList: undefined as { version: number; answer: PreparedAnswer } | undefined,
  };
}
type AuthApi = ReturnType<typeof authApiOf>;
type AuthHandler = (api: AuthApi, ctx: RequestContext) => Promise<void> | void;

/** POST /api/auth/authenticate: the password, then each sign-in step (the code when the account has TOTP). */
async function signIn(api: AuthApi, ctx: RequestContext): Promise<void> {
  const body = await readCheckedBody(ctx, checkAuthenticateBody, api.config.maxBodyBytes);
  const hashKey = hashKeyOf(ctx.address, undefined);
  const holder = await passwordHolder(api, ctx, body, hashKey);
  // The throttle's client key, as throttledMatch began the attempt under it.
  const client = throttleKeyOf(ctx.address);
  let signedIn: SignedIn = { user: holder, secondFactor: undefined };
  for (const step of api.signInSteps) {
    const next = await step({ address: ctx.address, body, user: signedIn.user, client });
    signedIn = { user: next.user, secondFactor: next.secondFactor ?? signedIn.secondFactor };
  }
  const { user, secondFactor } = signedIn;
  api.throttle.recordSuccess(body.username, client);
  const logged = { event: 'login_succeeded', address: ctx.address, username: user.username };
  api.logger.info('login succeeded', secondFactor === undefined ? logged : { ...logged, secondFactor });
  const cookie = await api.cookies.begin(ctx, user, secondFactor === undefined ? PASSWORD_ONLY : PASSWORD_AND_CODE);
  sendJson(ctx.res, 200, { success: true, username: user.username, level: user.level }, { 'set-cookie': cookie });
}

/** The account whose password `body` holds, judged under the login throttle (throttledMatch). */
async function passwordHolder(api: AuthApi, ctx: RequestContext, body: AuthenticateBody, key: WorkKey) {
  const user = api.store.find(body.username);
  const attempt = { username: body.username, password: body.password, hash: user?.passwordHash, key };
  const matches = await throttledMatch(api, ctx.address, ctx.req, attempt);
  // The user may have been changed or removed while we hashed.
  const current = api.store.find(body.username);
  if (!matches || current === undefined || current.passwordHash !== user?.passwordHash) {
    api.logger.warn('login failed', { event: 'login_failed', address: ctx.address, username: body.username });
    throw new InvalidCredentials();
  }
  return current;
}

/** POST /api/auth/register (docs/contract/flood-api.md "Authentication", rule 7): once users exist, credentials come first (401 / 403), before the body. */
async function register(api: AuthApi, ctx: RequestContext): Promise<void> {
  // The judge let in an administrator, or anyone while no account exists (row first-or-administrator).
  const caller = ctx.admission.caller;
  // No credentials are needed for the first user: only through a host a rebinding page cannot pose as.
  if (caller === undefined && !api.isFirstRegistrationHost(ctx.req.headers.host)) {
    throw new HostNotAllowed(api.offlineInstruction(['users', 'add', 'admin', '--level', 'ADMINISTRATOR']));
  }
  const body = await readCheckedBody(ctx, api.registerBody, api.config.maxBodyBytes);
  if (caller !== undefined) api.judge.requireToGrant(body.level, caller);
  const passwordHash = await api.hasher.hash(body.password, hashKeyOf(ctx.address, caller));
  const user = await api.store.change((view) => {
    if (caller !== undefined) assertStillAdministrator(api, view, caller);
    else if (view.size > 0) throw new AuthRequired(); // another first registration won the race
    const fields = { username: body.username, level: body.level, passwordHash, client: body.client };
    const created = newAccount(fields, nowSeconds(api));
    addUser(view, created);
    return created;
  });
  if (api.store.size === 1 && !isAdministrator(user.level)) {
    const raise = api.offlineInstruction(['users', 'set-level', user.username, 'ADMINISTRATOR']);
    api.logger.warn(`the first user is not an administrator, so no one can add users; raise its level offline: ${raise}`);
  }
  if (ctx.query['cookie'] === 'false') {
    sendJson(ctx.res, 200, { username: user.username });
    return;
  }
  sendJson(
    ctx.res,
    200,
    { success: true, username: user.username, level: user.level },
    { 'set-cookie': await api.cookies.begin(ctx, user) },
  );
}

/** GET /api/auth/verify (docs/contract/flood-api.md "GET /api/auth/verify"): the 401 carries configs and nothing else. */
function verify(api: AuthApi, ctx: RequestContext): void {
  if (api.store.size === 0) {
    sendJson(ctx.res, 200, { initialUser: true, configs: api.configs });
    return;
  }
  const { caller } = ctx.admission;
  if (caller === undefined) {
    sendPrepared(ctx.res, api.unauthenticatedVerify);
    return;
  }
  let answer = api.verifyAnswers.get(caller.user);
  if (answer === undefined) {
    const { username, level } = caller.user;
    answer = prepareAnswer(200, JSON.stringify({ initialUser: false, username, level, configs: api.configs }));
    api.verifyAnswers.set(caller.user, answer);
  }
  sendPrepared(ctx.res, answer);
}

async function logout(api: AuthApi, ctx: RequestContext): Promise<void> {
  // Browsers send Sec-Fetch-Site to https and localhost only; the judge refused cross-site ones (docs/security-notes.md "Signing out over plain http").
  await endOnLogout(api, callerOf(ctx), ctx.req.headers['sec-fetch-site'] === undefined ? 'script' : 'browser');
  sendJson(ctx.res, 200, {}, { 'set-cookie': api.cookies.cleared(ctx) });
}

function listUsers(api: AuthApi, ctx: RequestContext): void {
  if (api.userList?.version !== api.store.version) {
    const entries = Array.from(api.store.list(), (user) => ({ username: user.username, level: user.level }));
    api.userList = { version: api.store.version, answer: prepareAnswer(200, JSON.stringify(entries)) };
  }
  sendPrepared(ctx.res, api.userList.answer);
}

async function createUser(api: AuthApi, ctx: RequestContext): Promise<void> {
  const caller = callerOf(ctx);
  const { username, level, password, groups } = await readCheckedBody(ctx, api.createUserBody, api.config.maxBodyBytes);
  api.judge.requireToGrant(level, caller);
  const passwordHash = await api.hasher.hash(password, hashKeyOf(ctx.address, caller));
  const listed = groups === undefined || groups.length === 0 ? {} : { groups };
  await api.store.change((view) => {
    assertStillAdministrator(api, view, caller);
    addUser(view, newAccount({ username, level, passwordHash, ...listed }, nowSeconds(api)));
  });
  sendJson(ctx.res, 200, { username });
}

function showUser(api: AuthApi, ctx: RequestContext): void {
  const user = api.store.find(usernameFromPath(ctx.params['username']));
  if (user === undefined) throw new UserNotFound();
  // docs/contract/links-and-sessions.md "Sessions": the users page shows each account's last sign-in.
  const lastSignIn = api.sessions.lastSignInOf(user.username);
  sendJson(ctx.res, 200, { ...accountSummaryOf(user), lastSignInAt: lastSignIn === undefined ? null : lastSignIn * 1000 });
}

async function updateUser(api: AuthApi, ctx: RequestContext): Promise<void> {
  const caller = callerOf(ctx);
  const target = usernameFromPath(ctx.params['username']);
  // The checked patch holds only the fields sent: username, level, client and groups go on as they are.
  const { password, totp, passkeys, tokens, email, ...fields } = await readCheckedBody(ctx, api.updateBody, api.config.maxBodyBytes);
  // Touching an account's ways in is its own row: two factors for an administrator who has a second one.
  if (password !== undefined || totp !== undefined || passkeys !== undefined || tokens !== undefined) {
    api.judge.requireRow(ACCESS.updateUserWaysIn, caller);
  }
  api.judge.requireToGrant(fields.level, caller);
  const passwordHash = password === undefined
    ? undefined
    : await api.hasher.hash(password, hashKeyOf(ctx.address, caller));
  const changes: UserChanges = {
    ...fields,
    ...(totp === false ? { removeTotp: true } : {}),
    ...(passkeys === false ? { removePasskeys: true } : {}),
    ...(tokens === false ? { removeTokens: true } : {}),
    ...(passwordHash === undefined ? {} : { passwordHash }),
    // An address an administrator sets counts as verified.
    ...(email === undefined ? {} : { email: email === null ? null : { address: email, isVerified: true } }),
  };
  await api.store.change((view) => {
    assertStillAdministrator(api, view, caller);
    changeUser(view, target, changes, nowSeconds(api));
  });
  sendJson(ctx.res, 200, {});
}

async function deleteUser(api: AuthApi, ctx: RequestContext): Promise<void> {
  const caller = callerOf(ctx);
  const target = usernameFromPath(ctx.params['username']);
  await api.store.change((view) => {
    assertStillAdministrator(api, view, caller);
    removeUser(view, target);
  });
  sendJson(ctx.res, 200, { username: target });
}

function nowSeconds(api: AuthApi): EpochSeconds {
  return epochSeconds(api.now());
}
