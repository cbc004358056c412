import { createJudge, type Judge } from '../../src/auth/judge.js';
import { createProxyTrust } from '../../src/http/client-address.js';
import { createOriginReader } from '../../src/http/request-origin.js';
import { createLogger } from '../../src/log/logger.js';

/**
 * A judge for tests of the HTTP edge that build routes of their own, on rows anyone may use: no
 * session opens, no account exists, and no row they use asks for a password (so `passwords` is
 * never reached).
 */
export function judgeWithoutAccounts(): Judge {
  const sink = { write: () => undefined };
  return createJudge({
    session: { check: () => ({ refused: 'no accounts in this test' }) },
    proxyTrust: createProxyTrust([]),
    accountCount: () => 0,
    origins: createOriginReader({ publicUrl: undefined, floodUrls: [], proxyTrust: createProxyTrust([]) }),
    isTwoFactorRequiredOfAdministrators: false,
    passwords: undefined as never,
    logger: createLogger({ level: 'silent', format: 'json', stdout: sink, stderr: sink }),
  });
}

/** For an app whose routes hold no account page: no refusal is ever answered as one. */
export function noAccountPages(): false {
  return false;
}
