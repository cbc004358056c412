import assert from 'node:assert/strict';
import { Agent, createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { judgeWithoutAccounts, noAccountPages } from '../helpers/judge.js';
import { createApp } from '../../src/app.js';
import { readJsonBody } from '../../src/http/body.js';
import { createProxyTrust } from '../../src/http/client-address.js';
import type { LingerLimits } from '../../src/http/lingering-close.js';
import { sendJson } from '../../src/http/respond.js';
import { createLogger } from '../../src/log/logger.js';
import type { Route } from '../../src/routes/context.js';
import { openRawConnection, statusesIn, uploadThenRead } from '../helpers/raw-socket.js';

// The body policy and the lingering close, on a real node:http server with made-up routes:
// `ignored` (the gate's kind of route), and short linger limits so the bounds show quickly.

const MAX_BODY_BYTES = 1024;
const LIMITS: LingerLimits = { maxBytes: 256 * 1024, idleMs: 300, totalMs: 1_500 };

interface AppServer {
  readonly port: number;
  /** Connections the server has accepted. */
  connections(): number;
  /** How many times each handler ran. */
  readonly runs: Map<string, number>;
  close(): Promise<void>;
}

async function startAppServer(): Promise<AppServer> {
  const runs = new Map<string, number>();
  const answer = (name: string): Route['handler'] => (ctx) => {
    runs.set(name, (runs.get(name) ?? 0) + 1);
    sendJson(ctx.res, 200, { name });
  };
  const routes: Route[] = [
    { method: 'GET', path: '/ignored', access: 'probe', body: 'ignored', handler: answer('ignored') },
    { method: 'POST', path: '/ignored', access: 'probe', body: 'ignored', handler: answer('ignored') },
    { method: 'GET', path: '/none', access: 'probe', body: 'none', handler: answer('none') },
    {
      method: 'POST',
      path: '/json',
      access: 'probe',
      body: 'json',
      handler: async (ctx) => {
        await readJsonBody(ctx.req, MAX_BODY_BYTES);
        answer('json')(ctx);
      },
    },
  ];
  const sink = { write: () => undefined };
  const app = createApp({
    apiRoutes: routes,
    rootRoutes: [],
    baseUri: '',
    judge: judgeWithoutAccounts(),
    accountPageElsewhere: noAccountPages,
    proxyTrust: createProxyTrust([]),
    logger: createLogger({ level: 'error', format: 'json', stdout: sink, stderr: sink, now: Date.now }),
    maxBodyBytes: MAX_BODY_BYTES,
    lingerLimits: LIMITS,
  });
  const server: Server = createServer({ keepAliveTimeout: 5_000 }, app.handleRequest);
  server.on('checkContinue', app.handleCheckContinue);
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    runs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const head = (method: string, path: string, extra: string): string => `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

describe('body policy', () => {
  let server: AppServer;
  before(async () => {
    server = await startAppServer();
  });
  after(() => server.close());

  describe('a route that ignores bodies (the gate)', () => {
    it('answers at once, never 413, to a request announcing 10 MB it never sends, and closes the connection', async () => {
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(head('GET', '/ignored', 'Content-Length: 10000000\r\n'));
        assert.ok(await connection.waitFor((text) => text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [200]);
        assert.match(connection.text(), /\r\nConnection: close\r\n/i);
        assert.equal(await connection.waitForClose(10_000), true, 'the connection was left open');
      } finally {
        connection.destroy();
      }
    });

    it('answers without 100 Continue to Expect: 100-continue, never 413', async () => {
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(head('POST', '/ignored', 'Content-Type: application/json\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n'));
        assert.ok(await connection.waitFor((text) => text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [200]);
        assert.match(connection.text(), /\r\nConnection: close\r\n/i);
      } finally {
        connection.destroy();
      }
    });

    it('lets a client that uploads a body before reading read its answer', async () => {
      const res = await uploadThenRead(server.port, head('POST', '/ignored', 'Content-Type: application/json\r\nContent-Length: 200000\r\n'), 200_000);
      assert.equal(res.writeError, undefined);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(JSON.parse(res.body), { name: 'ignored' });
      assert.equal(res.closedByServer, true);
    });

    it('keeps the connection when no body is announced', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const before = server.connections();
      try {
        for (let i = 0; i < 3; i++) {
          const status = await new Promise<number | undefined>((resolve, reject) => {
            const req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/ignored', agent }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode));
            });
            req.on('error', reject);
            req.end();
          });
          assert.equal(status, 200);
        }
      } finally {
        agent.destroy();
      }
      assert.equal(server.connections() - before, 1);
    });
  });

  describe('the lingering close', () => {
    it('cuts a client that goes on sending past the byte limit', { timeout: 30_000 }, async () => {
      // 64 MiB written without reading: only the limit (plus socket buffers) may be taken.
      const res = await uploadThenRead(server.port, head('GET', '/none', 'Content-Length: 67108864\r\n'), 64 * 1024 * 1024);
      assert.ok(res.writeError !== undefined, `all ${res.bytesWritten} bytes were taken`);
      assert.ok(res.bytesWritten < 48 * 1024 * 1024, `${res.bytesWritten} bytes were taken before the cut`);
    });

    it('closes a connection whose client stops sending, after answering it', async () => {
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(head('GET', '/none', 'Content-Length: 5000\r\n'));
        await connection.write('x'.repeat(100));
        assert.equal(await connection.waitForClose(10_000), true, 'an idle lingering connection stayed open');
        assert.deepEqual(statusesIn(connection.text()), [413]);
      } finally {
        connection.destroy();
      }
    });

    it('closes a connection whose client trickles forever, after answering it', async () => {
      const connection = await openRawConnection(server.port);
      const trickle = setInterval(() => void connection.write('x'), 50);
      try {
        await connection.write(head('GET', '/none', 'Content-Length: 1000000\r\n'));
        assert.equal(await connection.waitForClose(15_000), true, 'a trickling lingering connection stayed open');
        assert.deepEqual(statusesIn(connection.text()), [413]);
      } finally {
        clearInterval(trickle);
        connection.destroy();
      }
    });

    it('closes without a reset once the client has sent its whole body, which is never parsed', async () => {
      const connection = await openRawConnection(server.port);
      try {
        await connection.write(head('POST', '/json', 'Content-Type: text/plain\r\nContent-Length: 3000\r\n'));
        assert.ok(await connection.waitFor((text) => text.endsWith('}')), connection.text());
        assert.deepEqual(statusesIn(connection.text()), [415]);
        await connection.write('y'.repeat(3000));
        assert.equal(await connection.waitForClose(10_000), true);
        assert.equal(connection.error(), undefined);
        assert.equal(server.runs.get('json') ?? 0, 0);
      } finally {
        connection.destroy();
      }
    });
  });
});
