import { ServerBusy } from '../errors.js';

/** Who asks for the work: the client (its throttle key) and the network it belongs to (one per client). */
export interface WorkKey {
  readonly client: string;
  readonly network: string;
  /** An authenticated administrator's work: exempt from the per-client and per-network caps, not from turns. */
  readonly isUncapped?: boolean;
}

/** Tasks one client, and all the clients of one network together, may have waiting; more get ServerBusy at once. */
export interface FairnessLimits {
  readonly maxQueuedPerClient: number;
  readonly maxQueuedPerNetwork: number;
}

// docs/security-notes.md "Login storms": a household or office rarely has more than a few logins
// waiting at once; 16 lets four addresses of one /24 (or /64s of one /48) queue fully.
const DEFAULT_FAIRNESS: FairnessLimits = Object.freeze({ maxQueuedPerClient: 4, maxQueuedPerNetwork: 16 });

interface Waiting {
  /** Order of arrival: the larger, the newer. */
  readonly seq: number;
  readonly start: () => void;
  readonly refuse: (error: Error) => void;
}

interface ClientQueue {
  readonly client: string;
  readonly network: string;
  readonly waiting: Waiting[];
}

/** Queues by client (by network in the fresh ring, which holds one per network); insertion order is the turn. */
type Ring = Map<string, ClientQueue>;

/**
 * Bounds concurrent expensive work (scrypt) so a login storm queues instead of exhausting CPU and
 * memory. Per-client FIFO queues take turns, capped per client, per network and in total; a full
 * queue refuses (ServerBusy) unless a network, or failing that a client of a busier network, has
 * two more waiting than the newcomer's: then that one's newest task is refused instead, so no
 * network ever loses its last waiting task.
 */
export function createWorkLimiter(maxConcurrent: number, maxQueued: number, fairness = DEFAULT_FAIRNESS) {
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
    throw new TypeError('maxConcurrent must be a positive integer');
  }
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new TypeError('maxQueued must be a non-negative integer');
  for (const [name, value] of Object.entries(fairness)) {
    if (!(Number.isInteger(value) || value === Infinity) || value < 1) {
      throw new TypeError(`${name} must be a positive integer`);
    }
  }
  let active = 0;
  let queued = 0;
  // Two rings, insertion order being the turn, alternating when both have work: fresh clients
  // (one task waiting, the only one of its network, not served in the last `recentSlots` starts)
  // and all others. A client served with work left, queueing a second task, or joined by another
  // of its network goes to the back of the others' ring. So a lone login waits behind at most one
  // task per other network with a single one waiting, whatever storm keeps the queue full.
  const recentRing: Ring = new Map();
  const freshRing: Ring = new Map();
  const queuedByNetwork = new Map<string, number>();
  let arrivals = 0;
  // Client -> the start count when it last started a task; oldest first.
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

  // Takes a queue's oldest task to start it (the client, if it has more, goes to the back of the
  // busy ring) or its newest to refuse it (the client keeps its turn).
  const take = (ringKey: string, queue: ClientQueue, ring: Ring, isStart: boolean): Waiting | undefined => {
    const item = isStart ? queue.waiting.shift() : queue.waiting.pop();
    queued--;
    countNetwork(queue.network, -1);
    if (queue.waiting.length === 0 || isStart) ring.delete(ringKey);
    if (queue.waiting.length > 0 && isStart) recentRing.set(queue.client, queue);
    return item;
  };

  const release = (): void => {
    const isFreshTurn = freshRing.size > 0 && (recentRing.size === 0 || !wasFreshTurn);
    const ring = isFreshTurn ? freshRing : recentRing;
    wasFreshTurn = isFreshTurn;
    const first = ring.entries().next();
    if (first.done === true) {
      active--;
      return;
    }
    recordStart(first.value[1].client);
    take(...first.value, ring, true)?.start();
  };

  /** Makes room in a full queue for a newcomer when that is fairer than refusing it (see createWorkLimiter). */
  const evictForFairness = (ownLength: number, ownNetworkLength: number): boolean => {
    let busiestNetwork: string | undefined;
    let busiestNetworkLength = 0;
    for (const [network, length] of queuedByNetwork) {
      if (length > busiestNetworkLength) [busiestNetwork, busiestNetworkLength] = [network, length];
    }
    // The victim is the client with the most waiting (the newest task among equals).
    const isNetworkTurn = busiestNetworkLength > ownNetworkLength + 1;
    let victim: [string, ClientQueue, Ring] | undefined;
    for (const ring of [recentRing, freshRing]) {
      for (const [ringKey, queue] of ring) {
        if (
          isNetworkTurn
            ? queue.network !== busiestNetwork
            : (queuedByNetwork.get(queue.network) ?? 0) <= ownNetworkLength
        ) {
          continue;
        }
        const best = victim?.[1].waiting;
        const length = queue.waiting.length;
        if (
          best === undefined ||
          length > best.length ||
          (length === best.length && (queue.waiting[length - 1]?.seq ?? 0) > (best[best.length - 1]?.seq ?? 0))
        ) {
          victim = [ringKey, queue, ring];
        }
      }
    }
    if (victim === undefined || (!isNetworkTurn && victim[1].waiting.length <= ownLength + 1)) return false;
    take(...victim, false)?.refuse(new ServerBusy());
    return true;
  };

  const admit = (key: WorkKey): Promise<void> => {
    const fresh = freshRing.get(key.network);
    const own = fresh?.client === key.client ? fresh : recentRing.get(key.client);
    const ownLength = own?.waiting.length ?? 0;
    const ownNetworkLength = queuedByNetwork.get(key.network) ?? 0;
    if (key.isUncapped !== true) {
      if (ownLength >= fairness.maxQueuedPerClient) throw new ServerBusy();
      if (ownNetworkLength >= fairness.maxQueuedPerNetwork) throw new ServerBusy();
    }
    if (queued >= maxQueued && (maxQueued === 0 || !evictForFairness(ownLength, ownNetworkLength))) {
      throw new ServerBusy();
    }
    return new Promise<void>((start, refuse) => {
      // A fresh turn is for a network's one waiting task: a second task from it makes it busy.
      if (fresh !== undefined) {
        freshRing.delete(key.network);
        recentRing.set(fresh.client, fresh);
      }
      let queue = recentRing.get(key.client);
      if (queue === undefined) {
        queue = { client: key.client, network: key.network, waiting: [] };
        if (lastStarted.has(key.client) || ownNetworkLength > 0) recentRing.set(key.client, queue);
        else freshRing.set(key.network, queue);
      }
      queue.waiting.push({ seq: arrivals++, start, refuse });
      queued++;
      countNetwork(key.network, 1);
    });
  };

  return {
    /** Runs `task` when a slot is free; throws ServerBusy at once when it may not wait (see above). */
    async run<T>(key: WorkKey, task: () => Promise<T>): Promise<T> {
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
