import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { StoreClosed, StoreOutcomeUnknown, StoreWriteFailed } from '../errors.js';
import { isErrorCode, RenamedButNotDurable, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { isPlainObject } from '../validate/check.js';
import type { SessionClaims } from './jwt.js';

export const REVOCATIONS_FILE = 'revoked-tokens.json';

export interface RevocationList {
  /** True when this exact token was revoked, or its user's tokens up to its `iat` were. */
  isRevoked(token: string, claims: SessionClaims): boolean;
  /**
   * Remembers the token until its `exp`; takes effect and resolves once that is on disk. Throws
   * StoreWriteFailed (nothing changed) or StoreOutcomeUnknown (in the file, durability unknown).
   */
  revoke(token: string, claims: SessionClaims, nowSeconds: number): Promise<void>;
  /** Refuses later revocations (StoreClosed) and waits for the last write. */
  close(): Promise<void>;
}

interface Entry {
  readonly username: string;
  readonly exp: number;
}

interface Cutoff {
  /** Tokens of this user issued before this second are refused. */
  readonly before: number;
  /** After this second every such token has expired anyway. */
  readonly until: number;
}

// Only a digest is kept, so the file never holds a usable piece of a token.
const digestOf = (token: string): string => createHash('sha256').update(token).digest('base64url');

/**
 * Server-side logout (off by default: INTERFACE.md). Bounded: past `maxEntries` live entries,
 * the user with the most entries has them replaced by one cutoff that ends all of that
 * user's earlier sessions, so filling the list never lets a revoked token back in.
 */
export async function openRevocationList(fs: StoreFileSystem, dataDir: string, maxEntries: number, tokenTtlSeconds: number): Promise<RevocationList> {
  const path = join(dataDir, REVOCATIONS_FILE);
  // Replaced as a whole once a change is on disk, so memory never refuses what the file does not.
  let entries = new Map<string, Entry>();
  let cutoffs = new Map<string, Cutoff>();
  await load();
  let writing: Promise<void> = Promise.resolve();
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
      const [digest, username, exp] = Array.isArray(item) ? item : [];
      if (typeof digest === 'string' && typeof username === 'string' && typeof exp === 'number') entries.set(digest, { username, exp });
    }
    for (const item of document.cutoffs) {
      const [username, before, until] = Array.isArray(item) ? item : [];
      if (typeof username === 'string' && typeof before === 'number' && typeof until === 'number') cutoffs.set(username, { before, until });
    }
  }

  function prune(entries: Map<string, Entry>, cutoffs: Map<string, Cutoff>, nowSeconds: number): void {
    for (const [digest, entry] of entries) if (entry.exp <= nowSeconds) entries.delete(digest);
    for (const [username, cutoff] of cutoffs) if (cutoff.until <= nowSeconds) cutoffs.delete(username);
  }

  function collapseBusiestUser(entries: Map<string, Entry>, cutoffs: Map<string, Cutoff>, nowSeconds: number): void {
    const counts = new Map<string, number>();
    let busiest = '';
    let most = 0;
    for (const entry of entries.values()) {
      const count = (counts.get(entry.username) ?? 0) + 1;
      counts.set(entry.username, count);
      if (count > most) [busiest, most] = [entry.username, count];
    }
    cutoffs.set(busiest, { before: nowSeconds + 1, until: nowSeconds + 1 + tokenTtlSeconds });
    for (const [digest, entry] of entries) if (entry.username === busiest) entries.delete(digest);
  }

  function serialize(entries: Map<string, Entry>, cutoffs: Map<string, Cutoff>): Buffer {
    return Buffer.from(
      JSON.stringify({
        format: 1,
        entries: [...entries].map(([digest, entry]) => [digest, entry.username, entry.exp]),
        cutoffs: [...cutoffs].map(([username, cutoff]) => [username, cutoff.before, cutoff.until]),
      }),
    );
  }

  return {
    isRevoked(token, claims) {
      if (cutoffs.size > 0) {
        const cutoff = cutoffs.get(claims.username);
        if (cutoff !== undefined && claims.iat < cutoff.before) return true;
      }
      return entries.size > 0 && entries.has(digestOf(token));
    },
    async close() {
      isClosed = true;
      await writing;
    },
    revoke(token, claims, nowSeconds) {
      if (isClosed) return Promise.reject(new StoreClosed());
      const digest = digestOf(token);
      // Chained, so each change starts from the last one on disk. It is made on copies and takes
      // effect once written: a logout answered "not applied" has not been (nor after a restart).
      const write = writing.then(async () => {
        const nextEntries = new Map(entries);
        const nextCutoffs = new Map(cutoffs);
        prune(nextEntries, nextCutoffs, nowSeconds);
        if (nextEntries.size >= maxEntries) collapseBusiestUser(nextEntries, nextCutoffs, nowSeconds);
        nextEntries.set(digest, { username: claims.username, exp: claims.exp });
        try {
          await writeFileAtomic(fs, path, serialize(nextEntries, nextCutoffs));
        } catch (error) {
          if (!(error instanceof RenamedButNotDurable)) throw new StoreWriteFailed({ cause: error });
          // The file shows the change (rolling back failed): memory follows the file.
          [entries, cutoffs] = [nextEntries, nextCutoffs];
          throw new StoreOutcomeUnknown({ cause: error });
        }
        [entries, cutoffs] = [nextEntries, nextCutoffs];
      });
      writing = write.catch(() => undefined);
      return write;
    },
  };
}
