import assert from 'node:assert/strict';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { judgeWithoutAccounts, noAccountPages } from '../helpers/judge.js';
import { createApp } from '../../src/app.js';
import { AuthRequired, StoreWriteFailed } from '../../src/errors.js';
import { createProxyTrust } from '../../src/http/client-address.js';
import { sendJson } from '../../src/http/respond.js';
import { createLogger } from '../../src/log/logger.js';
import type { Route } from '../../src/routes/context.js';

// How the app answers and logs errors, on a real node:http server with made-up routes: a
// refusal is answered from the error table and not logged; anything else is logged with its stack.

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

function throwsABug(): never {
  throw new Error('a bug in a handler');
}

async function rejectsWithABug(): Promise<never> {
  await Promise.resolve();
  throw new Error('a bug after an await');
}

describe('error answers and the error log', () => {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let server: Server;
  let port: number;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  before(async () => {
    const routes: Route[] = [
      { method: 'GET', path: '/bug', access: 'probe', body: 'none', handler: () => throwsABug() },
      { method: 'GET', path: '/async-bug', access: 'probe', body: 'none', handler: () => rejectsWithABug() },
      { method: 'GET', path: '/store', access: 'probe', body: 'none', handler: () => Promise.reject(new StoreWriteFailed({ cause: new Error('EIO') })) },
      { method: 'GET', path: '/refuse', access: 'probe', body: 'none', handler: () => { throw new AuthRequired(); } },
      { method: 'GET', path: '/ok', access: 'probe', body: 'none', handler: (ctx) => sendJson(ctx.res, 200, {}) },
      { method: 'PATCH', path: '/ok', access: 'probe', body: 'json', handler: (ctx) => sendJson(ctx.res, 200, {}) },
    ];
    const app = createApp({
      apiRoutes: routes,
      rootRoutes: [],
      baseUri: '',
      judge: judgeWithoutAccounts(),
      accountPageElsewhere: noAccountPages,
      proxyTrust: createProxyTrust([]),
      logger: createLogger({ level: 'info', format: 'json', stdout: { write: (text: string) => stdout.push(text) }, stderr: { write: (text: string) => stderr.push(text) } }),
      maxBodyBytes: 1024,
    });
    server = createServer({ keepAliveTimeout: 5_000 }, app.handleRequest);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    agent.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (path: string, method = 'GET'): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = httpRequest({ port, host: '127.0.0.1', path, method, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });

  const errorLines = (): Array<Record<string, unknown>> => stderr.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);

  const assertSecurityHeaders = (answer: Answer): void => {
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(answer.headers['cache-control'], 'no-store');
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
    assert.notEqual(answer.headers['connection'], 'close');
  };

  it('logs an unexpected error thrown by a handler with its stack, and answers a generic 500', async () => {
    stderr.length = 0;
    const answer = await get('/bug');
    assert.equal(answer.status, 500);
    assert.deepEqual(JSON.parse(answer.text), { code: 'INTERNAL_ERROR', message: 'Something went wrong on the server.' });
    assertSecurityHeaders(answer);
    const [line, ...rest] = errorLines();
    assert.deepEqual(rest, []);
    assert.equal(line?.['msg'], 'request failed');
    assert.equal(line?.['path'], '/bug');
    assert.match(String(line?.['cause']), /a bug in a handler/);
    assert.match(String(line?.['stack']), /throwsABug/);
  });

  it('logs an unexpected error of an async handler with its stack', async () => {
    stderr.length = 0;
    assert.equal((await get('/async-bug')).status, 500);
    assert.match(String(errorLines()[0]?.['stack']), /rejectsWithABug/);
  });

  it('logs a failed store write with its stack and answers 503', async () => {
    stderr.length = 0;
    const answer = await get('/store');
    assert.equal(answer.status, 503);
    assert.equal(JSON.parse(answer.text).code, 'STORE_WRITE_FAILED');
    const line = errorLines()[0];
    assert.equal(line?.['code'], 'STORE_WRITE_FAILED');
    assert.match(String(line?.['stack']), /\bat\b/);
  });

  it('answers a refusal from the error table and logs nothing but the request line', async () => {
    stderr.length = 0;
    const answer = await get('/refuse');
    assert.equal(answer.status, 401);
    assert.deepEqual(JSON.parse(answer.text), { code: 'AUTH_REQUIRED', message: 'Authentication is required.' });
    assertSecurityHeaders(answer);
    assert.deepEqual(errorLines(), []);
  });

  it('answers 404 and 405 (with Allow) without throwing, with the security headers, and logs each request', async () => {
    stderr.length = 0;
    const missing = await get('/nothing-here');
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.text), { code: 'NOT_FOUND', message: 'There is nothing at this path.' });
    assertSecurityHeaders(missing);
    const wrongMethod = await get('/ok', 'DELETE');
    assert.equal(wrongMethod.status, 405);
    assert.equal(JSON.parse(wrongMethod.text).code, 'METHOD_NOT_ALLOWED');
    assert.deepEqual(String(wrongMethod.headers['allow']).split(', ').sort(), ['GET', 'PATCH']);
    assertSecurityHeaders(wrongMethod);
    assert.equal((await get('/ok', 'POST')).headers['allow'], wrongMethod.headers['allow']);
    assert.deepEqual(errorLines(), []);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const requests = stdout.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(requests.filter((line) => line['path'] === '/nothing-here' || line['path'] === '/ok').map((line) => [line['method'], line['path'], line['status']]), [
      ['GET', '/nothing-here', 404],
      ['DELETE', '/ok', 405],
      ['POST', '/ok', 405],
    ]);
  });
});
