import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { assertServerAnswers, streamBody } from '../helpers/attack.js';
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js';

// Connection-level limits and the headers every answer carries.

describe('attack: HTTP limits', () => {
  let server: TestServer;
  let adminToken: string;
  let userToken: string;

  before(async () => {
    server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '2' });
    adminToken = await registerUser(server, 'hl-admin', { level: 10, password: 'hl-admin-password' });
    userToken = await registerUser(server, 'hl-user', { level: 5, password: 'hl-user-password', asToken: adminToken });
  });
  after(() => server.close());

  it('runs the Node server with the limits SECURITY.md documents', () => {
    const http = server.running.server;
    assert.equal(http.headersTimeout, 10_000);
    assert.equal(http.requestTimeout, 30_000);
    assert.equal((http as unknown as { connectionsCheckingInterval?: number }).connectionsCheckingInterval, 1_000);
    assert.equal(http.keepAliveTimeout, 5_000);
    assert.equal((http as unknown as { maxHeaderSize?: number }).maxHeaderSize, 16 * 1024);
  });

  it('sends Cache-Control: no-store and X-Content-Type-Options: nosniff on every /api/auth answer, errors included', async () => {
    const exchanges = [
      { method: 'GET', path: '/api/auth/verify', token: adminToken },
      { method: 'GET', path: '/api/auth/verify' },
      { method: 'POST', path: '/api/auth/authenticate', body: { username: 'hl-user', password: 'hl-user-password' } },
      { method: 'POST', path: '/api/auth/authenticate', body: { username: 'hl-user', password: 'wrong' } },
      { method: 'POST', path: '/api/auth/authenticate', body: { username: 'hl-user', password: 'wrong' } },
      { method: 'POST', path: '/api/auth/authenticate', body: { username: 'hl-user', password: 'wrong' } },
      { method: 'POST', path: '/api/auth/authenticate', body: '{' },
      { method: 'POST', path: '/api/auth/authenticate', body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { method: 'GET', path: '/api/auth/users', token: adminToken },
      { method: 'GET', path: '/api/auth/users', token: userToken },
      { method: 'GET', path: '/api/auth/users' },
      { method: 'PUT', path: '/api/auth/verify' },
      { method: 'GET', path: '/api/auth/nothing-here' },
      { method: 'DELETE', path: '/api/auth/users/hl-admin', token: adminToken },
      { method: 'DELETE', path: '/api/auth/users/hl-nobody', token: adminToken },
      { method: 'DELETE', path: '/api/auth/users/%zz', token: adminToken },
      { method: 'POST', path: '/api/auth/register?cookie=false', body: { username: 'hl-new', password: 'pw', client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' }, level: 5 }, token: adminToken },
      { method: 'PATCH', path: '/api/auth/users/hl-new', body: { level: 10 }, token: adminToken },
      { method: 'GET', path: '/api/auth/logout', token: userToken },
      { method: 'GET', path: '/healthz' },
    ];
    const seen = new Set<number>();
    for (const exchange of exchanges) {
      const res = await server.request(exchange);
      seen.add(res.status);
      const label = `${exchange.method} ${exchange.path} -> ${res.status}`;
      assert.equal(res.headers['cache-control'], 'no-store', label);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', label);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', label);
      if (res.status === 405) assert.ok(typeof res.headers['allow'] === 'string' && res.headers['allow'].includes('GET'), `${label} without Allow`);
    }
    const tooLarge = await streamBody(server.port, { path: '/api/auth/authenticate', headers: { 'content-type': 'application/json', 'content-length': String(1024 * 1024) }, totalBytes: 1024 * 1024, stopAfterBytes: 1024 });
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.headers?.['cache-control'], 'no-store');
    assert.equal(tooLarge.headers?.['x-content-type-options'], 'nosniff');
    seen.add(413);
    for (const status of [200, 400, 401, 403, 404, 405, 409, 413, 415, 429, 500]) assert.ok(seen.has(status), `no ${status} was checked`);
  });

});

describe('attack: slowloris', () => {
  let server: TestServer;
  let adminToken: string;

  before(async () => {
    // The same mechanism as the 10 s default, shortened so the test takes a few seconds.
    server = await startTestServer({ GATEHOUSE_HEADERS_TIMEOUT: '1000', GATEHOUSE_REQUEST_TIMEOUT: '2000' });
    adminToken = await registerUser(server, 'sl-admin', { level: 10 });
  });
  after(() => server.close());

  it('cuts off a client that sends its headers one byte every 50 ms', { timeout: 30_000 }, async () => {
    // 900 bytes at one per 50 ms would take 45 s; with a 1 s headers timeout checked every
    // second the server must hang up within about 2 s, i.e. after roughly 40 bytes.
    const result = await new Promise<{ closed: boolean; sent: number; answer: string }>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      const payload = `GET /api/auth/verify HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(860)}\r\n\r\n`;
      let sent = 0;
      let answer = '';
      const timer = setInterval(() => {
        if (sent >= payload.length) {
          clearInterval(timer);
          socket.destroy();
          resolve({ closed: false, sent, answer });
          return;
        }
        socket.write(payload[sent++] ?? '');
      }, 50);
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ closed: true, sent, answer });
      });
    });
    assert.ok(result.closed, `the server let a client dribble all ${result.sent} header bytes`);
    assert.ok(result.sent < 200, `the connection was cut only after ${result.sent} bytes`);
    if (result.answer !== '') assert.match(result.answer, /^HTTP\/1\.1 408 /);
    await assertServerAnswers(server, adminToken, 'sl-admin');
  });
});
