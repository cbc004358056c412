import assert from 'node:assert/strict';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { ACCESS } from '../../src/auth/access.js';
import { createLogger } from '../../src/log/logger.js';
import type { RequestContext } from '../../src/routes/context.js';
import { forwardRoutes } from '../../src/routes/forward.js';
import { createGateService } from '../../src/routes/gate-service.js';

interface Answer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
}

/** Runs the forward handler on a request made of `headers` and `query`, and returns what it wrote. */
function answer(options: { isStopping: boolean; headers?: Record<string, string>; query?: Record<string, string> }): Answer {
  const sink = { write: () => true };
  const gate = createGateService({
    session: { check: () => ({ refused: 'no accounts in this test' }) },
    machineTokens: undefined,
    isTwoFactorRequiredOfAdministrators: false,
    allowedRedirectHosts: [],
    isStopping: () => options.isStopping,
    logger: createLogger({ level: 'silent', format: 'json', stdout: sink, stderr: sink }),
  });
  const [route] = forwardRoutes({ gate });
  assert.ok(route !== undefined);
  const written: Answer = { status: 0, headers: {}, body: '' };
  const res = {
    writeHead(status: number, headers: OutgoingHttpHeaders) {
      written.status = status;
      written.headers = headers;
      return this;
    },
    end(body: Buffer) {
      written.body = body.toString('utf8');
      return this;
    },
  } as unknown as ServerResponse;
  const ctx: RequestContext = {
    req: { headers: options.headers ?? {} } as IncomingMessage,
    res,
    query: Object.assign(Object.create(null) as Record<string, string>, options.query),
    params: {},
    address: '127.0.0.1',
    credentials: { cookieToken: undefined, queryToken: undefined },
    row: ACCESS.forward,
    admission: { caller: undefined, isCrossSite: false, confirmPassword: () => assert.fail('not used') },
  };
  void route.handler(ctx);
  return written;
}

// Closing a connection whose body was announced is the body policy's work (app.ts), tested
// over HTTP in test/api/forward.test.ts.
describe('the forward handler', () => {
  it('answers 503 SERVICE_STOPPING while the service stops, whatever the request', () => {
    for (const query of [{}, { level: 'ADMINISTRATOR' }, { level: 'typo' }, { login: '/login' }]) {
      const res = answer({ isStopping: true, query, headers: { accept: 'text/html' } });
      assert.equal(res.status, 503);
      assert.equal((JSON.parse(res.body) as { code: string }).code, 'SERVICE_STOPPING');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });

  it('answers 401 when not stopping and no session is found', () => {
    assert.equal(answer({ isStopping: false }).status, 401);
  });
});
