import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorkLimiter } from '../../src/auth/work-limiter.js';
import { ServerBusy } from '../../src/errors.js';

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

describe('createWorkLimiter', () => {
  it('never runs more than maxConcurrent tasks at once', async () => {
    const limiter = createWorkLimiter(2, 10);
    const gates = Array.from({ length: 6 }, () => deferred<void>());
    let running = 0;
    let highest = 0;
    const started: number[] = [];
    const results = gates.map((gate, index) =>
      limiter.run(async () => {
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
    const limiter = createWorkLimiter(1, 10);
    const gates = Array.from({ length: 5 }, () => deferred<void>());
    const started: number[] = [];
    const results = gates.map((gate, index) =>
      limiter.run(async () => {
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
    const limiter = createWorkLimiter(1, 2);
    const gate = deferred<void>();
    let ran = 0;
    const task = async (): Promise<void> => {
      ran++;
      await gate.promise;
    };
    const accepted = [limiter.run(task), limiter.run(task), limiter.run(task)];
    await settle();
    assert.equal(limiter.active, 1);
    assert.equal(limiter.queued, 2);
    await assert.rejects(limiter.run(task), (error: unknown) => {
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
    const limiter = createWorkLimiter(2, 0);
    const gate = deferred<void>();
    const running = [limiter.run(() => gate.promise), limiter.run(() => gate.promise)];
    await assert.rejects(limiter.run(() => gate.promise), ServerBusy);
    gate.resolve();
    await Promise.all(running);
    await limiter.run(async () => undefined);
  });

  it('accepts work again once the queue has drained', async () => {
    const limiter = createWorkLimiter(1, 1);
    const gate = deferred<void>();
    const first = [limiter.run(() => gate.promise), limiter.run(() => gate.promise)];
    await assert.rejects(limiter.run(() => gate.promise), ServerBusy);
    gate.resolve();
    await Promise.all(first);
    assert.equal(await limiter.run(async () => 'again'), 'again');
  });

  it('frees the slot of a task that rejects, and passes the rejection on', async () => {
    const limiter = createWorkLimiter(1, 5);
    const failing = deferred<void>();
    const first = limiter.run(() => failing.promise);
    const second = limiter.run(async () => 'second ran');
    failing.reject(new RangeError('boom'));
    await assert.rejects(first, RangeError);
    assert.equal(await second, 'second ran');
    assert.equal(limiter.active, 0);
  });

  it('frees the slot of a task that throws synchronously', async () => {
    const limiter = createWorkLimiter(1, 5);
    await assert.rejects(
      limiter.run((): Promise<void> => {
        throw new RangeError('sync');
      }),
      RangeError,
    );
    assert.equal(limiter.active, 0);
    assert.equal(await limiter.run(async () => 7), 7);
  });

  it('keeps the count right after many failures (no slot leaks)', async () => {
    const limiter = createWorkLimiter(2, 100);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => limiter.run(async () => (i % 2 === 0 ? Promise.reject(new Error('x')) : i))),
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
