// What the written policy (test/policy/access-policy.ts) promises for one cell: an action's rule, a
// credential, an account. Written from the rule's words and docs/contract/access.md and
// docs/contract/gate.md, never from the table the server reads (src/auth/access.ts) and never by
// asking the judge (src/auth/judge.ts): a test that asked either could not fail when they are wrong.
import type { Rule } from '../policy/access-policy.js';

/** How a request carries (or fails to carry) a credential. */
export type Credential =
  | { readonly name: 'none'; readonly carrier: 'none' }
  /**
   * A live session token of the account in the `jwt` cookie, made with these factors; sent by another
   * site's page (`Sec-Fetch-Site: cross-site`) when `isCrossSite`, or to an app's origin (another
   * `Host` than Gatehouse's own, as an app's site behind the proxy has it) when `isOnAppOrigin`.
   */
  | {
    readonly name: string;
    readonly carrier: 'cookie';
    readonly amr: readonly string[];
    readonly isCrossSite?: true;
    readonly isOnAppOrigin?: true;
  }
  /** A live two-factor session token of the account as `?token=`: the strongest a URL can carry. */
  | { readonly name: '?token='; readonly carrier: 'url'; readonly amr: readonly string[] }
  /** The account's machine token in Authorization. */
  | { readonly name: string; readonly carrier: 'machine'; readonly scheme: 'Bearer' | 'Basic' }
  /**
   * A token that once opened the account but no longer does: refused wherever it is sent. `withLiveUrlToken`:
   * a live two-factor `?token=` beside the dead cookie, which the cookie wins over
   * (docs/contract/flood-api.md "Authentication", rule 2).
   */
  | {
    readonly name: string;
    readonly carrier: 'dead session' | 'dead machine token';
    readonly why: 'expired' | 'revoked';
    readonly withLiveUrlToken?: true;
  };

const TWO_FACTORS = ['pwd', 'otp'] as const;

/** Every credential kind the matrix tries. */
export const CREDENTIALS: readonly Credential[] = Object.freeze([
  { name: 'none', carrier: 'none' },
  { name: 'cookie pwd', carrier: 'cookie', amr: ['pwd'] },
  { name: 'cookie pwd+otp', carrier: 'cookie', amr: TWO_FACTORS },
  { name: 'cookie hwk', carrier: 'cookie', amr: ['hwk'] },
  { name: 'cookie hwk+user', carrier: 'cookie', amr: ['hwk', 'user'] },
  { name: '?token=', carrier: 'url', amr: TWO_FACTORS },
  { name: 'machine token as Bearer', carrier: 'machine', scheme: 'Bearer' },
  { name: 'machine token as Basic', carrier: 'machine', scheme: 'Basic' },
  { name: 'expired cookie pwd+otp', carrier: 'dead session', why: 'expired' },
  { name: 'revoked cookie pwd+otp', carrier: 'dead session', why: 'revoked' },
  { name: 'expired machine token', carrier: 'dead machine token', why: 'expired' },
  { name: 'revoked machine token', carrier: 'dead machine token', why: 'revoked' },
  { name: 'expired cookie beside a live ?token=', carrier: 'dead session', why: 'expired', withLiveUrlToken: true },
  { name: 'cookie pwd+otp from another site', carrier: 'cookie', amr: TWO_FACTORS, isCrossSite: true },
  { name: 'cookie pwd+otp on an app\'s origin', carrier: 'cookie', amr: TWO_FACTORS, isOnAppOrigin: true },
] satisfies Credential[]);

/** The host of an app's site, where the proxy routes some of Gatehouse's paths too. */
export const APP_HOST = 'app.example.test';

/** The account's second factors. */
export type FactorState = 'no second factor' | 'TOTP' | 'passkey only' | 'both';
export const FACTOR_STATES: readonly FactorState[] = Object.freeze(['no second factor', 'TOTP', 'passkey only', 'both']);
export const hasTotp = (state: FactorState): boolean => state === 'TOTP' || state === 'both';
export const hasPasskey = (state: FactorState): boolean => state === 'passkey only' || state === 'both';

/**
 * Who asks, and about whose account: a user about its own (`self`) or another's (`another user`: a
 * path naming another account or another account's token or passkey), an administrator about
 * another's, the only administrator about its own.
 */
export type Persona = 'self' | 'another user' | 'administrator' | 'last administrator';
export const isAdministratorPersona = (persona: Persona): boolean =>
  persona === 'administrator' || persona === 'last administrator';

export interface Settings {
  /** `--require-mfa-for-admins`. */
  readonly isTwoFactorRequiredOfAdministrators: boolean;
}

/** The account whose credential the request carries; undefined where no account exists. */
export interface Account {
  readonly factors: FactorState;
  readonly persona: Persona;
}

/** What the gate is asked (the forward URL's `mfa=`, `tokens=`, `level=`). */
export interface GateAsks {
  readonly isTwoFactorAsked: boolean;
  readonly areTokensAllowed: boolean;
  readonly isAdministratorAsked: boolean;
}

/** One cell, as far as the table can tell it apart. */
export interface Cell {
  readonly settings: Settings;
  readonly credential: Credential;
  readonly account: Account | undefined;
  /** Password rows: the current password sent in the body is the account's (`right`) or not. */
  readonly password: 'right' | 'wrong' | undefined;
  readonly asks: GateAsks | undefined;
}

/** The caller the rule counts: a session made with `amr`, or a machine token. */
export type Counted = { readonly via: 'session'; readonly amr: readonly string[] } | { readonly via: 'token' };

export type Promised =
  /** The judge refuses: this status and error code, nothing else. */
  | { readonly kind: 'refused'; readonly status: number; readonly code: string }
  /** The judge lets the request through to the handler, with this caller (undefined: none counted). */
  | { readonly kind: 'admitted'; readonly caller: Counted | undefined }
  /** A page of the account surface asked on an app's origin: 303 to the same page at home (--public-url). */
  | { readonly kind: 'sent home' };

/** docs/contract/accounts.md "Two-step sign-in": two factors are a code after the password, or a passkey that verified its user. */
function isTwoFactor(amr: readonly string[]): boolean {
  return amr.includes('otp') || (amr.includes('hwk') && amr.includes('user'));
}

/**
 * The credential as the rule counts it: `?token=` only where the rule takes it, a machine token only
 * where the rule takes one, an expired or revoked token nowhere.
 */
function countedBy(rule: Rule, credential: Credential): Counted | undefined {
  switch (credential.carrier) {
    case 'none':
    case 'dead session':
    case 'dead machine token':
      // A dead cookie is judged, and a `?token=` beside it ignored (docs/contract/flood-api.md "Authentication", rule 2: the cookie wins).
      return undefined;
    case 'cookie':
      return { via: 'session', amr: credential.amr };
    case 'url':
      return rule.urlToken ? { via: 'session', amr: credential.amr } : undefined;
    case 'machine':
      return rule.machineToken ? { via: 'token' } : undefined;
  }
}

const refused = (status: number, code: string): Promised => ({ kind: 'refused', status, code });
const AUTH_REQUIRED = refused(401, 'AUTH_REQUIRED');

/** Whether another site's page sent the request. */
export const isCrossSite = (credential: Credential): boolean => credential.carrier === 'cookie' && credential.isCrossSite === true;

/** Whether the request was sent to an app's origin. */
export const isOnAppOrigin = (credential: Credential): boolean => credential.carrier === 'cookie' && credential.isOnAppOrigin === true;

/** What the policy promises for `rule` in `cell`. */
export function promised(rule: Rule, cell: Cell): Promised {
  // docs/contract/own-origin.md "Refusals": a `home` rule asked on an app's origin is refused before
  // anything else (the matrix's servers have accounts, so the first registration's exception is moot);
  // a page of the account surface sends a browser home instead.
  if (isOnAppOrigin(cell.credential) && rule.origin === 'home') {
    return rule.method === 'GET' && rule.path.startsWith('/gatehouse/') ? { kind: 'sent home' } : refused(403, 'NOT_GATEHOUSE_ORIGIN');
  }
  // docs/contract/access.md "Cross-site rule": a change another site starts is refused before anything else.
  if (isCrossSite(cell.credential) && isRefusedFromAnotherSite(rule)) return refused(403, 'CROSS_SITE_REQUEST');
  const caller = rule.who;
  switch (caller) {
    case 'anyone':
    case 'proxy':
      // No credential is judged (a proxy rule answers loopback, where the tests run, as the proxy).
      return { kind: 'admitted', caller: undefined };
    case 'gate':
      return promisedAtGate(rule, cell);
    case 'optional':
    case 'account':
    case 'administrator':
    case 'first-or-administrator':
      return promisedToSession(rule, cell, caller);
  }
}

function promisedToSession(
  rule: Rule, cell: Cell, caller: 'optional' | 'account' | 'administrator' | 'first-or-administrator',
): Promised {
  const { account } = cell;
  const isAdministrator = account !== undefined && isAdministratorPersona(account.persona);
  let counted = account === undefined ? undefined : countedBy(rule, cell.credential);
  // `--require-mfa-for-admins`: an administrator's one-factor session counts as none where the rule says so.
  if (
    counted?.via === 'session' && rule.adminTwoFactor && cell.settings.isTwoFactorRequiredOfAdministrators &&
    isAdministrator && !isTwoFactor(counted.amr)
  ) {
    counted = undefined;
  }
  if (counted === undefined) {
    if (caller === 'optional') return { kind: 'admitted', caller: undefined };
    // `first-or-administrator` with no account yet: anyone.
    if (caller === 'first-or-administrator' && account === undefined) return { kind: 'admitted', caller: undefined };
    return AUTH_REQUIRED;
  }
  if ((caller === 'administrator' || caller === 'first-or-administrator') && !isAdministrator) {
    return refused(403, 'NOT_ADMINISTRATOR');
  }
  if (counted.via !== 'session') throw new TypeError('a machine token counts only at the gate');
  if (account !== undefined && needsTwoFactors(rule, account) && !isTwoFactor(counted.amr)) {
    return refused(403, 'SECOND_FACTOR_SESSION_REQUIRED');
  }
  if (rule.password && cell.password === 'wrong') return refused(403, 'WRONG_PASSWORD');
  return { kind: 'admitted', caller: counted };
}

/** `page` rules answer another site's navigation with a page of their own (the fixture's answer). */
function isRefusedFromAnotherSite(rule: Rule): boolean {
  switch (rule.crossSite) {
    case 'refused':
      return true;
    case 'allowed':
    case 'page':
      return false;
  }
}

/** Whether the rule asks this account for a two-factor session (the gate judges `asked` itself). */
function needsTwoFactors(rule: Rule, account: Account): boolean {
  switch (rule.factors) {
    case 'one':
    case 'asked':
      return false;
    case 'two-once-enrolled':
      return account.factors !== 'no second factor';
  }
}

/**
 * docs/contract/gate.md "The forward endpoint", "The query": no session is 401 AUTH_REQUIRED; where
 * two factors are asked (`mfa=1`, or an
 * administrator under `--require-mfa-for-admins`), a session without them, or a machine token without
 * `tokens=1`, is 401 SECOND_FACTOR_REQUIRED; `level=ADMINISTRATOR` refuses a user 403 NOT_ADMINISTRATOR.
 */
function promisedAtGate(rule: Rule, cell: Cell): Promised {
  const { account, asks } = cell;
  if (asks === undefined) throw new TypeError('a gate cell says what the forward URL asks');
  const counted = account === undefined ? undefined : countedBy(rule, cell.credential);
  if (counted === undefined) return AUTH_REQUIRED;
  const isAdministrator = isAdministratorPersona(account?.persona ?? 'self');
  const isTwoFactorAsked = asks.isTwoFactorAsked ||
    (rule.adminTwoFactor && cell.settings.isTwoFactorRequiredOfAdministrators && isAdministrator);
  const isTwoFactorCaller = counted.via === 'token' ? asks.areTokensAllowed : isTwoFactor(counted.amr);
  if (isTwoFactorAsked && !isTwoFactorCaller) return refused(401, 'SECOND_FACTOR_REQUIRED');
  if (asks.isAdministratorAsked && !isAdministrator) return refused(403, 'NOT_ADMINISTRATOR');
  return { kind: 'admitted', caller: counted };
}
