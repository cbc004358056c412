// The judge's refusals of a session check (401 without a session, 403 for a USER on an
// administrator's row) are built once and thrown frozen: a refused request constructs no error.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { ACCESS } from '../../src/auth/access.js';
import { createJudge } from '../../src/auth/judge.js';
import type { SessionChecker } from '../../src/auth/session.js';
import type { PasswordChecks } from '../../src/auth/throttled-password.js';
import { AuthRequired, NotAdministrator, NotGatehouseOrigin } from '../../src/errors.js';
import { createProxyTrust } from '../../src/http/client-address.js';
import { createOriginReader } from '../../src/http/request-origin.js';
import type { Logger } from '../../src/log/logger.js';

const USER_SESSION = { user: { username: 'alice', level: 5 }, token: 't', claims: { username: 'alice', amr: ['pwd'] } };

function judgeWith(check: SessionChecker['check']) {
  return createJudge({
    session: { check } as SessionChecker,
    proxyTrust: createProxyTrust([]),
    accountCount: () => 1,
    origins: createOriginReader({ publicUrl: undefined, floodUrls: [], proxyTrust: createProxyTrust([]) }),
    isTwoFactorRequiredOfAdministrators: false,
    // Neither is reached on these rows: no password is asked, nothing is logged.
    passwords: {} as PasswordChecks,
    logger: {} as Logger,
  });
}

// Sent to localhost, Gatehouse's own origin without --public-url: the rows of accounts answer there.
const request = { method: 'GET', headers: { host: 'localhost:3000' }, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;

/** The error `admit` throws for `row`. */
function refusalOf(
  judge: ReturnType<typeof createJudge>, row: (typeof ACCESS)[keyof typeof ACCESS], cookieToken: string | undefined, sent = request,
): unknown {
  try {
    judge.admit(row, sent, { cookieToken, queryToken: undefined }, '127.0.0.1');
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

  it('refuses a row of Gatehouse\'s own origin asked on an app\'s before it reads the credential, with one frozen 403', () => {
    const judge = judgeWith(() => assert.fail('the credential was read'));
    const elsewhere = { ...request, headers: { host: 'app.example.org' } } as unknown as IncomingMessage;
    const first = refusalOf(judge, ACCESS.showAccount, 't', elsewhere);
    const second = refusalOf(judge, ACCESS.listUsers, 't', elsewhere);
    assert.ok(first instanceof NotGatehouseOrigin);
    assert.equal(second, first);
    assert.ok(Object.isFrozen(first));
    // A row of the sign-in surface goes on to its usual judgement there.
    assert.doesNotThrow(() => judge.admit(ACCESS.verify, elsewhere, { cookieToken: undefined, queryToken: undefined }, '127.0.0.1'));
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
