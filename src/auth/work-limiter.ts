import { ServerBusy } from '../errors.js';

/** Who asks for the work: the client (its throttle key) and the network it belongs to. */
export interface WorkKey {
  readonly client: string;
  readonly network: string;
  /** Work of an authenticated administrator: not held to the per-client and per-network caps (it still takes turns, and a full queue evicts from the busiest client). */
  readonly isUncapped?: boolean;
}

export interface FairnessLimits {
  /** Tasks one client may have waiting; more get ServerBusy at once. */
  readonly maxQueuedPerClient: number;
  /** Tasks all the clients of one network may have waiting together. */
  readonly maxQueuedPerNetwork: number;
}

// SECURITY.md "Login storms": a household or office rarely has more than a few logins waiting
// at once; 16 lets four addresses of one /24 (or /64s of one /48) queue fully. The service
// takes both from --hash-queue-per-client and --hash-queue-per-network.
export const DEFAULT_FAIRNESS: FairnessLimits = Object.freeze({ maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });

export interface WorkLimiter {
  /**
   * Runs `task` when a slot is free. Waiting tasks start round-robin over clients, so a client
   * that queues much waits behind itself, not in front of others; a client not served lately
   * gets every other turn. Throws ServerBusy at once when
   * the client's, its network's or the whole queue's cap is reached.
   */
  run<T>(key: WorkKey, task: () => Promise<T>): Promise<T>;
  readonly active: number;
  readonly queued: number;
}

interface Waiting {
  readonly start: () => void;
  readonly refuse: (error: Error) => void;
}

interface ClientQueue {
  readonly network: string;
  readonly waiting: Waiting[];
}

/**
 * Bounds concurrent expensive work (scrypt) so a login storm queues instead of exhausting CPU and
 * memory, and serves the queue fairly: per-client FIFO queues taken in turn (clients not served
 * lately first, every other turn), capped per client, per network and in total. When the whole
 * queue is full, a client with fewer waiting tasks than the busiest client takes the busiest
 * client's newest place (which gets ServerBusy), so a storm cannot shut a newcomer out.
 */
export function createWorkLimiter(maxConcurrent: number, maxQueued: number, fairness: FairnessLimits = DEFAULT_FAIRNESS): WorkLimiter {
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new TypeError('maxConcurrent must be a positive integer');
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new TypeError('maxQueued must be a non-negative integer');
  for (const [name, value] of Object.entries(fairness)) {
    if (!(Number.isInteger(value) || value === Infinity) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  }
  let active = 0;
  let queued = 0;
  // Two turn orders, insertion order being the turn: fresh clients (one task waiting, and not
  // served in the last `recentSlots` starts) and all others. A client served with work left, or
  // queueing a second task, goes to the back of the others' ring. Turns alternate between the
  // rings when both have work, so a single login waits about one hash even while a storm from
  // many clients keeps the queue full, and busy clients still get every other slot.
  const recentRing = new Map<string, ClientQueue>();
  const freshRing = new Map<string, ClientQueue>();
  const queuedByNetwork = new Map<string, number>();
  // Client -> the start count when it last started a task; oldest first, at most recentSlots entries.
  const lastStarted = new Map<string, number>();
  const recentSlots = Math.max(maxQueued, 1) + maxConcurrent;
  let starts = 0;
  let wasFreshTurn = false;

  const countNetwork = (network: string, delta: number): void => {
    const count = (queuedByNetwork.get(network) ?? 0) + delta;
    if (count === 0) queuedByNetwork.delete(network);
    else queuedByNetwork.set(network, count);
  };

  const recordStart = (client: string): void => {
    starts++;
    lastStarted.delete(client);
    lastStarted.set(client, starts);
    for (const [oldest, at] of lastStarted) {
      if (at > starts - recentSlots) break;
      lastStarted.delete(oldest);
    }
  };

  const queueOf = (client: string): ClientQueue | undefined => recentRing.get(client) ?? freshRing.get(client);

  const takeTurn = (ring: Map<string, ClientQueue>): Waiting | undefined => {
    const first = ring.entries().next();
    if (first.done === true) return undefined;
    const [client, queue] = first.value;
    const item = queue.waiting.shift();
    queued--;
    countNetwork(queue.network, -1);
    ring.delete(client);
    if (queue.waiting.length > 0) recentRing.set(client, queue);
    recordStart(client);
    return item;
  };

  const release = (): void => {
    const isFreshTurn = freshRing.size > 0 && (recentRing.size === 0 || !wasFreshTurn);
    const next = takeTurn(isFreshTurn ? freshRing : recentRing);
    wasFreshTurn = isFreshTurn;
    if (next === undefined) active--;
    else next.start();
  };

  /** Makes room in a full queue for a client with `ownLength` waiting, when that is fairer than refusing it. */
  const evictForFairness = (ownLength: number): boolean => {
    let busiest: [string, ClientQueue, Map<string, ClientQueue>] | undefined;
    for (const ring of [recentRing, freshRing]) {
      for (const [client, queue] of ring) if (busiest === undefined || queue.waiting.length > busiest[1].waiting.length) busiest = [client, queue, ring];
    }
    if (busiest === undefined || busiest[1].waiting.length <= ownLength + 1) return false;
    // Its newest task goes: the busiest client's older ones keep their turn.
    const [client, queue, ring] = busiest;
    const evicted = queue.waiting.pop();
    queued--;
    countNetwork(queue.network, -1);
    if (queue.waiting.length === 0) ring.delete(client);
    evicted?.refuse(new ServerBusy());
    return true;
  };

  const admit = (key: WorkKey): Promise<void> => {
    const ownLength = queueOf(key.client)?.waiting.length ?? 0;
    if (key.isUncapped !== true) {
      if (ownLength >= fairness.maxQueuedPerClient) throw new ServerBusy();
      if ((queuedByNetwork.get(key.network) ?? 0) >= fairness.maxQueuedPerNetwork) throw new ServerBusy();
    }
    if (queued >= maxQueued && (maxQueued === 0 || !evictForFairness(ownLength))) throw new ServerBusy();
    return new Promise<void>((start, refuse) => {
      // (An eviction above never takes from this client: it only takes from a longer queue.)
      let queue = queueOf(key.client);
      if (queue === undefined) {
        queue = { network: key.network, waiting: [] };
        (lastStarted.has(key.client) ? recentRing : freshRing).set(key.client, queue);
      } else if (freshRing.delete(key.client)) {
        // A newcomer's turn is for one task: a client queueing several is busy, however new.
        recentRing.set(key.client, queue);
      }
      queue.waiting.push({ start, refuse });
      queued++;
      countNetwork(key.network, 1);
    });
  };

  return {
    async run(key, task) {
      if (active >= maxConcurrent) await admit(key);
      else {
        active++;
        recordStart(key.client);
      }
      try {
        return await task();
      } finally {
        release();
      }
    },
    get active() {
      return active;
    },
    get queued() {
      return queued;
    },
  };
}
