// The table the server reads (src/auth/access.ts) says exactly what the written policy says
// (test/policy/access-policy.ts): a row loosened or tightened in the table alone, SECURITY.md
// regenerated from it, fails here until the policy is changed too, where a reviewer reads it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACCESS, type AccessRow } from '../../src/auth/access.js';
import { POLICY, rule } from './access-policy.js';
import { COMPARED_COLUMNS, policyDifferences } from './policy-differences.js';

type Table = Record<string, AccessRow>;

/** Every value each column may take. */
const DOMAINS: { readonly [C in keyof AccessRow]?: readonly AccessRow[C][] } = {
  caller: ['anyone', 'optional', 'account', 'administrator', 'first-or-administrator', 'gate', 'proxy'],
  urlToken: [true, false],
  machineToken: [true, false],
  factors: ['one', 'two-once-enrolled', 'asked'],
  password: [true, false],
  adminTwoFactor: [true, false],
  crossSite: ['allowed', 'refused', 'page'],
  body: ['none', 'flood', 'json', 'form'],
  origin: ['any', 'home'],
};

/** A copy of the table with one column of one row changed. */
function edited<C extends keyof AccessRow>(action: string, column: C, value: AccessRow[C]): Table {
  const table: Table = { ...ACCESS };
  table[action] = { ...(table[action] as AccessRow), [column]: value };
  return table;
}

describe('the written policy', () => {
  it('and the table say the same of every row, column by column', () => {
    const differences = policyDifferences(ACCESS);
    assert.deepEqual(differences, [], 'change test/policy/access-policy.ts with the table, saying why, or undo the table\'s change');
  });

  it('compares every column the table has', () => {
    const compared = new Set<string>(COMPARED_COLUMNS.map(([column]) => column));
    for (const row of Object.values(ACCESS) as AccessRow[]) {
      assert.deepEqual(Object.keys(row).filter((column) => !compared.has(column)), [], 'a new column needs its words in the policy and its place in COMPARED_COLUMNS');
    }
  });

  it('catches the loosenings a reviewer tried, each by row and column', () => {
    const loosenings: Array<[string, Table, string]> = [
      ['makeResetLink without its two-factor rule', edited('makeResetLink', 'factors', 'one'), 'makeResetLink.factors'],
      ['?token= on an account route', edited('changePassword', 'urlToken', true), 'changePassword.urlToken'],
      ['a machine token on the account', edited('showAccount', 'machineToken', true), 'showAccount.machineToken'],
      ['adding a passkey without the current password', edited('addPasskey', 'password', false), 'addPasskey.password'],
      ['a change another site may make', edited('changePassword', 'crossSite', 'allowed'), 'changePassword.crossSite'],
      ['a sign-out another site may make', edited('signOutPage', 'crossSite', 'allowed'), 'signOutPage.crossSite'],
      ['the users list for any account', edited('listUsers', 'caller', 'account'), 'listUsers.caller'],
      ['registration for anyone', edited('register', 'caller', 'anyone'), 'register.caller'],
      ['a machine token under --require-mfa-for-admins', edited('makeMachineToken', 'adminTwoFactor', false), 'makeMachineToken.adminTwoFactor'],
      ['the gate without the administrators\' setting', edited('forward', 'adminTwoFactor', false), 'forward.adminTwoFactor'],
      ['a form body where JSON is asked', edited('logoutEverywhere', 'body', 'none'), 'logoutEverywhere.body'],
      ['a way in moved to another path', edited('changePassword', 'path', '/api/auth/account/pass'), 'changePassword.path'],
      ['a change of a password on an app\'s origin', edited('changePassword', 'origin', 'any'), 'changePassword.origin'],
      ['the users list on an app\'s origin', edited('listUsers', 'origin', 'any'), 'listUsers.origin'],
    ];
    for (const [what, table, column] of loosenings) {
      const differences = policyDifferences(table);
      assert.equal(differences.length, 1, `${what}: ${differences.join('; ')}`);
      assert.ok(differences[0]?.startsWith(`${column}: `), `${what}: ${differences[0]}`);
    }
  });

  it('catches every other value of every column of every row, stricter ones too', () => {
    let tried = 0;
    for (const action of Object.keys(ACCESS)) {
      for (const [column, values] of Object.entries(DOMAINS) as Array<[keyof AccessRow, readonly unknown[]]>) {
        const row = (ACCESS as Table)[action] as AccessRow;
        for (const value of values.filter((other) => other !== row[column])) {
          const differences = policyDifferences(edited(action, column, value as never));
          assert.deepEqual(differences.map((line) => line.split(':')[0]), [`${action}.${column}`], `${action}.${column} = ${String(value)}`);
          tried += 1;
        }
      }
    }
    assert.ok(tried > 1000, `only ${tried} edits tried`);
  });

  it('catches a row without a rule and a rule without a row', () => {
    const table: Table = { ...ACCESS, exportAccounts: { ...ACCESS.listUsers, path: '/api/auth/export' } };
    assert.deepEqual(policyDifferences(table), ['exportAccounts: the table has this row, and test/policy/access-policy.ts no rule for it']);
    const { join: _join, ...fewer } = ACCESS as Table;
    assert.deepEqual(policyDifferences(fewer), ['join: the policy has a rule, and the table no row for it']);
  });

  it('reads only the phrases it knows, every column said once, with a reason', () => {
    const whole = 'anyone | cookie only | any factors | no current password | any admin session | other sites allowed | no body | any origin';
    assert.equal(rule('GET /x', whole, 'why').who, 'anyone');
    assert.throws(() => rule('GET /x', whole.replace('anyone', 'everyone'), 'why'), /"everyone" is no phrase/);
    assert.throws(() => rule('GET /x', whole.replace(' | no body', ''), 'why'), /nothing says body/);
    assert.throws(() => rule('GET /x', `${whole} | a JSON body`, 'why'), /body is said twice/);
    assert.throws(() => rule('GET /x', whole, ' '), /no reason given/);
    assert.throws(() => rule('/x', whole, 'why'), /is not "METHOD \/path"/);
    for (const [action, written] of Object.entries(POLICY)) assert.ok(written.why.endsWith('.'), `${action}: one sentence saying why`);
  });
});
