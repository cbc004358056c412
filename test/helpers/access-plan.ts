// Which cells the access matrix runs (test/attack/access-matrix*.test.ts): one of each class of
// cells the policy (test/policy/access-policy.ts) and the row's fixture tell apart, instead of every
// combination of every dimension.
//
// Every combination is still enumerated, as before: each action's requests x every credential kind x
// the accounts (user or administrator, in each of the four states of second factors; a user about
// its own account or another's; the last administrator about its own) x the two settings of
// --require-mfa-for-admins: about 27,000 cells (24,000 before the app's-origin cookie), 40% of them the
// same 401 and 28% on rows that judge no credential. Each is given a class, and the first cell of each
// class is run. A class is:
// - the action and its request (the gate's query; a password row's two requests count as one, below);
// - the answer the cell expects: the policy's refusal, or the fixture's answer when the policy lets the
//   request through. Cells whose answers differ are never merged, whatever else they share;
// - the credential's kind, as the rule can tell it apart:
//   - no credential; a cookie from another site; a cookie sent to an app's origin (another `Host`);
//     `?token=`; a machine token as Bearer, and as Basic;
//   - an expired and a revoked session, where the rule judges a session at all (elsewhere they are no
//     credential); an expired cookie beside a live `?token=`, where `?token=` counts (elsewhere it is
//     an expired session: the `?token=` counts for nothing either way);
//   - an expired and a revoked machine token where a machine token counts (elsewhere they are an
//     Authorization header like a live one);
//   - a cookie by the factors it was made with (pwd, pwd+otp, hwk, hwk+user) where the rule asks for
//     factors (two once enrolled, or as the gate is asked) or, under --require-mfa-for-admins, of an
//     administrator on a rule the setting applies to; elsewhere one cookie, the one-factor `pwd`;
// - and only for a credential the rule counts (a session on a rule that judges one, a `?token=` where
//   it counts, a machine token at the gate), the account it opens:
//   - its second factors, where the rule's factors are two once enrolled (each of the four states);
//     elsewhere the account with both, so a two-factor rule where none is asked shows;
//   - user or administrator, where the rule asks for an administrator, the setting applies to it,
//     or it is the gate; elsewhere a user;
//   - the setting: an administrator's cells are run again under --require-mfa-for-admins on every
//     rule (the setting holds back one-factor sessions on some rules and must not on the others); a
//     user's are the same with or without it.
// The current password (right or wrong) and whose account a path names are no dimension of their
// own: they change the answer (403 WRONG_PASSWORD, 404 for another's token), and answers are kept
// apart. Where a dimension collapses, the first cell is run, and the order makes it the one most
// likely to show a mistake: the one-factor cookie, the account with both second factors, a user.
import assert from 'node:assert/strict';
import { ACCESS, ACTIONS, type Action } from '../../src/auth/access.js';
import { POLICY, type Rule } from '../policy/access-policy.js';
import { assertError } from './api.js';
import {
  CREDENTIALS, promised, type Cell, type Counted, type Credential, type FactorState, type Persona, type Settings,
} from './access-model.js';
import { FIXTURES, type AccountVariant, type BareVariant, type Expected } from './access-fixtures.js';
import { ORIGIN } from './passkeys.js';

export type WorldName = 'users and administrators' | 'the last administrator' | 'no account yet' | '--auth none';

/** One cell of the matrix, ready to run. */
export interface PlannedCell {
  readonly world: WorldName;
  readonly settings: Settings;
  readonly action: Action;
  readonly variant: AccountVariant | BareVariant;
  readonly credential: Credential;
  /** The account's second factors ('no second factor' where there is no account). */
  readonly factors: FactorState;
  /** The account's level: 5 a user, 10 an administrator. */
  readonly level: 5 | 10;
  /** Whether a path that names an account names the caller's own. */
  readonly isSelf: boolean;
  readonly cell: Cell;
  readonly expected: Expected<never>;
  readonly name: string;
}

/** The order each collapsed dimension's first cell comes from: the most second factors first. */
const FACTOR_ORDER: readonly FactorState[] = Object.freeze(['both', 'passkey only', 'TOTP', 'no second factor']);
const OFF: Settings = Object.freeze({ isTwoFactorRequiredOfAdministrators: false });
const ON: Settings = Object.freeze({ isTwoFactorRequiredOfAdministrators: true });

/** The rule the matrix judges `action` by: the written policy's, never the table's. */
export function ruleOf(action: Action): Rule {
  const rule = POLICY[action];
  if (rule === undefined) throw new TypeError(`${action}: no rule in test/policy/access-policy.ts`);
  return rule;
}

/** The answer the policy promises in `cell`: the judge's refusal, or the fixture's answer. */
export function expectedIn<R>(action: Action, cell: Cell, answer: (caller: Counted | undefined) => Expected<R>): Expected<R> {
  const rule = ruleOf(action);
  const verdict = promised(rule, cell);
  if (verdict.kind === 'admitted') return answer(verdict.caller);
  if (verdict.kind === 'sent home') {
    return {
      summary: '303 to the page at home',
      check(res) {
        assert.equal(res.status, 303, res.text);
        assert.equal(res.headers.location, `${ORIGIN}${rule.path}`);
      },
    };
  }
  return { summary: `${verdict.status} ${verdict.code}`, check: (res) => assertError(res, verdict.status, verdict.code) };
}

const judgesSession = (rule: Rule): boolean =>
  rule.who === 'optional' || rule.who === 'account' || rule.who === 'administrator' ||
  rule.who === 'first-or-administrator' || rule.who === 'gate';

/** Whether the rule counts the credential as a caller (from the policy; the account aside). */
function isCounted(rule: Rule, credential: Credential): boolean {
  switch (credential.carrier) {
    case 'cookie':
      if (credential.isOnAppOrigin === true && rule.origin === 'home') return false;
      return judgesSession(rule) && !(credential.isCrossSite === true && rule.crossSite === 'refused');
    case 'url':
      return judgesSession(rule) && rule.urlToken;
    case 'machine':
      return rule.machineToken;
    case 'none':
    case 'dead session':
    case 'dead machine token':
      return false;
  }
}

/** The credential's kind, as far as `rule` tells kinds apart. */
function credentialClass(rule: Rule, credential: Credential, isFactorsMatter: boolean): string {
  switch (credential.carrier) {
    case 'none':
      return 'none';
    case 'cookie':
      if (credential.isCrossSite === true) return 'cookie from another site';
      if (credential.isOnAppOrigin === true) return 'cookie on an app\'s origin';
      return isFactorsMatter ? `cookie ${credential.amr.join('+')}` : 'cookie';
    case 'url':
      return '?token=';
    case 'machine':
      return `machine token as ${credential.scheme}`;
    case 'dead session':
      if (!judgesSession(rule)) return 'none';
      return credential.withLiveUrlToken === true && rule.urlToken ? 'dead cookie beside a live ?token=' : `${credential.why} session`;
    case 'dead machine token':
      return rule.machineToken ? `${credential.why} machine token` : 'machine token as Bearer';
  }
}

interface Candidate {
  readonly world: WorldName;
  readonly settings: Settings;
  readonly action: Action;
  readonly variant: AccountVariant | BareVariant;
  readonly credential: Credential;
  readonly factors: FactorState;
  readonly level: 5 | 10;
  readonly persona: Persona | undefined;
  readonly isSelf: boolean;
}

/** The class of a cell (the header says what and why). */
function classOf(candidate: Candidate, summary: string): string {
  const { action, variant, credential, settings, level, factors } = candidate;
  const rule = ruleOf(action);
  const isAdministrator = level === 10;
  const underSetting = settings.isTwoFactorRequiredOfAdministrators && isAdministrator;
  const request = `${variant.world === 'with accounts' ? 'accounts' : variant.world}${variant.asks === undefined ? '' : variant.label}`;
  const counted = candidate.persona !== undefined && isCounted(rule, credential);
  if (!counted) return JSON.stringify([action, request, credentialClass(rule, credential, false), summary]);
  const isFactorsMatter = rule.factors !== 'one' || (underSetting && rule.adminTwoFactor);
  const isLevelMatter = rule.who === 'administrator' || rule.who === 'first-or-administrator' || rule.who === 'gate' || rule.adminTwoFactor;
  return JSON.stringify([
    action, request, credentialClass(rule, credential, isFactorsMatter), summary,
    rule.factors === 'two-once-enrolled' ? factors : 'any second factors',
    isLevelMatter || underSetting ? level : 'any level',
    underSetting ? '--require-mfa-for-admins' : 'as set',
  ]);
}

const accountVariantsOf = (action: Action): AccountVariant[] =>
  (FIXTURES[action]?.variants ?? []).filter((variant): variant is AccountVariant => variant.world === 'with accounts');
const bareVariantsOf = (action: Action, world: WorldName): BareVariant[] =>
  (FIXTURES[action]?.variants ?? []).filter((variant): variant is BareVariant => variant.world === world);

/** Every cell of every combination, in the order that picks each class's first. */
function* everyCandidate(): Generator<Candidate> {
  const actions = ACTIONS.filter((action) => FIXTURES[action] !== undefined);
  for (const settings of [OFF, ON]) {
    for (const factors of FACTOR_ORDER) {
      for (const level of [5, 10] as const) {
        for (const action of actions) {
          const namesAccount = FIXTURES[action]?.namesAccount === true;
          const personas: Array<{ persona: Persona; isSelf: boolean }> = level === 10
            ? [{ persona: 'administrator', isSelf: !namesAccount }]
            : [{ persona: 'self', isSelf: true }, ...(namesAccount ? [{ persona: 'another user' as const, isSelf: false }] : [])];
          for (const variant of accountVariantsOf(action)) {
            for (const { persona, isSelf } of personas) {
              for (const credential of CREDENTIALS) {
                yield { world: 'users and administrators', settings, action, variant, credential, factors, level, persona, isSelf };
              }
            }
          }
        }
      }
    }
    for (const factors of FACTOR_ORDER) {
      for (const action of actions) {
        for (const variant of accountVariantsOf(action)) {
          for (const credential of CREDENTIALS) {
            yield { world: 'the last administrator', settings, action, variant, credential, factors, level: 10, persona: 'last administrator', isSelf: true };
          }
        }
      }
    }
    if (settings.isTwoFactorRequiredOfAdministrators) continue;
    const none = CREDENTIALS[0] as Credential;
    for (const world of ['no account yet', '--auth none'] as const) {
      for (const action of actions) {
        for (const variant of bareVariantsOf(action, world)) {
          yield { world, settings, action, variant, credential: none, factors: 'no second factor', level: 10, persona: undefined, isSelf: true };
        }
      }
    }
  }
}

function plan(candidate: Candidate): PlannedCell {
  const { world, settings, action, variant, credential, factors, persona } = candidate;
  const account = persona === undefined ? undefined : { factors, persona };
  const cell: Cell = { settings, credential, account, password: variant.password, asks: variant.asks };
  const answer = (counted: Counted | undefined): Expected<never> => variant.answer(cell, counted) as Expected<never>;
  const expected = expectedIn(action, cell, answer);
  const setting = settings.isTwoFactorRequiredOfAdministrators ? ', --require-mfa-for-admins' : '';
  const who = persona === undefined ? world : `${factors}, ${persona}`;
  return { ...candidate, cell, expected, name: `${action}${variant.label} x ${credential.name} x ${who}${setting}: ${expected.summary}` };
}

export interface MatrixPlan {
  /** How many cells every combination makes. */
  readonly combinations: number;
  /** The cells to run: the first of each class. */
  readonly cells: readonly PlannedCell[];
}

let made: MatrixPlan | undefined;

/** The matrix's cells under both settings (each test file runs its own setting's). */
export function matrixPlan(): MatrixPlan {
  if (made !== undefined) return made;
  const classes = new Set<string>();
  const cells: PlannedCell[] = [];
  let combinations = 0;
  for (const candidate of everyCandidate()) {
    combinations += 1;
    const planned = plan(candidate);
    const key = classOf(candidate, planned.expected.summary);
    if (classes.has(key)) continue;
    classes.add(key);
    cells.push(planned);
  }
  made = { combinations, cells };
  return made;
}

/** What to write where, for a row the matrix cannot try yet. */
export function missingFixtureMessage(action: Action): string {
  const row = ACCESS[action];
  return `the access row ${action} (${row.method} ${row.path}) has no fixture, so the access matrix cannot try it: ` +
    `add \`${action}: { variants: [...] }\` to FIXTURES in test/helpers/access-fixtures.ts: a request that succeeds for the account ` +
    `when the judge lets it through (prepare there what the handler needs, as confirmTotp begins a set-up and ` +
    `addPasskey registers a software authenticator), the handler's answer then, \`after\` to keep the tracked ` +
    `accounts true to what it changed, and \`namesAccount: true\` if its path names an account or an account's ` +
    `token or passkey. A row served only under a setting needs its world in test/helpers/access-plan.ts and test/helpers/access-matrix.ts.`;
}
