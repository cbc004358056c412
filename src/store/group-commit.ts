import { StoreClosed } from '../errors.js';

// Group commit, for the users file and the data directory's other files: changes that arrive while
// a write is under way wait for it, then run one after another against what it left and are
// written once. A change that throws is refused alone; a failed write refuses every change of its
// batch; a change resolves only once the file holds it.

/** How one store runs a batch: S is the batch's state, C a change. */
interface BatchRunner<S, C> {
  /** A new batch's state, from what the last write left. */
  begin(): S;
  /** Applies one change to the batch and returns its result; a throw refuses that change alone. */
  apply(state: S, change: C): unknown;
  /** Writes the batch once; undefined when it changed nothing. */
  write(state: S): Promise<void> | undefined;
}

interface GroupCommit<C> {
  /** Queues `change`; resolves with its result once written. StoreClosed after close(). */
  submit<R>(change: C): Promise<R>;
  /** Refuses every later change (StoreClosed) and resolves once the queued ones are done. */
  close(): Promise<void>;
}

interface Queued<C> {
  readonly change: C;
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
  result?: unknown;
}

export function createGroupCommit<S, C>(runner: BatchRunner<S, C>): GroupCommit<C> {
  const pending: Queued<C>[] = [];
  let draining: Promise<void> | undefined;
  let isClosed = false;

  /** Runs each change of a batch in turn, writes once, and settles them. */
  async function commitBatch(batch: Queued<C>[]): Promise<void> {
    const state = runner.begin();
    const accepted: Queued<C>[] = [];
    for (const queued of batch) {
      try {
        queued.result = runner.apply(state, queued.change);
        accepted.push(queued);
      } catch (error) {
        queued.reject(error);
      }
    }
    let failure: unknown;
    await runner.write(state)?.catch((error: unknown) => (failure = error));
    for (const queued of accepted) {
      if (failure === undefined) queued.resolve(queued.result as never);
      else queued.reject(failure);
    }
  }

  async function drain(): Promise<void> {
    try {
      while (pending.length > 0) {
        const batch = pending.splice(0);
        // commitBatch settles every change itself; a throw here is a bug (say, a value JSON cannot
        // hold) before anything was written: fail the batch rather than stall every later change.
        await commitBatch(batch).catch((error: unknown) => {
          for (const queued of batch) queued.reject(error);
        });
      }
    } finally {
      draining = undefined;
    }
  }

  return {
    submit<R>(change: C): Promise<R> {
      if (isClosed) return Promise.reject(new StoreClosed());
      return new Promise<R>((resolve, reject) => {
        pending.push({ change, resolve: resolve as (value: never) => void, reject });
        draining ??= drain();
      });
    },
    async close() {
      isClosed = true;
      while (draining !== undefined) await draining;
    },
  };
}
