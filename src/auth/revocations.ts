import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { StoreClosed, StoreOutcomeUnknown, StoreWriteFailed } from '../errors.js';
import { isErrorCode, RenamedButNotDurable, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { isPlainObject } from '../validate/check.js';
import { IAT_SKEW_SECONDS, type SessionClaims } from './jwt.js';

export const REVOCATIONS_FILE = 'revoked-tokens.json';

export type RevocationList = Awaited<ReturnType<typeof openRevocationList>>;

interface Entry {
  readonly username: string;
  readonly exp: number;
  /** Absent in format 1 files. */
  readonly iat: number | undefined;
}

interface Cutoff {
  /** Tokens of this user issued before this second are refused. */
  readonly before: number;
  /** After this second every such token has expired anyway. */
  readonly until: number;
}

/** The revocations waiting for one write, and the answer they all get. */
interface Batch {
  readonly entries: Map<string, Entry>;
  nowSeconds: number;
  done: Promise<void>;
}

// Only a digest is kept, so the file never holds a usable piece of a token.
const digestOf = (token: string): string => createHash('sha256').update(token).digest('base64url');

/**
 * Server-side logout (off by default: docs/contract/flood-api.md "Tokens and cookies"). Bounded: past
 * `maxEntries` live entries,
 * the user with the most entries has them replaced by one cutoff that refuses every token
 * they held (and the user's other tokens issued no later), so filling the list never lets a
 * revoked token back in. Revocations that arrive while a write is under way are written
 * together in the next one; a token already revoked or already waiting costs no write.
 */
export async function openRevocationList(fs: StoreFileSystem, dataDir: string, maxEntries: number) {
  const path = join(dataDir, REVOCATIONS_FILE);
  // Replaced as a whole once a change is on disk: memory never refuses what the file does not.
  let entries = new Map<string, Entry>();
  let cutoffs = new Map<string, Cutoff>();
  await load();
  let writing: Batch | undefined;
  let next: Batch | undefined;
  // The last write's outcome, settled either way: the next write starts after it.
  let tail = Promise.resolve();
  let isClosed = false;

  async function load(): Promise<void> {
    let text: string;
    try {
      text = (await fs.readFile(path)).toString('utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return;
      const code = (error as { code?: unknown }).code;
      throw new Error(`The revocation file ${path} cannot be read (${typeof code === 'string' ? code : String(error)}).`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`The revocation file ${path} is not valid JSON. Remove it to start with none (logged-out tokens become usable until they expire).`);
    }
    if (!isPlainObject(parsed) || !Array.isArray(parsed['entries']) || !Array.isArray(parsed['cutoffs'])) {
      throw new Error(`The revocation file ${path} is not in the expected format.`);
    }
    const document = parsed as { entries: unknown[]; cutoffs: unknown[] };
    for (const item of document.entries) {
      const [digest, username, exp, iat] = Array.isArray(item) ? item : [];
      if (typeof digest === 'string' && typeof username === 'string' && typeof exp === 'number') {
        entries.set(digest, { username, exp, iat: typeof iat === 'number' && Number.isFinite(iat) ? iat : undefined });
      }
    }
    for (const item of document.cutoffs) {
      const [username, before, until] = Array.isArray(item) ? item : [];
      if (typeof username === 'string' && typeof before === 'number' && typeof until === 'number') {
        cutoffs.set(username, { before, until });
      }
    }
  }

  /**
   * Replaces the busiest user's entries with one cutoff just after the newest `iat` among them,
   * so every token they held stays refused, including one whose `iat` is ahead of our clock (up
   * to IAT_SKEW_SECONDS). An entry without `iat` (format 1) counts as now + that skew.
   */
  function collapseBusiestUser(entries: Map<string, Entry>, cutoffs: Map<string, Cutoff>, nowSeconds: number): void {
    const counts = new Map<string, number>();
    let busiest = '';
    let most = 0;
    for (const entry of entries.values()) {
      const count = (counts.get(entry.username) ?? 0) + 1;
      counts.set(entry.username, count);
      if (count > most) [busiest, most] = [entry.username, count];
    }
    const previous = cutoffs.get(busiest);
    let before = previous?.before ?? 0;
    let until = previous?.until ?? 0;
    for (const [digest, entry] of entries) {
      if (entry.username !== busiest) continue;
      before = Math.max(before, (entry.iat ?? nowSeconds + IAT_SKEW_SECONDS) + 1);
      until = Math.max(until, entry.exp);
      entries.delete(digest);
    }
    // Until the last of them expires: a token minted elsewhere may live longer than ours.
    cutoffs.set(busiest, { before, until });
  }

  // Every verification asks: with nothing remembered (the usual state), no digest is made.
  const isRevoked = (token: string, claims: SessionClaims, digest?: string): boolean => {
    if (cutoffs.size > 0) {
      const cutoff = cutoffs.get(claims.username);
      if (cutoff !== undefined && claims.iat < cutoff.before) return true;
    }
    return entries.size > 0 && entries.has(digest ?? digestOf(token));
  };

  // One write at a time, each from the last state on disk. A batch is made on copies and takes
  // effect once written: a logout answered "not applied" has not been (nor after a restart).
  async function commit(batch: Batch): Promise<void> {
    const nextEntries = new Map([...entries].filter(([, entry]) => entry.exp > batch.nowSeconds));
    const nextCutoffs = new Map([...cutoffs].filter(([, cutoff]) => cutoff.until > batch.nowSeconds));
    for (const [digest, entry] of batch.entries) {
      if (nextEntries.size >= maxEntries) collapseBusiestUser(nextEntries, nextCutoffs, batch.nowSeconds);
      nextEntries.set(digest, entry);
    }
    // Format 2 adds each entry's iat (format 1 files are still read); a reader of format 1 reads it too.
    const document = {
      format: 2,
      entries: [...nextEntries].map(([digest, entry]) => [
        digest, entry.username, entry.exp, ...(entry.iat === undefined ? [] : [entry.iat]),
      ]),
      cutoffs: [...nextCutoffs].map(([username, cutoff]) => [username, cutoff.before, cutoff.until]),
    };
    try {
      await writeFileAtomic(fs, path, Buffer.from(JSON.stringify(document)));
    } catch (error) {
      if (!(error instanceof RenamedButNotDurable)) throw new StoreWriteFailed({ cause: error });
      // The file shows the change (rolling back failed): memory follows the file.
      [entries, cutoffs] = [nextEntries, nextCutoffs];
      throw new StoreOutcomeUnknown({ cause: error });
    }
    [entries, cutoffs] = [nextEntries, nextCutoffs];
  }

  async function write(batch: Batch): Promise<void> {
    [writing, next] = [batch, undefined];
    try {
      await commit(batch);
    } finally {
      writing = undefined;
    }
  }

  return {
    /** True when this exact token was revoked, or its user's tokens up to its `iat` were. */
    isRevoked: (token: string, claims: SessionClaims): boolean => isRevoked(token, claims),
    /** Refuses later revocations (StoreClosed) and waits for the last write. */
    async close(): Promise<void> {
      isClosed = true;
      await tail;
    },
    /**
     * Remembers the token until its `exp`; takes effect and resolves once that is on disk. Throws
     * StoreWriteFailed (nothing changed) or StoreOutcomeUnknown (in the file, durability unknown).
     */
    revoke(token: string, claims: SessionClaims, nowSeconds: number): Promise<void> {
      if (isClosed) return Promise.reject(new StoreClosed());
      const digest = digestOf(token);
      // Already refused, or waiting in a batch (being written, or the next): no write of its own.
      if (isRevoked(token, claims, digest)) return Promise.resolve();
      if (writing?.entries.has(digest) === true) return writing.done;
      const isNew = next === undefined;
      const batch = (next ??= { entries: new Map(), nowSeconds: 0, done: tail });
      if (!batch.entries.has(digest)) {
        batch.entries.set(digest, { username: claims.username, exp: claims.exp, iat: claims.iat });
      }
      batch.nowSeconds = Math.max(batch.nowSeconds, nowSeconds);
      if (isNew) {
        // Written now, or after the write under way whatever its outcome.
        batch.done = writing === undefined ? write(batch) : tail.then(() => write(batch));
        tail = batch.done.catch(() => undefined);
      }
      return batch.done;
    },
  };
}
