import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { assertServerAnswers } from '../helpers/attack.js';
import { registerUser, sendRequest, startTestServer, type TestServer } from '../helpers/server.js';

// Issue 12, item 7: addresses sending logins for random usernames keep the hash queue full.
// The queue is served round-robin over client keys, so a new client waits behind at most one
// hash per storming client, never behind the whole queue. Positions are counted (scrypt runs),
// not time.

const STORM_CLIENTS = 64;
const IN_FLIGHT_PER_CLIENT = 8;
const LEGITIMATE_ADDRESS = '192.0.2.50';

describe('attack: a login storm from 64 addresses', () => {
  let server: TestServer;
  let adminToken: string;

  before(async () => {
    server = await startTestServer({
      GATEHOUSE_TRUST_PROXY: '127.0.0.1',
      // Slow enough that the storm keeps the queue full while the test looks; one hash at a time.
      GATEHOUSE_SCRYPT: '4096,8,1',
      GATEHOUSE_HASH_CONCURRENCY: '1',
      GATEHOUSE_HASH_QUEUE: '256',
      GATEHOUSE_THROTTLE_ADDRESS: '1000000',
      GATEHOUSE_LOG_LEVEL: 'error',
    });
    adminToken = await registerUser(server, 'storm-admin', { level: 10, password: 'storm-admin-pw' });
  });
  after(() => server.close());

  it("serves a 65th address's login within 66 hash slots while 64 addresses in 64 /24s keep the queue full", async (t) => {
    let isStorming = true;
    const statuses = new Map<number, number>();
    const storm = async (address: string, worker: number): Promise<void> => {
      for (let i = 0; isStorming; i++) {
        // A storm request may wait longer than the helper's 10 s timeout: that is the storm's problem.
        const res = await sendRequest(server.port, {
          method: 'POST',
          path: '/api/auth/authenticate',
          body: { username: `nobody-${address}-${worker}-${i}`, password: 'wrong' },
          headers: { 'x-forwarded-for': address },
        }).catch(() => ({ status: 0 }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const workers: Array<Promise<void>> = [];
    for (let n = 0; n < STORM_CLIENTS; n++) for (let w = 0; w < IN_FLIGHT_PER_CLIENT; w++) workers.push(storm(`10.${n}.0.7`, w));
    try {
      // Wait (bounded) until every storming address has been served a few times (the storm is
      // under way, not starting) and the storm has the queue nearly full.
      const runsAtStart = server.running.hasher.runs;
      const deadline = Date.now() + 30_000;
      const isUnderWay = (): boolean => server.running.hasher.runs - runsAtStart >= 3 * STORM_CLIENTS && server.running.hasher.queued >= 200;
      while (!isUnderWay() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(server.running.hasher.queued >= 200, `the storm filled the queue to ${String(server.running.hasher.queued)} only`);

      // Counted from the moment the request reaches the server, not from when it was sent.
      let runsAtArrival: number | undefined;
      server.running.server.on('request', (req: IncomingMessage) => {
        if (req.headers['x-forwarded-for'] === LEGITIMATE_ADDRESS) runsAtArrival = server.running.hasher.runs;
      });
      const res = await sendRequest(server.port, {
        method: 'POST',
        path: '/api/auth/authenticate',
        body: { username: 'storm-admin', password: 'storm-admin-pw' },
        headers: { 'x-forwarded-for': LEGITIMATE_ADDRESS },
      });
      assert.equal(res.status, 200, res.text);
      assert.ok(runsAtArrival !== undefined);
      const slots = server.running.hasher.runs - runsAtArrival;
      // One hash per storming client ahead of it, the one running when it arrived, and its own.
      assert.ok(slots <= STORM_CLIENTS + 2, `the login waited for ${slots} hash slots`);
      t.diagnostic(`the login was answered ${slots} hash slots after it arrived`);
    } finally {
      isStorming = false;
      await Promise.all(workers);
    }
    // The storm was refused beyond each address's share, at once, rather than queued.
    assert.ok((statuses.get(503) ?? 0) > 0, `statuses: ${JSON.stringify([...statuses])}`);
    await assertServerAnswers(server, adminToken, 'storm-admin');
  });
});

describe('attack: one address sending many logins at once', () => {
  it('answers the logins beyond 4 waiting with 503 and Retry-After at once, and serves the rest', async () => {
    const server = await startTestServer({ GATEHOUSE_HASH_CONCURRENCY: '1', GATEHOUSE_SCRYPT: '16384,8,1' });
    try {
      await registerUser(server, 'burst-admin', { level: 10, password: 'burst-admin-pw' });
      const answers = await Promise.all(Array.from({ length: 20 }, () => sendRequest(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'burst-admin', password: 'burst-admin-pw' } })));
      const served = answers.filter((res) => res.status === 200).length;
      const busy = answers.filter((res) => res.status === 503);
      assert.equal(served + busy.length, 20, answers.map((res) => res.status).join(','));
      assert.ok(served >= 5, `only ${served} served`);
      assert.ok(busy.length >= 1, 'some were refused');
      for (const res of busy) assert.equal(res.headers['retry-after'], '1');
    } finally {
      await server.close();
    }
  });
});
