import { join } from 'node:path';
import { StoreOutcomeUnknown, StoreWriteFailed } from '../errors.js';
import type { Checker } from '../validate/check.js';
import { RenamedButNotDurable, unlessMissing, writeFileAtomic } from './atomic-file.js';
import { createGroupCommit } from './group-commit.js';
import type { StoreFileSystem } from './file-system.js';

/**
 * A JSON document of the data directory (one file), held in memory and changed with the users
 * store's guarantees: a change runs against the current document and resolves once the file holds
 * it durably; changes that arrive during a write are written together in the next; a failed write
 * changes nothing in memory; the file is 0600 and the replaced one is kept as `<file>.prev`.
 *
 * The document is an immutable value: `current` is deep-frozen, and a change returns the next
 * document (sharing what it did not change) instead of editing the one it was given.
 */
export interface DocumentStore<T> {
  /** The committed document, deep-frozen: equal to what the file holds (and what a reload gives). */
  readonly current: T;
  /** Goes up with every committed write: lets callers cache what they derive from `current`. */
  readonly version: number;
  /**
   * Runs `apply` against the current document (changes queued before it included) and resolves with
   * its `result` once `next` is durable. Returning the document it was given writes nothing. If
   * `apply` throws, the change rejects with that error and nothing it returned is kept. A failed
   * write rejects with StoreWriteFailed (nothing changed) or StoreOutcomeUnknown (the file shows it
   * but may not survive a power cut; memory follows the file). After close: StoreClosed.
   */
  change<R>(apply: (current: T) => DocumentChange<T, R>): Promise<R>;
  /** Refuses every later change (StoreClosed) and resolves once the queued ones are done. */
  close(): Promise<void>;
}

/** What a change returns: the next document, and the value its promise resolves with. */
interface DocumentChange<T, R> {
  readonly next: T;
  readonly result: R;
}

interface DocumentStoreOptions<T> {
  readonly fs: StoreFileSystem;
  readonly dataDir: string;
  /** The file's name in the data directory, e.g. "sessions.json". */
  readonly fileName: string;
  /** What the file is, for messages: "sessions file". */
  readonly description: string;
  /**
   * Checks the parsed file, and every document before it is written (so the store never writes one
   * it would refuse to load); what it returns is what the store holds.
   */
  readonly check: Checker<T>;
  /** The document while the file does not exist (the file is made by the first change). */
  readonly empty: T;
}

/** The file cannot be loaded; it has not been changed. */
export class DocumentCorrupt extends Error {
  constructor(description: string, path: string, detail: string) {
    super(
      `The ${description} ${path} cannot be used: ${detail}. It has not been changed. ` +
        `To restore the previous good copy, stop every Gatehouse process, inspect ${path}.prev, ` +
        `then copy it over ${path} (cp ${path}.prev ${path}) and start again.`,
    );
  }
}

/** Loads (and fully checks) the file, or starts from `empty` when there is none. Throws DocumentCorrupt. */
export async function openDocumentStore<T>(options: DocumentStoreOptions<T>): Promise<DocumentStore<T>> {
  const { fs, description, check } = options;
  const path = join(options.dataDir, options.fileName);
  const frozen = new WeakSet<object>();
  const bytes = await unlessMissing(fs.readFile(path));
  let committed = deepFreeze(bytes === undefined ? options.empty : parseAndCheck(bytes.toString('utf8')), frozen);
  let version = 0;

  function parseAndCheck(text: string): T {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      // Only the position: the parser's message quotes the text around it, which may hold a secret.
      const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
      throw new DocumentCorrupt(description, path, `it is not valid JSON${position === undefined ? '' : ` (at byte ${position})`}`);
    }
    const result = check(parsed, '');
    if (result.ok) return result.value;
    const problem = result.problems[0];
    throw new DocumentCorrupt(description, path, `${problem?.path || 'the document'} ${problem?.message ?? 'is invalid'}`);
  }

  /** Writes `next`; memory follows what the file shows. Throws StoreWriteFailed, StoreOutcomeUnknown, or a TypeError for a document `check` refuses. */
  async function write(next: T): Promise<void> {
    const text = `${JSON.stringify(next)}\n`;
    let checked: T;
    try {
      checked = deepFreeze(parseAndCheck(text), frozen);
    } catch (error) {
      // A bug in a change, not a fault of the disk: nothing is written.
      throw new TypeError(`a change made a ${description} that would not load`, { cause: error });
    }
    try {
      await writeFileAtomic(fs, path, Buffer.from(text, 'utf8'), { keepPrevious: true });
    } catch (error) {
      if (!(error instanceof RenamedButNotDurable)) throw new StoreWriteFailed({ cause: error });
      [committed, version] = [checked, version + 1];
      throw new StoreOutcomeUnknown({ cause: error });
    }
    [committed, version] = [checked, version + 1];
  }

  /** A batch: the document as its changes so far leave it. */
  interface Draft {
    document: T;
  }
  const changes = createGroupCommit<Draft, (current: T) => DocumentChange<T, unknown>>({
    begin: () => ({ document: committed }),
    apply(draft, change) {
      const { next, result } = change(draft.document);
      // Frozen before the next change sees it: a change cannot edit what an earlier one returned.
      draft.document = deepFreeze(next, frozen);
      return result;
    },
    write: (draft) => (draft.document === committed ? undefined : write(draft.document)),
  });

  return {
    get current() {
      return committed;
    },
    get version() {
      return version;
    },
    change: <R>(apply: (current: T) => DocumentChange<T, R>): Promise<R> => changes.submit<R>(apply),
    close: () => changes.close(),
  };
}

/**
 * Freezes `value` and everything reachable from it. `frozen` remembers what was frozen this way
 * (all of it, all the way down), so a next document that shares most of its parts costs only its
 * new ones; an object frozen elsewhere, perhaps only at its top, is still walked.
 */
function deepFreeze<T>(value: T, frozen: WeakSet<object>): T {
  if (typeof value !== 'object' || value === null || frozen.has(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child, frozen);
  Object.freeze(value);
  frozen.add(value);
  return value;
}
