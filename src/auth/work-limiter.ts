import { ServerBusy } from '../errors.js';

/** Who asks for the work: the client (its throttle key) and the network it belongs to. */
export interface WorkKey {
  readonly client: string;
  readonly network: string;
  /** Work of an authenticated administrator: not held to the per-client and per-network caps (it still takes turns, and a full queue evicts from the busiest network first). */
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
   * and alone in its network gets every other turn. Throws ServerBusy at once when the client's
   * or its network's cap is reached, or the whole queue is full and no network (or client) has
   * two more waiting than the newcomer's.
   */
  run<T>(key: WorkKey, task: () => Promise<T>): Promise<T>;
  readonly active: number;
  readonly queued: number;
}

interface Waiting {
  /** Order of arrival: the larger, the newer. */
  readonly seq: number;
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
 * lately and alone in their network first, every other turn), capped per client, per network
 * and in total. When the whole queue is full, a newcomer whose network has at least two fewer
 * tasks waiting than the busiest network takes that network's newest place (which gets
 * ServerBusy), and failing that one whose client has two fewer than the busiest client of a
 * busier network takes its newest; so a storm cannot shut out a network it does not hold, and no
 * network ever loses its last waiting task.
 */
export function createWorkLimiter(maxConcurrent: number, maxQueued: number, fairness: FairnessLimits = DEFAULT_FAIRNESS): WorkLimiter {
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new TypeError('maxConcurrent must be a positive integer');
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new TypeError('maxQueued must be a non-negative integer');
  for (const [name, value] of Object.entries(fairness)) {
    if (!(Number.isInteger(value) || value === Infinity) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  }
  let active = 0;
  let queued = 0;
  // Two turn orders, insertion order being the turn: fresh clients (one task waiting, the only
  // one of its network, and not served in the last `recentSlots` starts) and all others. A
  // client served with work left, queueing a second task, or joined in the queue by another
  // task of its network, goes to the back of the others' ring. Turns alternate between the rings
  // when both have work. The fresh ring holds at most one client per network, so a single login
  // from a network of its own waits behind at most one task per other network that has exactly
  // one waiting, even while a storm from many clients keeps the queue full, and busy clients
  // still get every other slot.
  const recentRing = new Map<string, ClientQueue>();
  const freshRing = new Map<string, ClientQueue>();
  const queuedByNetwork = new Map<string, number>();
  // Network -> its fresh client, when it has one (then that client's task is its only one).
  const freshOfNetwork = new Map<string, string>();
  let arrivals = 0;
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
    if (freshOfNetwork.get(queue.network) === client) freshOfNetwork.delete(queue.network);
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

  /** Refuses the newest waiting task of `client` (ServerBusy), to give its place to a newcomer. */
  const evict = (client: string, queue: ClientQueue, ring: Map<string, ClientQueue>): void => {
    const evicted = queue.waiting.pop();
    queued--;
    countNetwork(queue.network, -1);
    if (queue.waiting.length === 0) {
      ring.delete(client);
      if (freshOfNetwork.get(queue.network) === client) freshOfNetwork.delete(queue.network);
    }
    evicted?.refuse(new ServerBusy());
  };

  /**
   * Makes room in a full queue for a client with `ownLength` waiting in a network with
   * `ownNetworkLength` waiting, when that is fairer than refusing it. A place only ever moves
   * from a network with more waiting than the newcomer's, so a network's last task (a client
   * alone in its network) is never taken.
   */
  const evictForFairness = (ownLength: number, ownNetworkLength: number): boolean => {
    let busiestNetwork: string | undefined;
    let busiestNetworkLength = 0;
    for (const [network, length] of queuedByNetwork) {
      if (length > busiestNetworkLength) [busiestNetwork, busiestNetworkLength] = [network, length];
    }
    // The victim: in the busiest network when it has two more than the newcomer's (its client
    // with the most waiting, the newest task among equals); else the busiest client of a busier
    // network than the newcomer's, when it has two more than the newcomer.
    const isNetworkTurn = busiestNetworkLength > ownNetworkLength + 1;
    let victim: [string, ClientQueue, Map<string, ClientQueue>] | undefined;
    for (const ring of [recentRing, freshRing]) {
      for (const [client, queue] of ring) {
        if (isNetworkTurn ? queue.network !== busiestNetwork : (queuedByNetwork.get(queue.network) ?? 0) <= ownNetworkLength) continue;
        const best = victim?.[1].waiting;
        const length = queue.waiting.length;
        if (best === undefined || length > best.length || (length === best.length && (queue.waiting[length - 1]?.seq ?? 0) > (best[best.length - 1]?.seq ?? 0))) victim = [client, queue, ring];
      }
    }
    if (victim === undefined || (!isNetworkTurn && victim[1].waiting.length <= ownLength + 1)) return false;
    evict(...victim);
    return true;
  };

  const admit = (key: WorkKey): Promise<void> => {
    const ownLength = queueOf(key.client)?.waiting.length ?? 0;
    const ownNetworkLength = queuedByNetwork.get(key.network) ?? 0;
    if (key.isUncapped !== true) {
      if (ownLength >= fairness.maxQueuedPerClient) throw new ServerBusy();
      if (ownNetworkLength >= fairness.maxQueuedPerNetwork) throw new ServerBusy();
    }
    if (queued >= maxQueued && (maxQueued === 0 || !evictForFairness(ownLength, ownNetworkLength))) throw new ServerBusy();
    return new Promise<void>((start, refuse) => {
      // (An eviction above never takes from this client or its network: it only takes from a
      // network with more waiting.) A newcomer's turn is for one task from its network: a
      // client queueing several, or sharing its network with another waiting task, is busy,
      // however new.
      const freshNeighbour = freshOfNetwork.get(key.network);
      if (freshNeighbour !== undefined) {
        const neighbourQueue = freshRing.get(freshNeighbour);
        freshRing.delete(freshNeighbour);
        if (neighbourQueue !== undefined) recentRing.set(freshNeighbour, neighbourQueue);
        freshOfNetwork.delete(key.network);
      }
      let queue = queueOf(key.client);
      if (queue === undefined) {
        queue = { network: key.network, waiting: [] };
        if (lastStarted.has(key.client) || ownNetworkLength > 0) recentRing.set(key.client, queue);
        else {
          freshRing.set(key.client, queue);
          freshOfNetwork.set(key.network, key.client);
        }
      }
      queue.waiting.push({ seq: arrivals++, start, refuse });
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
