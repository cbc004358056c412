// The access matrix runs one cell per class (test/helpers/access-plan.ts). These tests hold the
// classes it promises to keep, so a change to how cells are told apart cannot quietly drop the cells
// that catch a broken judge: every credential kind once per row (an app's origin included), the factors a cookie was made with
// against every state of second factors where a row asks for factors, users and administrators where
// a row asks for an administrator, and administrators again under --require-mfa-for-admins.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACTIONS } from '../../src/auth/access.js';
import { FACTOR_STATES } from '../helpers/access-model.js';
import { matrixPlan, ruleOf, type PlannedCell } from '../helpers/access-plan.js';

const { cells, combinations } = matrixPlan();
const COOKIES = ['cookie pwd', 'cookie pwd+otp', 'cookie hwk', 'cookie hwk+user'];
const judgesSession = (action: string): boolean => ['optional', 'account', 'administrator', 'first-or-administrator', 'gate'].includes(ruleOf(action as never).who);
const withAccounts = (cell: PlannedCell): boolean => cell.world === 'users and administrators' || cell.world === 'the last administrator';

/** The cells of `action` on servers with accounts, under the setting or not. */
function cellsOf(action: string, isUnderSetting: boolean): PlannedCell[] {
  return cells.filter((cell) => cell.action === action && withAccounts(cell) && cell.settings.isTwoFactorRequiredOfAdministrators === isUnderSetting);
}

const actions = ACTIONS.filter((action) => cellsOf(action, false).length > 0);

describe('the access matrix\'s plan', () => {
  it('runs a small share of every combination, on every row with accounts', () => {
    assert.ok(combinations > 20_000, `${combinations} combinations`);
    assert.ok(cells.length < combinations / 10, `${cells.length} of ${combinations}`);
    assert.ok(actions.length >= ACTIONS.length - 3, 'only the --auth none rows run without accounts');
  });

  it('tries every kind of credential once per row', () => {
    const missing: string[] = [];
    for (const action of actions) {
      const rule = ruleOf(action);
      const names = new Set(cellsOf(action, false).map((cell) => cell.credential.name));
      const expected = ['none', '?token=', 'machine token as Bearer', 'machine token as Basic', 'cookie pwd+otp from another site', 'cookie pwd+otp on an app\'s origin', 'cookie pwd'];
      if (judgesSession(action)) expected.push('expired cookie pwd+otp', 'revoked cookie pwd+otp');
      if (judgesSession(action) && rule.urlToken) expected.push('expired cookie beside a live ?token=');
      if (rule.machineToken) expected.push('expired machine token', 'revoked machine token');
      for (const name of expected) if (!names.has(name)) missing.push(`${action}: ${name}`);
    }
    assert.deepEqual(missing, []);
  });

  it('tries each cookie\'s factors against each state of second factors where a row asks for two once enrolled', () => {
    const missing: string[] = [];
    for (const action of actions.filter((name) => ruleOf(name).factors === 'two-once-enrolled')) {
      const seen = new Set(cellsOf(action, false).map((cell) => `${cell.credential.name} x ${cell.factors}`));
      for (const cookie of COOKIES) for (const state of FACTOR_STATES) if (!seen.has(`${cookie} x ${state}`)) missing.push(`${action}: ${cookie} x ${state}`);
    }
    assert.deepEqual(missing, []);
  });

  it('tries a user and an administrator where a row asks for an administrator, and at the gate', () => {
    const missing: string[] = [];
    for (const action of actions.filter((name) => ['administrator', 'first-or-administrator', 'gate'].includes(ruleOf(name).who))) {
      const levels = new Set(cellsOf(action, false).filter((cell) => cell.credential.name === 'cookie pwd').map((cell) => cell.level));
      if (!levels.has(5) || !levels.has(10)) missing.push(action);
    }
    assert.deepEqual(missing, []);
  });

  it('tries an administrator\'s one-factor and two-factor cookie under --require-mfa-for-admins on every row that judges a session', () => {
    const missing: string[] = [];
    for (const action of actions.filter(judgesSession)) {
      const underSetting = cellsOf(action, true).filter((cell) => cell.level === 10);
      const names = new Set(underSetting.map((cell) => cell.credential.name));
      if (!names.has('cookie pwd')) missing.push(`${action}: cookie pwd`);
      if (ruleOf(action).adminTwoFactor && !names.has('cookie pwd+otp')) missing.push(`${action}: cookie pwd+otp`);
    }
    assert.deepEqual(missing, []);
    assert.deepEqual(cells.filter((cell) => cell.settings.isTwoFactorRequiredOfAdministrators && cell.level === 5 && cell.credential.carrier === 'cookie').map((cell) => cell.name), [], 'a user\'s cells are the same with the setting');
  });

  it('never merges cells the policy answers differently', () => {
    // The wrong password where the right one is let in, and another account's token or passkey.
    const summaries = (action: string): Set<string> => new Set(cellsOf(action, false).map((cell) => cell.expected.summary));
    assert.ok(summaries('changePassword').has('403 WRONG_PASSWORD'));
    assert.ok(summaries('revokeMachineToken').has('404 TOKEN_NOT_FOUND'));
    assert.ok(summaries('deleteUser').has('409 LAST_ADMINISTRATOR'));
    assert.ok(summaries('passkeySignIn').has('401 PASSKEY_REFUSED'));
  });
});
