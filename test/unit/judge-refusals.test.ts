// The judge's refusals of a session check (401 without a session, 403 for a USER on an
// administrator's row) are built once and thrown frozen: a refused request constructs no error.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { ACCESS } from '../../src/auth/access.js';
import { createJudge } from '../../src/auth/judge.js';
import type { SessionChecker } from '../../src/auth/session.js';
import type { PasswordChecks } from '../../src/auth/throttled-password.js';
import { AuthRequired, NotAdministrator } from '../../src/errors.js';
import { createProxyTrust } from '../../src/http/client-address.js';
import type { Logger } from '../../src/log/logger.js';

const USER_SESSION = { user: { username: 'alice', level: 5 }, token: 't', claims: { username: 'alice', amr: ['pwd'] } };

function judgeWith(check: SessionChecker['check']) {
  return createJudge({
    session: { check } as SessionChecker,
    machineTokens: undefined,
    proxyTrust: createProxyTrust([]),
    accountCount: () => 1,
    publicHost: undefined,
    isTwoFactorRequiredOfAdministrators: false,
    // Neither is reached on these rows: no password is asked, nothing is logged.
    passwords: {} as PasswordChecks,
    logger: {} as Logger,
  });
}

const request = { method: 'GET', headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;

/** The error `admit` throws for `row`. */
function refusalOf(judge: ReturnType<typeof createJudge>, row: (typeof ACCESS)[keyof typeof ACCESS], cookieToken: string | undefined): unknown {
  try {
    judge.admit(row, request, { cookieToken, queryToken: undefined }, '127.0.0.1');
  } catch (error) {
    return error;
  }
  return assert.fail('admitted');
}

describe('the judge\'s refusals of a session check', () => {
  it('throws the same frozen 401 to every request without a session', () => {
    const judge = judgeWith(() => ({ refused: 'no such token' }));
    const first = refusalOf(judge, ACCESS.showAccount, undefined);
    const second = refusalOf(judge, ACCESS.listUsers, 'not-a-token');
    assert.ok(first instanceof AuthRequired);
    assert.equal(second, first);
    assert.ok(Object.isFrozen(first));
  });

  it('throws the same frozen 403 to every USER on an administrator\'s row', () => {
    const judge = judgeWith(() => USER_SESSION as unknown as ReturnType<SessionChecker['check']>);
    const first = refusalOf(judge, ACCESS.listUsers, 't');
    const second = refusalOf(judge, ACCESS.showUser, 't');
    assert.ok(first instanceof NotAdministrator);
    assert.equal(second, first);
    assert.ok(Object.isFrozen(first));
  });
});
