// Who may do what (docs/contract/access.md "The table"): every action a caller can take is
// one row here, and auth/judge.ts is the one function that judges a request against its row. Every route
// names its row (routes/context.ts `Route.access`); SECURITY.md prints this table, and a test checks
// that the two agree and tries every cell. A route cannot be built without a row.

/**
 * Who may ask:
 * - `anyone`: no credential is judged (sign-in, pages, health);
 * - `optional`: the caller's session if there is one, else none (verify answers 401 itself);
 * - `account`: a session of an account;
 * - `administrator`: an administrator's session;
 * - `first-or-administrator`: anyone while no account exists, then an administrator (docs/contract/flood-api.md "Authentication", rule 7);
 * - `gate`: a session or a machine token, judged against what the forward URL asks (level, groups, mfa);
 * - `proxy`: with `--auth none`, only the proxy that authenticates, or loopback.
 */
type CallerRule =
  | 'anyone' | 'optional' | 'account' | 'administrator' | 'first-or-administrator' | 'gate' | 'proxy';

/**
 * The factors the session must have been made with:
 * - `one`: any session;
 * - `two-once-enrolled`: once the caller's account has a second factor (TOTP or a passkey), a two-factor
 *   session (`otp`, or `hwk` with `user`), else 403 SECOND_FACTOR_SESSION_REQUIRED;
 * - `asked`: what the request asks for (the gate's `mfa=`).
 */
type FactorRule = 'one' | 'two-once-enrolled' | 'asked';

/**
 * What a request that changes something must show of where it came from:
 * - `refused`: a cross-site or same-site request (Fetch Metadata, else Origin) is refused, 403;
 * - `page`: such a navigation gets a page with a button instead of the change;
 * - `allowed`: nothing is changed, or callers come cross-site by design (the gate, the probe).
 */
type CrossSiteRule = 'allowed' | 'refused' | 'page';

/**
 * The request body: `none`; `flood` (the seven Flood endpoints keep the spec's answers); `json` (a POST,
 * PATCH or DELETE with a body must say application/json even when empty, 415 otherwise; empty reads as {});
 * `form` (OpenID Connect: application/x-www-form-urlencoded, which its handler reads strictly and answers
 * in RFC 6749's own form when it is not).
 */
type BodyRule = 'none' | 'flood' | 'json' | 'form';

/**
 * Where the row answers (docs/contract/own-origin.md), judged first: `any` origin, or `home` (else 403
 * NOT_GATEHOUSE_ORIGIN); there a Flood endpoint (body `flood`) also answers on a --flood-url origin, and
 * `first-or-administrator` anywhere while no account exists (a fresh install is set up where it is reached).
 */
type OriginRule = 'any' | 'home';

export interface AccessRow {
  readonly method: string;
  /** Under {base}, but for /healthz at the root. */
  readonly path: string;
  readonly caller: CallerRule;
  /** `?token=` counts as the session cookie does: the seven Flood endpoints and the gate only. */
  readonly urlToken: boolean;
  /** A machine token (`Authorization: Bearer gh_…`, or Basic): the gate only. */
  readonly machineToken: boolean;
  readonly factors: FactorRule;
  /** The current password in the JSON body (`password`), checked under the login throttle: 403 WRONG_PASSWORD. */
  readonly password: boolean;
  /** `--require-mfa-for-admins` counts an administrator's one-factor session as none here. */
  readonly adminTwoFactor: boolean;
  readonly crossSite: CrossSiteRule;
  readonly body: BodyRule;
  readonly origin: OriginRule;
}

type Defaults = Omit<AccessRow, 'method' | 'path'>;
// Every row answers only on Gatehouse's own origin unless it says `any`.
const ANYONE: Defaults = {
  caller: 'anyone', urlToken: false, machineToken: false, factors: 'one', password: false,
  adminTwoFactor: false, crossSite: 'allowed', body: 'none', origin: 'home',
};
// On every origin: the sign-in surface, and what carries no power over an account.
const ANY_ORIGIN = { origin: 'any' } as const;
// A session cookie of the account (never ?token=), taking access away or reading: any factor.
const ACCOUNT: Defaults = { ...ANYONE, caller: 'account', crossSite: 'refused', body: 'json' };
// Adding, changing or removing a way in: the cookie, the current password, and two factors once enrolled.
const WAY_IN: Defaults = { ...ACCOUNT, factors: 'two-once-enrolled', password: true };
const ADMINISTRATOR: Defaults = { ...ANYONE, caller: 'administrator', adminTwoFactor: true, crossSite: 'refused', body: 'json' };
// The seven Flood endpoints: ?token= counts, bodies keep the spec's answers.
const FLOOD: Defaults = { ...ANYONE, urlToken: true, body: 'flood' };
const PAGE: Defaults = ANYONE;

const row = (method: string, path: string, defaults: Defaults, changes: Partial<Defaults> = {}): AccessRow =>
  Object.freeze({ method, path, ...defaults, ...changes });

/** The table. Keys are permanent names; SECURITY.md lists the rows in this order. */
export const ACCESS = Object.freeze({
  // The seven Flood endpoints (docs/contract/flood-api.md "The seven endpoints", "Authentication").
  signIn: row('POST', '/api/auth/authenticate', FLOOD, { ...ANY_ORIGIN, urlToken: false, crossSite: 'refused' }),
  register: row('POST', '/api/auth/register', FLOOD, {
    caller: 'first-or-administrator', adminTwoFactor: true, crossSite: 'refused',
  }),
  verify: row('GET', '/api/auth/verify', FLOOD, { ...ANY_ORIGIN, caller: 'optional', adminTwoFactor: true }),
  logout: row('GET', '/api/auth/logout', FLOOD, { ...ANY_ORIGIN, caller: 'account', crossSite: 'refused' }),
  listUsers: row('GET', '/api/auth/users', FLOOD, { caller: 'administrator', adminTwoFactor: true }),
  updateUser: row('PATCH', '/api/auth/users/:username', FLOOD, {
    caller: 'administrator', adminTwoFactor: true, crossSite: 'refused',
  }),
  // The same request when it touches an account's ways in (password, totp, passkeys, tokens).
  updateUserWaysIn: row('PATCH', '/api/auth/users/:username', FLOOD, {
    caller: 'administrator', adminTwoFactor: true, crossSite: 'refused', factors: 'two-once-enrolled',
  }),
  deleteUser: row('DELETE', '/api/auth/users/:username', FLOOD, {
    caller: 'administrator', adminTwoFactor: true, crossSite: 'refused',
  }),

  // Administrators, beyond the Flood API: the session cookie only.
  createUser: row('POST', '/api/auth/users', ADMINISTRATOR),
  showUser: row('GET', '/api/auth/users/:username', ADMINISTRATOR, { crossSite: 'allowed', body: 'none' }),

  // The caller's own account. Reading it and taking access away: any session of the account.
  showAccount: row('GET', '/api/auth/account', ACCOUNT, { crossSite: 'allowed', body: 'none' }),
  revokeMachineToken: row('DELETE', '/api/auth/account/tokens/:id', ACCOUNT, { body: 'none' }),
  logoutEverywhere: row('POST', '/api/auth/account/logout-everywhere', ACCOUNT),
  // Ways in.
  changePassword: row('POST', '/api/auth/account/password', WAY_IN),
  beginTotp: row('POST', '/api/auth/account/totp', WAY_IN),
  // Finishes what beginTotp (with the password) started: the code proves the new authenticator.
  confirmTotp: row('POST', '/api/auth/account/totp/confirm', WAY_IN, { password: false }),
  disableTotp: row('POST', '/api/auth/account/totp/disable', WAY_IN),
  passkeyCreationOptions: row('POST', '/api/auth/account/passkeys/options', WAY_IN, { password: false }),
  addPasskey: row('POST', '/api/auth/account/passkeys', WAY_IN),
  removePasskey: row('DELETE', '/api/auth/account/passkeys/:id', WAY_IN),
  // A machine token passes `tokens=1` with no second factor: an administrator needs two factors to make one.
  makeMachineToken: row('POST', '/api/auth/account/tokens', WAY_IN, { adminTwoFactor: true }),

  // Sessions (docs/contract/links-and-sessions.md "Sessions"): reading and ending one's own
  // is taking access away, so any session of the account; another account's, administrators.
  listOwnSessions: row('GET', '/api/auth/account/sessions', ACCOUNT, { crossSite: 'allowed', body: 'none' }),
  endOwnSession: row('DELETE', '/api/auth/account/sessions/:id', ACCOUNT, { body: 'none' }),
  listUserSessions: row('GET', '/api/auth/users/:username/sessions', ADMINISTRATOR, { crossSite: 'allowed', body: 'none' }),
  endUserSession: row('DELETE', '/api/auth/users/:username/sessions/:id', ADMINISTRATOR, { body: 'none' }),
  endUserSessions: row('DELETE', '/api/auth/users/:username/sessions', ADMINISTRATOR, { body: 'none' }),

  // Invitations and reset links: administrators make them; whoever holds a link's secret uses it,
  // under the login throttle. A reset link gives a way in: two factors once the administrator has one.
  makeInvitation: row('POST', '/api/auth/invites', ADMINISTRATOR),
  listInvitations: row('GET', '/api/auth/invites', ADMINISTRATOR, { crossSite: 'allowed', body: 'none' }),
  withdrawInvitation: row('DELETE', '/api/auth/invites/:id', ADMINISTRATOR, { body: 'none' }),
  checkInvitation: row('POST', '/api/auth/join/check', ANYONE, { crossSite: 'refused', body: 'json' }),
  join: row('POST', '/api/auth/join', ANYONE, { crossSite: 'refused', body: 'json' }),
  makeResetLink: row('POST', '/api/auth/users/:username/reset-link', ADMINISTRATOR, { factors: 'two-once-enrolled' }),
  checkResetLink: row('POST', '/api/auth/reset/check', ANYONE, { crossSite: 'refused', body: 'json' }),
  reset: row('POST', '/api/auth/reset', ANYONE, { crossSite: 'refused', body: 'json' }),

  // Signing in with a passkey.
  passkeySignInOptions: row('POST', '/api/auth/passkey/options', ANYONE, { ...ANY_ORIGIN, crossSite: 'refused', body: 'json' }),
  passkeySignIn: row('POST', '/api/auth/passkey', ANYONE, { ...ANY_ORIGIN, crossSite: 'refused', body: 'json' }),

  // The gate, and what the doctor reads behind it: they change nothing and see the apps' own requests.
  forward: row('*', '/api/auth/forward', ANYONE, {
    ...ANY_ORIGIN, caller: 'gate', urlToken: true, machineToken: true, factors: 'asked', adminTwoFactor: true,
  }),
  probe: row('GET', '/api/auth/probe', ANYONE, ANY_ORIGIN),
  health: row('GET', '/healthz', ANYONE, ANY_ORIGIN),

  // Pages: the same bytes for everyone; what they show comes from the API calls above.
  signInPage: row('GET', '/login', PAGE, ANY_ORIGIN),
  accountPage: row('GET', '/gatehouse/account', PAGE),
  usersPage: row('GET', '/gatehouse/users', PAGE),
  joinPage: row('GET', '/gatehouse/join', PAGE),
  resetPage: row('GET', '/gatehouse/reset', PAGE),
  // Signs out a same-origin navigation; a cross-site or same-site one gets a page with a button.
  signOutPage: row('GET', '/logout', PAGE, { ...ANY_ORIGIN, caller: 'optional', crossSite: 'page' }),

  // OpenID Connect (docs/contract/oidc.md), only with --public-url. Apps reach these
  // cross-site by design: authorize reads the session cookie (never ?token=) and decides itself what
  // an administrator's one-factor session gets (the sign-in page's code step); the token, userinfo and
  // revocation endpoints judge client credentials or an access token, never a session.
  oidcDiscovery: row('GET', '/.well-known/openid-configuration', ANYONE),
  oidcKeys: row('GET', '/oidc/jwks', ANYONE),
  oidcAuthorize: row('GET', '/oidc/authorize', ANYONE, { caller: 'optional' }),
  oidcAuthorizeForm: row('POST', '/oidc/authorize', ANYONE, { caller: 'optional', body: 'form' }),
  oidcToken: row('POST', '/oidc/token', ANYONE, { body: 'form' }),
  oidcUserinfo: row('GET', '/oidc/userinfo', ANYONE),
  oidcUserinfoForm: row('POST', '/oidc/userinfo', ANYONE, { body: 'form' }),
  oidcRevoke: row('POST', '/oidc/revoke', ANYONE, { body: 'form' }),
  // The CORS preflights of apps that run in a browser: no credential, nothing changed; answered for
  // the origins of registered apps' redirect URIs only (src/oidc/routes/cors.ts).
  oidcTokenPreflight: row('OPTIONS', '/oidc/token', ANYONE),
  oidcUserinfoPreflight: row('OPTIONS', '/oidc/userinfo', ANYONE),
  oidcRevokePreflight: row('OPTIONS', '/oidc/revoke', ANYONE),
  // Signs out at once for a hint naming the signed-in account, cross-site as it comes; else a page with a button.
  oidcLogout: row('GET', '/oidc/logout', ANYONE, { caller: 'optional' }),
  // The same as a form (RP-Initiated Logout 1.0 section 2: GET and POST).
  oidcLogoutForm: row('POST', '/oidc/logout', ANYONE, { caller: 'optional', body: 'form' }),
  // Administrators' sign-in apps, and an account's own e-mail address and display name.
  listClients: row('GET', '/api/auth/clients', ADMINISTRATOR, { crossSite: 'allowed', body: 'none' }),
  addClient: row('POST', '/api/auth/clients', ADMINISTRATOR),
  // Changes an app's name, addresses, groups, mfa or alg; its id and secret stay.
  updateClient: row('PATCH', '/api/auth/clients/:clientId', ADMINISTRATOR),
  removeClient: row('DELETE', '/api/auth/clients/:clientId', ADMINISTRATOR),
  updateProfile: row('PATCH', '/api/auth/account', ACCOUNT),

  // With `--auth none` (docs/contract/flood-api.md "authMethod none"): the built-in administrator, for the authenticating proxy only.
  proxySignIn: row('POST', '/api/auth/authenticate', FLOOD, { ...ANY_ORIGIN, caller: 'proxy', urlToken: false, crossSite: 'refused' }),
  proxyVerify: row('GET', '/api/auth/verify', FLOOD, { ...ANY_ORIGIN, caller: 'proxy', urlToken: false }),
  proxyLogout: row('GET', '/api/auth/logout', FLOOD, { ...ANY_ORIGIN, caller: 'proxy', urlToken: false, crossSite: 'refused' }),
} satisfies Record<string, AccessRow>);

export type Action = keyof typeof ACCESS;

/** Every action with its row, in the table's order. */
export const ACTIONS: readonly Action[] = Object.freeze(Object.keys(ACCESS) as Action[]);

/**
 * Throws TypeError unless every route is served where its row says (method, path; HEAD beside GET): a
 * route that names another request's row stops the start. (A row left without a route is found by the
 * test that tries every row.)
 */
export function assertRoutesFollowTable(
  routes: ReadonlyArray<{ readonly method: string; readonly path: string; readonly access: Action }>,
): void {
  for (const route of routes) {
    const row: AccessRow = ACCESS[route.access];
    const isSameMethod = row.method === route.method || (row.method === 'GET' && route.method === 'HEAD');
    if (!isSameMethod || row.path !== route.path) {
      throw new TypeError(`route ${route.method} ${route.path} names the access row ${route.access} (${row.method} ${row.path})`);
    }
  }
}
