import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { assertServerAnswers } from '../helpers/attack.js';
import { registerUser, sendRequest, startTestServer, type TestServer } from '../helpers/server.js';

// Addresses sending logins for random usernames keep the hash queue full.
// The queue is served round-robin over client keys, so a new client waits behind at most one
// hash per storming client, never behind the whole queue. Positions are counted (scrypt runs),
// not time: no request here gives up after a time a loaded machine could exceed (a storm login
// that gave up would leave the queue and be sent again at its back), and each wait is bounded by
// STORM_WAIT_MS only against a hang.

const STORM_CLIENTS = 64;
const IN_FLIGHT_PER_CLIENT = 8;
const LEGITIMATE_ADDRESS = '192.0.2.50';
const STORM_WAIT_MS = 180_000;
// A refused storm login is sent again after this pause, four times sooner than Retry-After (1 s)
// asks: refused logins never enter the queue, which the storm's waiting logins keep full (checked
// when the administrator's login arrives), so a shorter pause only spends the CPU that hashes need.
const RETRY_AFTER_REFUSAL_MS = 250;

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

  /**
   * Storms from `addresses`, `inFlight` requests each, until the queue is nearly full; then logs
   * the administrator in from LEGITIMATE_ADDRESS and returns the hash slots it waited.
   */
  async function slotsForLoginDuringStorm(t: { diagnostic(message: string): void }, addresses: readonly string[], inFlight: number): Promise<number> {
    let isStorming = true;
    // Aborted once the administrator's login is answered: the server skips the hash of a queued
    // login whose client has gone, so the storm's leftovers leave the queue without being hashed.
    const stormEnded = new AbortController();
    const statuses = new Map<number, number>();
    const storm = async (address: string, worker: number): Promise<void> => {
      for (let i = 0; isStorming; i++) {
        const res = await sendRequest(server.port, {
          method: 'POST',
          path: '/api/auth/authenticate',
          body: { username: `nobody-${address}-${worker}-${i}`, password: 'wrong' },
          headers: { 'x-forwarded-for': address },
          timeoutMs: STORM_WAIT_MS,
          signal: stormEnded.signal,
        }).catch(() => ({ status: 0 }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 503) await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_REFUSAL_MS));
      }
    };
    const workers: Array<Promise<void>> = [];
    for (const address of addresses) for (let w = 0; w < inFlight; w++) workers.push(storm(address, w));
    let slots: number;
    try {
      // Wait (bounded) until the storm is under way (a few hashes per storming address, or 3
      // per /24 when there are more addresses than that) and has the queue nearly full.
      const runsAtStart = server.running.hasher.runs;
      const runsUnderWay = Math.min(3 * addresses.length, 200);
      const deadline = Date.now() + STORM_WAIT_MS;
      const isUnderWay = (): boolean => server.running.hasher.runs - runsAtStart >= runsUnderWay && server.running.hasher.queued >= 200;
      while (!isUnderWay() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(isUnderWay(), `the storm ran ${server.running.hasher.runs - runsAtStart} hashes of ${runsUnderWay} and filled the queue to ${String(server.running.hasher.queued)} only`);

      // Counted from the moment the request reaches the server, not from when it was sent.
      let runsAtArrival: number | undefined;
      let queuedAtArrival = 0;
      const onRequest = (req: IncomingMessage): void => {
        if (req.headers['x-forwarded-for'] !== LEGITIMATE_ADDRESS) return;
        runsAtArrival = server.running.hasher.runs;
        queuedAtArrival = server.running.hasher.queued;
      };
      server.running.server.on('request', onRequest);
      const res = await sendRequest(server.port, {
        method: 'POST',
        path: '/api/auth/authenticate',
        body: { username: 'storm-admin', password: 'storm-admin-pw' },
        headers: { 'x-forwarded-for': LEGITIMATE_ADDRESS },
        timeoutMs: STORM_WAIT_MS,
      });
      server.running.server.off('request', onRequest);
      assert.equal(res.status, 200, res.text);
      assert.ok(runsAtArrival !== undefined);
      assert.ok(queuedAtArrival >= 200, `the queue held ${queuedAtArrival} logins when the administrator's arrived`);
      slots = server.running.hasher.runs - runsAtArrival;
      t.diagnostic(`the login was answered ${slots} hash slots after it arrived`);
    } finally {
      isStorming = false;
      stormEnded.abort();
      await Promise.all(workers);
    }
    // The storm was refused beyond its share, at once, rather than queued.
    assert.ok((statuses.get(503) ?? 0) > 0, `statuses: ${JSON.stringify([...statuses])}`);
    await assertServerAnswers(server, adminToken, 'storm-admin');
    return slots;
  }

  it("serves a 65th address's login within 66 hash slots while 64 addresses in 64 /24s keep the queue full", async (t) => {
    const slots = await slotsForLoginDuringStorm(t, Array.from({ length: STORM_CLIENTS }, (_, n) => `10.${n}.0.7`), IN_FLIGHT_PER_CLIENT);
    // One hash per storming client ahead of it, the one running when it arrived, and its own.
    assert.ok(slots <= STORM_CLIENTS + 2, `the login waited for ${slots} hash slots`);
  });

  it('serves a login from another network, never 503, while 272 addresses in 17 /24s keep the queue full with one login each', async (t) => {
    // The review's storm: each address has a single login waiting, so each looks new; only the
    // per-network count tells the storm apart. 17 /24s x 16 places fill the 256.
    const addresses = Array.from({ length: 17 * 16 }, (_, i) => `10.200.${Math.floor(i / 16)}.${1 + (i % 16)}`);
    const slots = await slotsForLoginDuringStorm(t, addresses, 1);
    // The storm has no /24 with a single login waiting, so none is served ahead of it in turn:
    // at most the hash running when it arrived, one busy turn, and its own (with slack for the
    // hashes already started by the time the request is parsed).
    assert.ok(slots <= 8, `the login waited for ${slots} hash slots`);
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
