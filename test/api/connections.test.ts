import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { openRawConnection, rawExchange, statusesIn, uploadThenRead } from '../helpers/raw-socket.js';
import { CLIENT_SETTINGS, type TestServer } from '../helpers/server.js';

// What an answer does to its connection: a 413 reaches a client that is
// still sending; an error answer keeps the connection unless part of a body is still to come;
// routes that take no body refuse one beyond the cap instead of reading any amount.

const TEN_MB = 10_000_000;

interface KeptResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly json: unknown;
  /** The client's local port: two answers on one connection share it. */
  readonly localPort: number | undefined;
}

/** One request over a keep-alive agent (one socket at most), so consecutive requests reuse its connection when the server allows. */
function keptRequest(port: number, agent: Agent, options: { method?: string; path: string; token?: string; body?: string; headers?: Record<string, string> }): Promise<KeptResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.token !== undefined) headers['cookie'] = `jwt=${options.token}`;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(options.body));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, agent }, (res) => {
      const localPort = res.socket.localPort;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text === '' ? undefined : JSON.parse(text), localPort });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('connections', () => {
  let server: TestServer;
  let root: TestUser;
  let user: TestUser;
  let connections = 0;
  const countConnection = (): void => {
    connections += 1;
  };

  before(async () => {
    ({ server, root } = await startPopulatedServer());
    user = await createUser(server, root.token, { level: 5 });
    server.running.server.on('connection', countConnection);
  });
  after(() => {
    server.running.server.off('connection', countConnection);
    return server.close();
  });

  /** Requests made through `use` over one keep-alive agent; returns how many connections the server accepted meanwhile. */
  const onOneAgent = async (use: (agent: Agent) => Promise<void>): Promise<number> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const before = connections;
    try {
      await use(agent);
    } finally {
      agent.destroy();
    }
    return connections - before;
  };

  const jsonHead = (method: string, path: string, length: number, extra = ''): string =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  describe('a 413 reaches a client that is still sending', () => {
    for (const target of [
      { name: 'authenticate', method: 'POST', path: '/api/auth/authenticate', cookie: '' },
      { name: 'register', method: 'POST', path: '/api/auth/register', cookie: 'admin' },
    ]) {
      it(`answers a complete 413 to a client that writes a whole 10 MB body to ${target.name} before reading`, { timeout: 60_000 }, async () => {
        const cookie = target.cookie === 'admin' ? `Cookie: jwt=${root.token}\r\n` : '';
        const res = await uploadThenRead(server.port, jsonHead(target.method, target.path, TEN_MB, cookie), TEN_MB, { fill: 0x20 });
        assert.equal(res.writeError, undefined, `the upload was cut after ${res.bytesWritten} bytes`);
        assert.equal(res.bytesWritten, TEN_MB);
        assert.equal(res.status, 413, res.text.slice(0, 300));
        assert.equal(res.headers['connection'], 'close');
        assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
        assert.equal((JSON.parse(res.body) as { code: string }).code, 'BODY_TOO_LARGE');
        assert.equal(res.closedByServer, true);
      });
    }

    it('answers a complete 413 to a client that writes a whole 10 MB chunked body before reading', { timeout: 60_000 }, async () => {
      // One chunk of 10 MB: the cap is crossed while reading, not declared.
      const head = `POST /api/auth/authenticate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${TEN_MB.toString(16)}\r\n`;
      const res = await uploadThenRead(server.port, head, TEN_MB);
      assert.equal(res.writeError, undefined, `the upload was cut after ${res.bytesWritten} bytes`);
      assert.equal(res.status, 413, res.text.slice(0, 300));
      assert.equal(res.headers['connection'], 'close');
      assert.equal((JSON.parse(res.body) as { code: string }).code, 'BODY_TOO_LARGE');
    });

    it('answers 413 at once to Expect: 100-continue with a declared length over the cap, before any body is sent', async () => {
      for (const path of ['/api/auth/authenticate', '/api/auth/register', '/api/auth/verify', '/api/auth/users']) {
        const connection = await openRawConnection(server.port);
        try {
          await connection.write(jsonHead(path.endsWith('authenticate') || path.endsWith('register') ? 'POST' : 'GET', path, TEN_MB, `Cookie: jwt=${root.token}\r\nExpect: 100-continue\r\n`));
          assert.ok(await connection.waitFor((text) => text.includes('\r\n\r\n{')), `${path}: no answer without a body: ${connection.text()}`);
          assert.deepEqual(statusesIn(connection.text()), [413], `${path}: ${connection.text()}`);
          assert.match(connection.text(), /\r\nConnection: close\r\n/i);
          assert.equal(connection.text().includes('100 Continue'), false);
        } finally {
          connection.destroy();
        }
      }
    });

    it('sends 100 Continue for a body within the cap and then answers it', async () => {
      const body = JSON.stringify({ username: user.username, password: user.password });
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(jsonHead('POST', '/api/auth/authenticate', Buffer.byteLength(body), 'Expect: 100-continue\r\n'));
        assert.ok(await connection.waitFor((text) => text.includes('100 Continue')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [100]);
        await connection.write(body);
        assert.ok(await connection.waitFor((text) => statusesIn(text).length === 2 && text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [100, 200]);
      } finally {
        connection.destroy();
      }
    });

    it('answers 413 with Expect: 100-continue to a no-body route only beyond the cap, and sends 100 Continue within it', async () => {
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(jsonHead('GET', '/api/auth/verify', 2, `Cookie: jwt=${user.token}\r\nExpect: 100-continue\r\n`));
        assert.ok(await connection.waitFor((text) => text.includes('100 Continue')), connection.text());
        await connection.write('{}');
        assert.ok(await connection.waitFor((text) => statusesIn(text).length === 2 && text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [100, 200]);
      } finally {
        connection.destroy();
      }
    });

    it('stops parsing after a 413: a request pipelined after the oversized body is never answered', async () => {
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(jsonHead('POST', '/api/auth/authenticate', 70_000));
        const body = `{"username":"${'x'.repeat(69_985)}"}`;
        assert.equal(body.length, 70_000);
        await connection.write(body);
        assert.ok(await connection.waitFor((text) => text.includes('BODY_TOO_LARGE')), connection.text());
        await connection.write('GET /api/auth/pipelined-after-413 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        assert.equal(await connection.waitForClose(10_000), true, 'the server never closed the connection');
        assert.deepEqual(statusesIn(connection.text()), [413]);
        assert.deepEqual(server.logs.filter((line) => line.includes('pipelined-after-413')), [], 'the bytes after the body were parsed as a request');
      } finally {
        connection.destroy();
      }
    });
    it('never serves a request pipelined behind an oversized body: a DELETE sent after it deletes nobody', async () => {
      const victim = await createUser(server, root.token, { prefix: 'pipelined-victim' });
      const connection = await openRawConnection(server.port);
      try {
        // The body spans several reads of the socket, so the parser reaches the DELETE before
        // the lingering close has stopped it.
        const oversized = `GET /api/auth/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n${'x'.repeat(70_000)}`;
        const deletion = `DELETE /api/auth/users/${encodeURIComponent(victim.username)} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: jwt=${root.token}\r\n\r\n`;
        await connection.write(oversized + deletion);
        assert.equal(await connection.waitForClose(10_000), true, 'the server never closed the connection');
        assert.deepEqual(statusesIn(connection.text()), [413]);
      } finally {
        connection.destroy();
      }
      const users = await server.request({ path: '/api/auth/users', token: root.token });
      assert.ok((users.json as Array<{ username: string }>).some((entry) => entry.username === victim.username), 'the pipelined DELETE was served');
      assert.deepEqual(server.logs.filter((line) => line.includes('"DELETE"')), [], 'the pipelined DELETE reached a route');
    });
  });

  describe('an error answer keeps the connection', () => {
    it('answers 404, 405, 401 and 403 to GETs without a body on one keep-alive connection', async () => {
      const statuses: number[] = [];
      const ports = new Set<number | undefined>();
      const opened = await onOneAgent(async (agent) => {
        for (const request of [
          { path: '/api/auth/nothing-here' },
          { method: 'DELETE', path: '/api/auth/verify' },
          { path: '/api/auth/users' },
          { path: '/api/auth/users', token: user.token },
          { path: '/nowhere' },
          { path: '/api/auth/verify', token: user.token },
        ]) {
          const res = await keptRequest(server.port, agent, request);
          statuses.push(res.status);
          ports.add(res.localPort);
          assert.notEqual(res.headers['connection'], 'close', `${request.path} answered Connection: close`);
        }
      });
      assert.deepEqual(statuses, [404, 405, 401, 403, 404, 200]);
      assert.equal(ports.size, 1, 'the answers came over more than one connection');
      assert.equal(opened, 1, `the server accepted ${opened} connections for six requests`);
    });

    it('keeps the connection after refusing a small body it read to the end (400)', async () => {
      const statuses: number[] = [];
      const opened = await onOneAgent(async (agent) => {
        for (const body of ['{', '[]', '{"username":1}']) {
          const res = await keptRequest(server.port, agent, { method: 'POST', path: '/api/auth/authenticate', body });
          statuses.push(res.status);
        }
      });
      assert.deepEqual(statuses, [400, 400, 400]);
      assert.equal(opened, 1);
    });

    it('closes the connection, after the client has sent it, when an error is answered before the body arrived', async () => {
      const body = JSON.stringify({ username: 'late', password: 'late-password', client: CLIENT_SETTINGS, level: 5 });
      const connection = await openRawConnection(server.port);
      try {
        // register checks credentials before it reads the body: 401 while the body is still to come.
        await connection.write(jsonHead('POST', '/api/auth/register', Buffer.byteLength(body)));
        assert.ok(await connection.waitFor((text) => text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [401]);
        assert.match(connection.text(), /\r\nConnection: close\r\n/i);
        await connection.write(`${body}GET /api/auth/pipelined-after-401 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        assert.equal(await connection.waitForClose(10_000), true);
        assert.deepEqual(statusesIn(connection.text()), [401]);
        assert.deepEqual(server.logs.filter((line) => line.includes('pipelined-after-401')), [], 'the bytes after the unread body were parsed as a request');
        assert.equal(connection.error(), undefined, 'the client was reset instead of closed');
      } finally {
        connection.destroy();
      }
    });
  });

  describe('a route that takes no body', () => {
    const noBodyRoutes = [
      { method: 'GET', path: '/api/auth/verify' },
      { method: 'GET', path: '/api/auth/logout' },
      { method: 'GET', path: '/api/auth/users' },
      { method: 'DELETE', path: '/api/auth/users/nobody-at-all' },
      { method: 'GET', path: '/healthz' },
    ];

    for (const route of noBodyRoutes) {
      it(`answers 413 to ${route.method} ${route.path} announcing a body over the cap, and the client that sends all 10 MB reads it`, { timeout: 60_000 }, async () => {
        const res = await uploadThenRead(server.port, jsonHead(route.method, route.path, TEN_MB, `Cookie: jwt=${root.token}\r\n`), TEN_MB);
        assert.equal(res.writeError, undefined, `the upload was cut after ${res.bytesWritten} bytes`);
        assert.equal(res.status, 413, res.text.slice(0, 300));
        assert.equal((JSON.parse(res.body) as { code: string }).code, 'BODY_TOO_LARGE');
        assert.equal(res.headers['connection'], 'close');
      });
    }

    it('answers 413 to a chunked body that crosses the cap, before answering the request', async () => {
      const chunk = 'x'.repeat(16 * 1024);
      const chunked = `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(5);
      const res = await rawExchange(
        server.port,
        `GET /api/auth/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: jwt=${user.token}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`,
        10_000,
      );
      assert.deepEqual(statusesIn(res.text), [413], res.text.slice(0, 300));
      assert.equal(res.headers['connection'], 'close');
      assert.equal(res.closedByServer, true);
    });

    it('discards a small body and keeps the connection', async () => {
      const statuses: number[] = [];
      const opened = await onOneAgent(async (agent) => {
        statuses.push((await keptRequest(server.port, agent, { path: '/api/auth/verify', token: user.token, body: '{"ignored":true}' })).status);
        statuses.push((await keptRequest(server.port, agent, { path: '/api/auth/users', token: root.token, body: 'x'.repeat(60_000), headers: { 'content-type': 'text/plain' } })).status);
        statuses.push((await keptRequest(server.port, agent, { path: '/healthz', body: '{}' })).status);
        statuses.push((await keptRequest(server.port, agent, { path: '/api/auth/verify', token: user.token })).status);
      });
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      assert.equal(opened, 1);
    });

    it('discards a small chunked body and keeps the connection', async () => {
      const connection = await openRawConnection(server.port);
      try {
        const request = `GET /api/auth/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: jwt=${user.token}\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`;
        await connection.write(request + request);
        assert.ok(await connection.waitFor((text) => statusesIn(text).length === 2 && text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [200, 200]);
        assert.equal(await connection.waitForClose(500), false, 'the server closed a connection it could keep');
      } finally {
        connection.destroy();
      }
    });
  });
});
