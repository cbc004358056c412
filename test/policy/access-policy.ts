// Who may do what, written down apart from the table the server reads (src/auth/access.ts ACCESS):
// one rule per action, in plain words, from the contract (docs/contract/access.md "who may do what",
// docs/contract/accounts.md, docs/contract/links-and-sessions.md, docs/contract/own-origin.md,
// docs/contract/oidc.md), each with a sentence saying why. Nothing here is read from ACCESS.
//
// The table must say exactly this (test/policy/access-policy.test.ts compares them column by column,
// and fails when either is looser or stricter), and the access matrix's expected answers come from
// here (test/helpers/access-model.ts), so a row edited in src/auth/access.ts, SECURITY.md regenerated
// from it, still fails until this file is changed too: a change of the policy is reviewed here.
//
// A rule is the request, then one phrase for each of its columns, separated by ' | ':
//   who may ask        'anyone' | 'anyone, with the session if there is one' | 'a session of the account'
//                      | 'an administrator' | 'anyone until the first account, then an administrator'
//                      | 'a session or a machine token, judged as the forward URL asks'
//                      | 'only the authenticating proxy'
//   which credentials  'cookie only' | 'cookie or ?token=' | 'cookie, ?token= or a machine token'
//   factors            'any factors' | 'two factors once enrolled' | 'factors as the forward URL asks'
//   current password   'no current password' | 'the current password'
//   administrators     'admins need two factors under --require-mfa-for-admins' | 'any admin session'
//   other sites        'other sites allowed' | 'other sites refused' | 'other sites get a page'
//   body               'no body' | 'the Flood body' | 'a JSON body' | 'a form body'
//   origin             'any origin' | 'home origin only'

export type Who = 'anyone' | 'optional' | 'account' | 'administrator' | 'first-or-administrator' | 'gate' | 'proxy';
export type Factors = 'one' | 'two-once-enrolled' | 'asked';
export type OtherSites = 'allowed' | 'refused' | 'page';
export type Body = 'none' | 'flood' | 'json' | 'form';
export type Origin = 'any' | 'home';

/** One action's rule, read from its words. */
export interface Rule {
  readonly method: string;
  /** Under {base}, but for /healthz at the root. */
  readonly path: string;
  readonly who: Who;
  /** `?token=` counts as the cookie does. */
  readonly urlToken: boolean;
  /** A machine token (`Authorization: Bearer gh_…`, or Basic) counts. */
  readonly machineToken: boolean;
  readonly factors: Factors;
  /** The current password in the body, checked under the login throttle. */
  readonly password: boolean;
  /** Under `--require-mfa-for-admins`, an administrator's one-factor session counts as none. */
  readonly adminTwoFactor: boolean;
  readonly crossSite: OtherSites;
  readonly body: Body;
  readonly origin: Origin;
  readonly why: string;
}

type Column = Exclude<keyof Rule, 'method' | 'path' | 'why'>;

/** Every phrase, and the columns it sets. */
const PHRASES: Readonly<Record<string, Readonly<Partial<Pick<Rule, Column>>>>> = {
  'anyone': { who: 'anyone' },
  'anyone, with the session if there is one': { who: 'optional' },
  'a session of the account': { who: 'account' },
  'an administrator': { who: 'administrator' },
  'anyone until the first account, then an administrator': { who: 'first-or-administrator' },
  'a session or a machine token, judged as the forward URL asks': { who: 'gate' },
  'only the authenticating proxy': { who: 'proxy' },
  'cookie only': { urlToken: false, machineToken: false },
  'cookie or ?token=': { urlToken: true, machineToken: false },
  'cookie, ?token= or a machine token': { urlToken: true, machineToken: true },
  'any factors': { factors: 'one' },
  'two factors once enrolled': { factors: 'two-once-enrolled' },
  'factors as the forward URL asks': { factors: 'asked' },
  'no current password': { password: false },
  'the current password': { password: true },
  'admins need two factors under --require-mfa-for-admins': { adminTwoFactor: true },
  'any admin session': { adminTwoFactor: false },
  'other sites allowed': { crossSite: 'allowed' },
  'other sites refused': { crossSite: 'refused' },
  'other sites get a page': { crossSite: 'page' },
  'no body': { body: 'none' },
  'the Flood body': { body: 'flood' },
  'a JSON body': { body: 'json' },
  'a form body': { body: 'form' },
  'any origin': { origin: 'any' },
  'home origin only': { origin: 'home' },
};

const COLUMNS: readonly Column[] = Object.freeze([
  'who', 'urlToken', 'machineToken', 'factors', 'password', 'adminTwoFactor', 'crossSite', 'body', 'origin',
]);

/** Reads a rule's words; throws on a phrase it does not know, or a column said twice or not at all. */
export function rule(request: string, words: string, why: string): Rule {
  const [method = '', path = '', ...rest] = request.split(' ');
  if (method === '' || !path.startsWith('/') || rest.length > 0) throw new TypeError(`"${request}" is not "METHOD /path"`);
  const said: Partial<Record<Column, unknown>> = {};
  for (const phrase of words.split(' | ')) {
    const columns = PHRASES[phrase];
    if (columns === undefined) throw new TypeError(`${request}: "${phrase}" is no phrase of the policy`);
    for (const [column, value] of Object.entries(columns) as Array<[Column, unknown]>) {
      if (column in said) throw new TypeError(`${request}: ${column} is said twice`);
      said[column] = value;
    }
  }
  const unsaid = COLUMNS.filter((column) => !(column in said));
  if (unsaid.length > 0) throw new TypeError(`${request}: nothing says ${unsaid.join(', ')}`);
  if (why.trim() === '') throw new TypeError(`${request}: no reason given`);
  return Object.freeze({ method, path, ...(said as Pick<Rule, Column>), why });
}

// Phrases that recur, spelled out once so every rule below still reads whole.
const FLOOD_ADMIN = 'an administrator | cookie or ?token= | any factors | no current password | admins need two factors under --require-mfa-for-admins';
const ADMIN = 'an administrator | cookie only | any factors | no current password | admins need two factors under --require-mfa-for-admins';
const OWN = 'a session of the account | cookie only | any factors | no current password | any admin session';
const WAY_IN = 'a session of the account | cookie only | two factors once enrolled';
const OPEN = 'anyone | cookie only | any factors | no current password | any admin session';

/** The policy: every action of the table, by its permanent name. */
export const POLICY: Readonly<Record<string, Rule>> = Object.freeze({
  // The seven Flood endpoints keep the spec's answers, ?token= included.
  signIn: rule('POST /api/auth/authenticate', `${OPEN} | other sites refused | the Flood body | any origin`,
    'Signing in judges the password it is sent, not a session; another site may not sign a browser in as someone else.'),
  register: rule('POST /api/auth/register', 'anyone until the first account, then an administrator | cookie or ?token= | any factors | no current password | admins need two factors under --require-mfa-for-admins | other sites refused | the Flood body | home origin only',
    'The spec lets the first caller make the first account and administrators the rest; making accounts is administration, so it is done at home.'),
  verify: rule('GET /api/auth/verify', 'anyone, with the session if there is one | cookie or ?token= | any factors | no current password | admins need two factors under --require-mfa-for-admins | other sites allowed | the Flood body | any origin',
    'Verify tells who is signed in and answers 401 itself without a session; an app may ask it, as Remote-User already tells the app.'),
  logout: rule('GET /api/auth/logout', 'a session of the account | cookie or ?token= | any factors | no current password | any admin session | other sites refused | the Flood body | any origin',
    'Signing out takes access away, so any session of the account may, but another site may not sign a browser out.'),
  listUsers: rule('GET /api/auth/users', `${FLOOD_ADMIN} | other sites allowed | the Flood body | home origin only`,
    'Only administrators see the accounts, and only at home, where no app\'s script runs.'),
  updateUser: rule('PATCH /api/auth/users/:username', `${FLOOD_ADMIN} | other sites refused | the Flood body | home origin only`,
    'Administrators change accounts (level, name, groups) at home; another site may not make the change.'),
  updateUserWaysIn: rule('PATCH /api/auth/users/:username', 'an administrator | cookie or ?token= | two factors once enrolled | no current password | admins need two factors under --require-mfa-for-admins | other sites refused | the Flood body | home origin only',
    'Setting another account\'s password, TOTP, passkeys or tokens is touching its ways in: an administrator with a second factor needs a two-factor session for it.'),
  deleteUser: rule('DELETE /api/auth/users/:username', `${FLOOD_ADMIN} | other sites refused | the Flood body | home origin only`,
    'Only administrators remove accounts, at home, never at another site\'s request.'),

  // Administrators, beyond the Flood API: the session cookie only.
  createUser: rule('POST /api/auth/users', `${ADMIN} | other sites refused | a JSON body | home origin only`,
    'Making an account is administration: an administrator\'s cookie, at home, a JSON request no form can send.'),
  showUser: rule('GET /api/auth/users/:username', `${ADMIN} | other sites allowed | no body | home origin only`,
    'What an account has set up is for administrators to read, at home; reading changes nothing.'),

  // The caller's own account: reading it and taking access away need any session of it.
  showAccount: rule('GET /api/auth/account', `${OWN} | other sites allowed | no body | home origin only`,
    'A person reads their own account with any session of it; not on an app\'s origin, whose script would read it too.'),
  revokeMachineToken: rule('DELETE /api/auth/account/tokens/:id', `${OWN} | other sites refused | no body | home origin only`,
    'Revoking a token takes access away, so any session of the account may; another site may not.'),
  logoutEverywhere: rule('POST /api/auth/account/logout-everywhere', `${OWN} | other sites refused | a JSON body | home origin only`,
    'Ending every session takes access away, so any session may, at home, and no other site may make it.'),
  changePassword: rule('POST /api/auth/account/password', `${WAY_IN} | the current password | any admin session | other sites refused | a JSON body | home origin only`,
    'The password is a way in: a stolen cookie alone must not change it, so the current password and, once enrolled, two factors.'),
  beginTotp: rule('POST /api/auth/account/totp', `${WAY_IN} | the current password | any admin session | other sites refused | a JSON body | home origin only`,
    'Setting up TOTP adds a way in; the password travels with the request that starts it.'),
  confirmTotp: rule('POST /api/auth/account/totp/confirm', `${WAY_IN} | no current password | any admin session | other sites refused | a JSON body | home origin only`,
    'Confirming finishes the set-up the password started; the code proves the new authenticator, so no password again.'),
  disableTotp: rule('POST /api/auth/account/totp/disable', `${WAY_IN} | the current password | any admin session | other sites refused | a JSON body | home origin only`,
    'Turning TOTP off removes a way in: the password, and two factors once enrolled.'),
  passkeyCreationOptions: rule('POST /api/auth/account/passkeys/options', `${WAY_IN} | no current password | any admin session | other sites refused | a JSON body | home origin only`,
    'The options begin adding a passkey; the password comes with the registration that adds it.'),
  addPasskey: rule('POST /api/auth/account/passkeys', `${WAY_IN} | the current password | any admin session | other sites refused | a JSON body | home origin only`,
    'A passkey is a way in: the cookie, the current password and, once enrolled, two factors.'),
  removePasskey: rule('DELETE /api/auth/account/passkeys/:id', `${WAY_IN} | the current password | any admin session | other sites refused | a JSON body | home origin only`,
    'Removing a passkey changes the ways in, so it asks what adding one asks; the password comes in a JSON body.'),
  makeMachineToken: rule('POST /api/auth/account/tokens', `${WAY_IN} | the current password | admins need two factors under --require-mfa-for-admins | other sites refused | a JSON body | home origin only`,
    'A machine token is a way in that passes tokens=1 with no second factor, so under --require-mfa-for-admins an administrator needs two factors to make one.'),

  // Sessions: one's own with any session of the account; another account's, administrators.
  listOwnSessions: rule('GET /api/auth/account/sessions', `${OWN} | other sites allowed | no body | home origin only`,
    'A person sees where they are signed in with any session of the account, at home.'),
  endOwnSession: rule('DELETE /api/auth/account/sessions/:id', `${OWN} | other sites refused | no body | home origin only`,
    'Ending one of one\'s own sessions takes access away: any session may, no other site.'),
  listUserSessions: rule('GET /api/auth/users/:username/sessions', `${ADMIN} | other sites allowed | no body | home origin only`,
    'Another account\'s sessions are for administrators to see, at home.'),
  endUserSession: rule('DELETE /api/auth/users/:username/sessions/:id', `${ADMIN} | other sites refused | no body | home origin only`,
    'Administrators end another account\'s session, at home, never at another site\'s request.'),
  endUserSessions: rule('DELETE /api/auth/users/:username/sessions', `${ADMIN} | other sites refused | no body | home origin only`,
    'Administrators end every session of another account, at home, never at another site\'s request.'),

  // Invitations and reset links: administrators make them; whoever holds a secret uses it.
  makeInvitation: rule('POST /api/auth/invites', `${ADMIN} | other sites refused | a JSON body | home origin only`,
    'An invitation makes an account, so only an administrator makes one, at home.'),
  listInvitations: rule('GET /api/auth/invites', `${ADMIN} | other sites allowed | no body | home origin only`,
    'Open links are for administrators to see (never their secrets), at home.'),
  withdrawInvitation: rule('DELETE /api/auth/invites/:id', `${ADMIN} | other sites refused | no body | home origin only`,
    'Administrators withdraw links, at home, never at another site\'s request.'),
  checkInvitation: rule('POST /api/auth/join/check', `${OPEN} | other sites refused | a JSON body | home origin only`,
    'Whoever holds an invitation\'s secret may see what it makes; the link is built on the home origin.'),
  join: rule('POST /api/auth/join', `${OPEN} | other sites refused | a JSON body | home origin only`,
    'The secret is the credential: whoever holds it makes the account, on the home origin the link names.'),
  makeResetLink: rule('POST /api/auth/users/:username/reset-link', 'an administrator | cookie only | two factors once enrolled | no current password | admins need two factors under --require-mfa-for-admins | other sites refused | a JSON body | home origin only',
    'A reset link lets whoever holds it set that account\'s password: making one touches a way in, so an administrator with a second factor needs two.'),
  checkResetLink: rule('POST /api/auth/reset/check', `${OPEN} | other sites refused | a JSON body | home origin only`,
    'Whoever holds a reset link\'s secret may see whose it is; the link is built on the home origin.'),
  reset: rule('POST /api/auth/reset', `${OPEN} | other sites refused | a JSON body | home origin only`,
    'The secret is the credential for setting the new password, on the home origin the link names.'),

  // Signing in with a passkey: the sign-in surface, on every origin.
  passkeySignInOptions: rule('POST /api/auth/passkey/options', `${OPEN} | other sites refused | a JSON body | any origin`,
    'Anyone may ask for a challenge to sign in with; the options of an unknown name look like a real one\'s.'),
  passkeySignIn: rule('POST /api/auth/passkey', `${OPEN} | other sites refused | a JSON body | any origin`,
    'A passkey\'s signature is the credential; another site may not sign a browser in.'),

  // The gate and what the doctor reads behind it: they change nothing and see the apps' own requests.
  forward: rule('* /api/auth/forward', 'a session or a machine token, judged as the forward URL asks | cookie, ?token= or a machine token | factors as the forward URL asks | no current password | admins need two factors under --require-mfa-for-admins | other sites allowed | no body | any origin',
    'The gate is asked about every request of every app, cross-site ones included, and is the one place a machine token opens.'),
  probe: rule('GET /api/auth/probe', `${OPEN} | other sites allowed | no body | any origin`,
    'The doctor reads it behind the gate; it changes nothing and answers only what its caller sent.'),
  health: rule('GET /healthz', `${OPEN} | other sites allowed | no body | any origin`,
    'Health checks carry no credential and learn nothing about an account.'),

  // Pages: the same bytes for everyone; what they show comes from the API calls above.
  signInPage: rule('GET /login', `${OPEN} | other sites allowed | no body | any origin`,
    'The sign-in page is the same for everyone and is served on every app\'s site.'),
  accountPage: rule('GET /gatehouse/account', `${OPEN} | other sites allowed | no body | home origin only`,
    'The page is the same bytes for everyone; it is served only at home, where its API answers.'),
  usersPage: rule('GET /gatehouse/users', `${OPEN} | other sites allowed | no body | home origin only`,
    'The page is the same bytes for everyone; administration happens only at home.'),
  joinPage: rule('GET /gatehouse/join', `${OPEN} | other sites allowed | no body | home origin only`,
    'The page is the same bytes for everyone; invitations are built on the home origin.'),
  resetPage: rule('GET /gatehouse/reset', `${OPEN} | other sites allowed | no body | home origin only`,
    'The page is the same bytes for everyone; reset links are built on the home origin.'),
  signOutPage: rule('GET /logout', 'anyone, with the session if there is one | cookie only | any factors | no current password | any admin session | other sites get a page | no body | any origin',
    'Signing out takes access away with any session; a navigation another site started gets a button instead of the change.'),

  // OpenID Connect: apps reach it cross-site by design; it lives on the issuer, the home origin.
  oidcDiscovery: rule('GET /.well-known/openid-configuration', `${OPEN} | other sites allowed | no body | home origin only`,
    'Discovery is public and read by apps from anywhere; it is the issuer\'s, on the home origin.'),
  oidcKeys: rule('GET /oidc/jwks', `${OPEN} | other sites allowed | no body | home origin only`,
    'The public keys are public; apps fetch them from the issuer.'),
  oidcAuthorize: rule('GET /oidc/authorize', 'anyone, with the session if there is one | cookie only | any factors | no current password | any admin session | other sites allowed | no body | home origin only',
    'Apps send the browser here from their own site; the session cookie says who signs in, and the flow itself asks for a second factor where a client or the administrators\' setting wants one.'),
  oidcAuthorizeForm: rule('POST /oidc/authorize', 'anyone, with the session if there is one | cookie only | any factors | no current password | any admin session | other sites allowed | a form body | home origin only',
    'The same authorization request as a form an app\'s page posts cross-site, read strictly.'),
  oidcToken: rule('POST /oidc/token', `${OPEN} | other sites allowed | a form body | home origin only`,
    'The app\'s own credentials and the code are judged, never a session.'),
  oidcUserinfo: rule('GET /oidc/userinfo', `${OPEN} | other sites allowed | no body | home origin only`,
    'An access token in Authorization is judged, never a session.'),
  oidcUserinfoForm: rule('POST /oidc/userinfo', `${OPEN} | other sites allowed | a form body | home origin only`,
    'The same with the access token in a form, read strictly.'),
  oidcRevoke: rule('POST /oidc/revoke', `${OPEN} | other sites allowed | a form body | home origin only`,
    'The app\'s credentials and its own token are judged, never a session.'),
  oidcTokenPreflight: rule('OPTIONS /oidc/token', `${OPEN} | other sites allowed | no body | home origin only`,
    'A browser app\'s preflight carries no credential and changes nothing; CORS headers go only to a registered app\'s origin.'),
  oidcUserinfoPreflight: rule('OPTIONS /oidc/userinfo', `${OPEN} | other sites allowed | no body | home origin only`,
    'The same preflight before userinfo: no credential, nothing changed.'),
  oidcRevokePreflight: rule('OPTIONS /oidc/revoke', `${OPEN} | other sites allowed | no body | home origin only`,
    'The same preflight before revocation: no credential, nothing changed.'),
  oidcLogout: rule('GET /oidc/logout', 'anyone, with the session if there is one | cookie only | any factors | no current password | any admin session | other sites allowed | no body | home origin only',
    'An app sends the browser here from its site to sign out; a valid id_token_hint signs out at once, anything else gets a button.'),
  oidcLogoutForm: rule('POST /oidc/logout', 'anyone, with the session if there is one | cookie only | any factors | no current password | any admin session | other sites allowed | a form body | home origin only',
    'The same sign-out as a form an app\'s page posts (RP-Initiated Logout asks for GET and POST), read strictly.'),
  listClients: rule('GET /api/auth/clients', `${ADMIN} | other sites allowed | no body | home origin only`,
    'Sign-in apps are administration, at home.'),
  addClient: rule('POST /api/auth/clients', `${ADMIN} | other sites refused | a JSON body | home origin only`,
    'Registering an app decides where codes go: administrators only, at home, never at another site\'s request.'),
  updateClient: rule('PATCH /api/auth/clients/:clientId', `${ADMIN} | other sites refused | a JSON body | home origin only`,
    'Changing an app\'s addresses decides where codes go, as registering it does: administrators only, at home, never at another site\'s request.'),
  removeClient: rule('DELETE /api/auth/clients/:clientId', `${ADMIN} | other sites refused | a JSON body | home origin only`,
    'Removing an app is administration; a DELETE that carries a body must say JSON.'),
  updateProfile: rule('PATCH /api/auth/account', `${OWN} | other sites refused | a JSON body | home origin only`,
    'A name and an e-mail address are no way in (no mail is sent), so any session of the account sets them, at home.'),

  // With --auth none: the built-in administrator, for the authenticating proxy only.
  proxySignIn: rule('POST /api/auth/authenticate', 'only the authenticating proxy | cookie only | any factors | no current password | any admin session | other sites refused | the Flood body | any origin',
    'With --auth none the proxy has authenticated the person; only it (or loopback) speaks for the built-in administrator.'),
  proxyVerify: rule('GET /api/auth/verify', 'only the authenticating proxy | cookie only | any factors | no current password | any admin session | other sites allowed | the Flood body | any origin',
    'With --auth none, verify answers the built-in administrator to the proxy alone.'),
  proxyLogout: rule('GET /api/auth/logout', 'only the authenticating proxy | cookie only | any factors | no current password | any admin session | other sites refused | the Flood body | any origin',
    'With --auth none, signing out only clears the cookie, and another site may not make it.'),
});
