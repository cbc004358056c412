import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorkLimiter, type WorkKey } from '../../src/auth/work-limiter.js';
import type { Caller } from '../../src/auth/session.js';
import { ServerBusy } from '../../src/errors.js';
import { hashKeyOf } from '../../src/auth/throttled-password.js';
import type { StoredUser } from '../../src/store/users.js';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued promise continuation run (no time passes: setImmediate runs after the microtask queue drains). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// One client with no per-client or per-network cap: the limiter is a plain FIFO for it.
const ONE: WorkKey = { client: 'one', network: 'one' };
const NO_CLIENT_CAPS = { maxQueuedPerClient: Infinity, maxQueuedPerNetwork: Infinity };

describe('createWorkLimiter', () => {
  it('never runs more than maxConcurrent tasks at once', async () => {
    const limiter = createWorkLimiter(2, 10, NO_CLIENT_CAPS);
    const gates = Array.from({ length: 6 }, () => deferred<void>());
    let running = 0;
    let highest = 0;
    const started: number[] = [];
    const results = gates.map((gate, index) =>
      limiter.run(ONE, async () => {
        running++;
        highest = Math.max(highest, running);
        started.push(index);
        await gate.promise;
        running--;
        return index;
      }),
    );
    await settle();
    assert.deepEqual(started, [0, 1]);
    assert.equal(limiter.active, 2);
    assert.equal(limiter.queued, 4);

    for (const gate of gates) {
      gate.resolve();
      await settle();
      assert.ok(running <= 2, `running = ${running}`);
    }
    assert.deepEqual(await Promise.all(results), [0, 1, 2, 3, 4, 5]);
    assert.equal(highest, 2);
    assert.equal(limiter.active, 0);
    assert.equal(limiter.queued, 0);
  });

  it('starts queued tasks in the order they were submitted', async () => {
    const limiter = createWorkLimiter(1, 10, NO_CLIENT_CAPS);
    const gates = Array.from({ length: 5 }, () => deferred<void>());
    const started: number[] = [];
    const results = gates.map((gate, index) =>
      limiter.run(ONE, async () => {
        started.push(index);
        await gate.promise;
      }),
    );
    await settle();
    assert.deepEqual(started, [0]);
    // Release out of order: still only the head of the queue may start next.
    gates[3]?.resolve();
    gates[1]?.resolve();
    await settle();
    assert.deepEqual(started, [0]);
    gates[0]?.resolve();
    await settle();
    assert.deepEqual(started, [0, 1, 2]);
    gates[2]?.resolve();
    await settle();
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    gates[4]?.resolve();
    await Promise.all(results);
  });

  it('refuses with ServerBusy at once when the queue is full, and runs the rest', async () => {
    const limiter = createWorkLimiter(1, 2, NO_CLIENT_CAPS);
    const gate = deferred<void>();
    let ran = 0;
    const task = async (): Promise<void> => {
      ran++;
      await gate.promise;
    };
    const accepted = [limiter.run(ONE, task), limiter.run(ONE, task), limiter.run(ONE, task)];
    await settle();
    assert.equal(limiter.active, 1);
    assert.equal(limiter.queued, 2);
    await assert.rejects(limiter.run(ONE, task), (error: unknown) => {
      assert.ok(error instanceof ServerBusy);
      assert.equal(error.code, 'SERVER_BUSY');
      return true;
    });
    assert.equal(limiter.queued, 2);
    gate.resolve();
    await Promise.all(accepted);
    assert.equal(ran, 3);
  });

  it('refuses every task beyond maxConcurrent when maxQueued is 0', async () => {
    const limiter = createWorkLimiter(2, 0, NO_CLIENT_CAPS);
    const gate = deferred<void>();
    const running = [limiter.run(ONE, () => gate.promise), limiter.run(ONE, () => gate.promise)];
    await assert.rejects(limiter.run(ONE, () => gate.promise), ServerBusy);
    gate.resolve();
    await Promise.all(running);
    await limiter.run(ONE, async () => undefined);
  });

  it('accepts work again once the queue has drained', async () => {
    const limiter = createWorkLimiter(1, 1, NO_CLIENT_CAPS);
    const gate = deferred<void>();
    const first = [limiter.run(ONE, () => gate.promise), limiter.run(ONE, () => gate.promise)];
    await assert.rejects(limiter.run(ONE, () => gate.promise), ServerBusy);
    gate.resolve();
    await Promise.all(first);
    assert.equal(await limiter.run(ONE, async () => 'again'), 'again');
  });

  it('frees the slot of a task that rejects, and passes the rejection on', async () => {
    const limiter = createWorkLimiter(1, 5, NO_CLIENT_CAPS);
    const failing = deferred<void>();
    const first = limiter.run(ONE, () => failing.promise);
    const second = limiter.run(ONE, async () => 'second ran');
    failing.reject(new RangeError('boom'));
    await assert.rejects(first, RangeError);
    assert.equal(await second, 'second ran');
    assert.equal(limiter.active, 0);
  });

  it('frees the slot of a task that throws synchronously', async () => {
    const limiter = createWorkLimiter(1, 5, NO_CLIENT_CAPS);
    await assert.rejects(
      limiter.run(ONE, (): Promise<void> => {
        throw new RangeError('sync');
      }),
      RangeError,
    );
    assert.equal(limiter.active, 0);
    assert.equal(await limiter.run(ONE, async () => 7), 7);
  });

  it('keeps the count right after many failures (no slot leaks)', async () => {
    const limiter = createWorkLimiter(2, 100, NO_CLIENT_CAPS);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => limiter.run(ONE, async () => (i % 2 === 0 ? Promise.reject(new Error('x')) : i))),
    );
    assert.equal(outcomes.filter((o) => o.status === 'rejected').length, 25);
    assert.equal(limiter.active, 0);
    assert.equal(limiter.queued, 0);
  });

  const badOptions: ReadonlyArray<{ name: string; maxConcurrent: number; maxQueued: number }> = [
    { name: 'maxConcurrent 0', maxConcurrent: 0, maxQueued: 1 },
    { name: 'maxConcurrent 1.5', maxConcurrent: 1.5, maxQueued: 1 },
    { name: 'maxConcurrent NaN', maxConcurrent: Number.NaN, maxQueued: 1 },
    { name: 'maxQueued -1', maxConcurrent: 1, maxQueued: -1 },
    { name: 'maxQueued 0.5', maxConcurrent: 1, maxQueued: 0.5 },
  ];
  for (const { name, maxConcurrent, maxQueued } of badOptions) {
    it(`throws a TypeError for ${name}`, () => {
      assert.throws(() => createWorkLimiter(maxConcurrent, maxQueued), TypeError);
    });
  }
});

describe('createWorkLimiter fairness', () => {
  const keyOf = (client: string, network = `${client}-net`): WorkKey => ({ client, network });

  /** Queues tasks named by their key behind one running task; returns the start order once all ran. */
  async function startOrder(limiter: ReturnType<typeof createWorkLimiter>, submissions: readonly WorkKey[]): Promise<{ order: string[]; refused: string[] }> {
    const blocker = deferred<void>();
    const order: string[] = [];
    const refused: string[] = [];
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    const all = submissions.map((key, index) =>
      limiter
        .run(key, async () => {
          order.push(`${key.client}#${index}`);
        })
        .catch((error: unknown) => {
          assert.ok(error instanceof ServerBusy);
          refused.push(`${key.client}#${index}`);
        }),
    );
    await settle();
    blocker.resolve();
    await running;
    await Promise.all(all);
    return { order, refused };
  }

  /** Runs one task for each client right away, so they count as served lately. */
  const serveOnce = async (limiter: ReturnType<typeof createWorkLimiter>, clients: readonly WorkKey[]): Promise<void> => {
    for (const key of clients) await limiter.run(key, async () => undefined);
  };

  it('starts the tasks of clients served lately round-robin, each client in its own order', async () => {
    const limiter = createWorkLimiter(1, 100, { maxQueuedPerClient: 10, maxQueuedPerNetwork: 100 });
    const [a, b, c] = [keyOf('a'), keyOf('b'), keyOf('c')] as const;
    await serveOnce(limiter, [a, b, c]);
    const { order, refused } = await startOrder(limiter, [a, a, a, a, b, b, c]);
    assert.deepEqual(refused, []);
    assert.deepEqual(order, ['a#0', 'b#4', 'c#6', 'a#1', 'b#5', 'a#2', 'a#3']);
  });

  it('gives a client not served lately every other turn, ahead of a busy client', async () => {
    const limiter = createWorkLimiter(1, 100, { maxQueuedPerClient: 10, maxQueuedPerNetwork: 100 });
    const [busy, newcomer, other] = [keyOf('busy'), keyOf('new'), keyOf('other')] as const;
    await serveOnce(limiter, [busy]);
    const { order } = await startOrder(limiter, [busy, busy, busy, busy, newcomer, other]);
    assert.deepEqual(order, ['new#4', 'busy#0', 'other#5', 'busy#1', 'busy#2', 'busy#3']);
  });

  it('refuses a client beyond its own cap at once, and only that client', async () => {
    const limiter = createWorkLimiter(1, 100, { maxQueuedPerClient: 2, maxQueuedPerNetwork: 100 });
    const [a, b] = [keyOf('a'), keyOf('b')] as const;
    await serveOnce(limiter, [a, b]);
    const { order, refused } = await startOrder(limiter, [a, a, a, a, b, b]);
    assert.deepEqual(refused, ['a#2', 'a#3']);
    assert.deepEqual(order, ['a#0', 'b#4', 'a#1', 'b#5']);
  });

  it('caps the tasks waiting from one network, whatever the number of clients in it', async () => {
    const limiter = createWorkLimiter(1, 100, { maxQueuedPerClient: 2, maxQueuedPerNetwork: 3 });
    const [first, second, third] = ['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((client) => keyOf(client, '10.0.0.0/24')) as [WorkKey, WorkKey, WorkKey];
    const other = keyOf('10.0.1.1', '10.0.1.0/24');
    const { order, refused } = await startOrder(limiter, [first, first, second, second, third, other]);
    // The fourth and fifth from 10.0.0.0/24 are refused; another /24 is not affected.
    assert.deepEqual(refused, ['10.0.0.2#3', '10.0.0.3#4']);
    assert.deepEqual([...order].sort(), ['10.0.0.1#0', '10.0.0.1#1', '10.0.0.2#2', '10.0.1.1#5']);
  });

  it('lets a newcomer into a full queue by refusing the busiest client its newest place', async () => {
    const limiter = createWorkLimiter(1, 4, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 100 });
    const [a, newcomer] = [keyOf('a'), keyOf('new')] as const;
    await serveOnce(limiter, [a]);
    const { order, refused } = await startOrder(limiter, [a, a, a, a, newcomer]);
    assert.deepEqual(refused, ['a#3']);
    assert.deepEqual(order, ['new#4', 'a#0', 'a#1', 'a#2']);
  });

  it('refuses a newcomer to a full queue when no client has two more waiting than it', async () => {
    const limiter = createWorkLimiter(1, 3, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 100 });
    const { order, refused } = await startOrder(limiter, [keyOf('a'), keyOf('b'), keyOf('c'), keyOf('d')]);
    assert.deepEqual(refused, ['d#3']);
    assert.deepEqual(order, ['a#0', 'b#1', 'c#2']);
  });

  /** 64 clients in 64 networks, each trying to queue 8 behind a running task (the defaults keep 4 of each), then one more client. */
  async function stormThenNewcomer(limiter: ReturnType<typeof createWorkLimiter>): Promise<number> {
    const blocker = deferred<void>();
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    const started: string[] = [];
    const storm: Array<Promise<unknown>> = [];
    for (let round = 0; round < 8; round++) {
      for (let n = 0; n < 64; n++) {
        const key = keyOf(`10.${n}.0.7`, `10.${n}.0.0/24`);
        storm.push(limiter.run(key, async () => started.push(key.client)).catch(() => undefined));
      }
    }
    assert.equal(limiter.queued, 256);
    const legitimate = limiter.run(keyOf('192.0.2.1', '192.0.2.0/24'), async () => started.push('legitimate'));
    await settle();
    blocker.resolve();
    await running;
    await legitimate;
    await Promise.all(storm);
    return started.indexOf('legitimate') + 1;
  }

  it('serves a 65th client within 2 slots when 64 clients served lately keep the queue full', async () => {
    const limiter = createWorkLimiter(1, 256);
    await serveOnce(limiter, Array.from({ length: 64 }, (_, n) => keyOf(`10.${n}.0.7`, `10.${n}.0.0/24`)));
    const slot = await stormThenNewcomer(limiter);
    assert.ok(slot >= 1 && slot <= 2, `the newcomer started in slot ${slot}`);
  });

  it('serves a 65th client within 2 slots when 64 new clients start a storm just before it', async () => {
    // Each storming client queues several tasks, so none of them keeps a newcomer's turn.
    const slot = await stormThenNewcomer(createWorkLimiter(1, 256));
    assert.ok(slot >= 1 && slot <= 2, `the newcomer started in slot ${slot}`);
  });

  it('serves clients that each queue one task in turn, newcomers first every other turn', async () => {
    const limiter = createWorkLimiter(1, 100, { maxQueuedPerClient: 10, maxQueuedPerNetwork: 100 });
    const [a, b, c, d] = [keyOf('a'), keyOf('b'), keyOf('c'), keyOf('d')] as const;
    await serveOnce(limiter, [a, b]);
    // a and b were served lately; c and d are new with one task each; a queues a second.
    const { order } = await startOrder(limiter, [a, b, c, d, a]);
    assert.deepEqual(order, ['c#2', 'a#0', 'd#3', 'b#1', 'a#4']);
  });

  it('throws a TypeError for a per-client or per-network cap below 1', () => {
    assert.throws(() => createWorkLimiter(1, 1, { maxQueuedPerClient: 0, maxQueuedPerNetwork: 1 }), TypeError);
    assert.throws(() => createWorkLimiter(1, 1, { maxQueuedPerClient: 1, maxQueuedPerNetwork: 0.5 }), TypeError);
  });
});

describe('createWorkLimiter and uncapped work', () => {
  it('holds work marked isUncapped to the total cap only, still taking turns', async () => {
    const limiter = createWorkLimiter(1, 10, { maxQueuedPerClient: 2, maxQueuedPerNetwork: 2 });
    const blocker = deferred<void>();
    const running = limiter.run({ client: 'x', network: 'x' }, () => blocker.promise);
    const admin = { client: ',account:root', network: ',account:root', isUncapped: true };
    const order: string[] = [];
    const tasks = Array.from({ length: 6 }, (_, i) => limiter.run(admin, async () => order.push(`admin#${i}`)));
    const other = limiter.run({ client: 'y', network: 'y' }, async () => order.push('other'));
    assert.equal(limiter.queued, 7);
    await settle();
    blocker.resolve();
    await running;
    await Promise.all([...tasks, other]);
    assert.equal(order.length, 7);
    assert.ok(order.indexOf('other') <= 1, `the other client waited behind the administrator: ${order.join(', ')}`);
  });
});

describe('hashKeyOf', () => {
  const callerAt = (username: string, level: number): Caller => ({
    user: { username, level } as unknown as StoredUser,
    token: '',
    claims: { username, iat: 0, exp: 1 },
  });

  it("exempts an administrator's own hashes from the per-client caps, as that account", () => {
    assert.deepEqual(hashKeyOf('203.0.113.7', callerAt('root', 10)), {
      client: ',account:root',
      network: ',account:root',
      isUncapped: true,
    });
  });

  it("keys any other signed-in caller's hashes by its address and network, capped as a sign-in", () => {
    const key = hashKeyOf('203.0.113.7', callerAt('alice', 5));
    assert.deepEqual(key, hashKeyOf('203.0.113.7', undefined));
    assert.notEqual(key.isUncapped, true);
  });
});

describe('createWorkLimiter and a storm spread over networks', () => {
  // The review's reproduction, counted in starts rather than time: 1 slot, 256 queued, 4 per
  // client, 16 per network; 300 requests in flight from 600 addresses in 38 /24s (16 addresses
  // each), so every storming client has a single task waiting and looks new.
  const STORM_ADDRESSES = 600;
  const keyOfAddress = (address: string): WorkKey => ({ client: address, network: `${address.slice(0, address.lastIndexOf('.'))}.0/24` });
  const stormKey = (i: number): WorkKey => {
    const n = i % STORM_ADDRESSES;
    return keyOfAddress(`198.51.${Math.floor(n / 16)}.${n % 16}`);
  };
  /** One "hash": it ends on the next turn of the event loop, so the storm moves without any clock. */
  const hash = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  interface StormRun {
    /** Starts between the legitimate login's arrival and its own start, for each one served. */
    readonly slots: number[];
    readonly refused: number;
  }

  async function legitimateLoginsDuringStorm(stormNetworks: number, logins: number): Promise<StormRun> {
    const limiter = createWorkLimiter(1, 256, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });
    let starts = 0;
    let next = 0;
    let isStorming = true;
    const addresses = stormNetworks * 16;
    const attack = (): void => {
      if (!isStorming) return;
      const key = stormKey(next++ % addresses);
      limiter
        .run(key, () => {
          starts++;
          return hash();
        })
        .catch(() => undefined)
        // A refusal is re-sent on the next turn, not at once (that would never yield).
        .finally(() => setImmediate(attack));
    };
    for (let i = 0; i < 300; i++) attack();
    while (starts < 1000) await settle();
    assert.equal(limiter.queued, 256, 'the storm keeps the queue full');

    const slots: number[] = [];
    let refused = 0;
    for (let k = 0; k < logins; k++) {
      const arrival = starts;
      let startedAt = -1;
      await limiter
        .run(keyOfAddress(`203.0.113.${k}`), () => {
          startedAt = starts++;
          return hash();
        })
        .then(
          () => slots.push(startedAt - arrival),
          (error: unknown) => {
            assert.ok(error instanceof ServerBusy);
            refused++;
          },
        );
      for (let i = 0; i < 20; i++) await settle();
    }
    isStorming = false;
    while (limiter.active > 0 || limiter.queued > 0) await settle();
    return { slots, refused };
  }

  for (const networks of [17, 38]) {
    it(`serves every legitimate login within 2 starts while 1 task from each of ${networks * 16} addresses in ${networks} /24s fills the queue`, async () => {
      const { slots, refused } = await legitimateLoginsDuringStorm(networks, 20);
      assert.equal(refused, 0, `${refused} of 20 legitimate logins were refused`);
      assert.equal(slots.length, 20);
      assert.ok(Math.max(...slots) <= 2, `starts waited: ${slots.join(', ')}`);
    });
  }

  const keyOf = (client: string, network = `${client}-net`): WorkKey => ({ client, network });

  it('lets a newcomer into a full queue by refusing the newest task of the network with the most waiting', async () => {
    const limiter = createWorkLimiter(1, 4, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });
    const blocker = deferred<void>();
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    const order: string[] = [];
    const refused: string[] = [];
    const submit = (key: WorkKey, name: string): Promise<unknown> =>
      limiter.run(key, async () => order.push(name)).catch((error: unknown) => {
        assert.ok(error instanceof ServerBusy);
        refused.push(name);
      });
    // Four clients of one /24, one task each; then a client of another network.
    const all = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'].map((address) => submit(keyOf(address, '10.0.0.0/24'), address));
    all.push(submit(keyOf('192.0.2.1', '192.0.2.0/24'), '192.0.2.1'));
    await settle();
    assert.deepEqual(refused, ['10.0.0.4']);
    blocker.resolve();
    await running;
    await Promise.all(all);
    assert.equal(order.indexOf('192.0.2.1') <= 1, true, order.join(', '));
    assert.deepEqual([...order].sort(), ['10.0.0.1', '10.0.0.2', '10.0.0.3', '192.0.2.1']);
  });

  it('refuses a newcomer when every waiting task is the only one of its network', async () => {
    const limiter = createWorkLimiter(1, 8, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });
    const blocker = deferred<void>();
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    let ran = 0;
    const all = Array.from({ length: 8 }, (_, n) => limiter.run(keyOf(`10.${n}.0.1`, `10.${n}.0.0/24`), async () => ran++));
    await assert.rejects(limiter.run(keyOf('192.0.2.1', '192.0.2.0/24'), async () => ran++), ServerBusy);
    blocker.resolve();
    await running;
    await Promise.all(all);
    assert.equal(ran, 8);
  });

  it('gives the fresh turn only to a client alone in its network: a neighbour makes both busy', async () => {
    const limiter = createWorkLimiter(1, 100, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });
    const blocker = deferred<void>();
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    const order: string[] = [];
    const submit = (client: string, network: string): Promise<unknown> => limiter.run(keyOf(client, network), async () => order.push(client));
    // Three new clients: two share 10.0.0.0/24, the third is alone in its /24.
    const all = [submit('10.0.0.1', '10.0.0.0/24'), submit('10.0.0.2', '10.0.0.0/24'), submit('192.0.2.1', '192.0.2.0/24')];
    blocker.resolve();
    await running;
    await Promise.all(all);
    assert.deepEqual(order, ['192.0.2.1', '10.0.0.1', '10.0.0.2']);
  });

  it('serves a login within 2 starts per network ahead of it that has a single new task waiting', async () => {
    const limiter = createWorkLimiter(1, 256, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });
    const blocker = deferred<void>();
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    const order: string[] = [];
    const all: Array<Promise<unknown>> = [];
    // 20 networks with one new client each (fresh), and 10 networks with 16 waiting each.
    for (let n = 0; n < 20; n++) all.push(limiter.run(keyOf(`10.1.${n}.1`, `10.1.${n}.0/24`), async () => order.push('fresh')));
    for (let n = 0; n < 10; n++) for (let c = 0; c < 16; c++) all.push(limiter.run(keyOf(`10.2.${n}.${c % 4}`, `10.2.${n}.0/24`), async () => order.push('busy')));
    all.push(limiter.run(keyOf('192.0.2.1', '192.0.2.0/24'), async () => order.push('legitimate')));
    blocker.resolve();
    await running;
    await Promise.all(all);
    const slot = order.indexOf('legitimate') + 1;
    assert.ok(slot <= 2 * 20 + 1, `the login started in slot ${slot}`);
  });

  it('never takes the place of a client alone in its network, however many newcomers press on a full queue', async () => {
    const limiter = createWorkLimiter(1, 16, { maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });
    const blocker = deferred<void>();
    const running = limiter.run(keyOf('blocker'), () => blocker.promise);
    const legitimate = limiter.run(keyOf('192.0.2.1', '192.0.2.0/24'), async () => 'served');
    // The storm fills the queue from 5 clients of one /24, then 100 newcomers, each from a
    // network of its own, take places until every network has one task waiting.
    const storm: Array<Promise<unknown>> = [];
    for (let c = 0; c < 15; c++) storm.push(limiter.run(keyOf(`10.0.0.${c % 5}`, '10.0.0.0/24'), async () => undefined).catch(() => 'refused'));
    for (let n = 0; n < 100; n++) storm.push(limiter.run(keyOf(`10.1.${n}.1`, `10.1.${n}.0/24`), async () => undefined).catch(() => 'refused'));
    assert.equal(limiter.queued, 16);
    blocker.resolve();
    await running;
    assert.equal(await legitimate, 'served');
    await Promise.all(storm);
  });
});
