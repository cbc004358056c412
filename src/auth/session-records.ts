import type { Logger } from '../log/logger.js';
import { openDocumentStore } from '../store/document-store.js';
import type { StoreFileSystem } from '../store/file-system.js';
import {
  checkSessionsDocument, EMPTY_SESSIONS, isLiveRecord, SESSIONS_FILE, withCarriedOverSession, withNewSession,
  withoutSession, withSessionsSeen, type CarriedOver, type SessionRecord,
} from '../store/session-file.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { Amr } from './amr.js';
import { newSessionId } from './session-key.js';
import type { EpochSeconds } from '../time.js';

/** `lastSeenAt` is written at most this often per session (docs/contract/links-and-sessions.md "Sessions": coarse). */
export const LAST_SEEN_RESOLUTION_SECONDS = 3600;

export type SessionRecords = Awaited<ReturnType<typeof openSessionRecords>>;

interface NewSession {
  readonly user: StoredUser;
  readonly amr: Amr;
  /** The client's address, as the request log shows it. */
  readonly address: string;
  /** routes/browser-name.ts browserNameOf the request's User-Agent. */
  readonly browser: string;
  /** When its cookie expires (unix seconds). */
  readonly expiresAt: number;
}

/** Ends, durably, what was got through the sessions `ids` as they end, before their records go; throwing keeps them. */
type SessionEndListener = (ids: ReadonlySet<string>) => Promise<void>;

/**
 * The session records (store/session-file.ts) of sessions.json, and the one check the hot path makes
 * of them: a lookup in memory. Every change resolves once the file holds it (document-store.ts), so
 * a session ended is refused from the answer on, and after a restart; what was got through it ends
 * first, for good (`whenEnding`; docs/security-notes.md). Throws DocumentCorrupt on load.
 */
export async function openSessionRecords(deps: {
  fs: StoreFileSystem;
  dataDir: string;
  users: UserStore;
  logger: Logger;
  nowSeconds: () => EpochSeconds;
}) {
  const { users, logger, nowSeconds } = deps;
  const store = await openDocumentStore({
    fs: deps.fs,
    dataDir: deps.dataDir,
    fileName: SESSIONS_FILE,
    description: 'sessions file',
    check: checkSessionsDocument,
    empty: EMPTY_SESSIONS,
  });
  const sessionKeyOf = (username: string): string | undefined => users.find(username)?.sessionKey;
  // What the lookups need, rebuilt when the file has changed since it was last built.
  let index: { version: number; byId: Map<string, SessionRecord>; lastSignIns: Map<string, number> } | undefined;
  // Sessions whose last-seen write is queued: one at a time per session.
  const touching = new Set<string>();
  // Sessions being ended: refused already, while the listeners end what was got through them.
  const ending = new Set<string>();
  const listeners: SessionEndListener[] = [];
  const tell = async (ids: readonly string[]): Promise<void> => {
    for (const listener of listeners) if (ids.length > 0) await listener(new Set(ids));
  };
  /** Marks `ids` ending, tells the listeners, then `remove`s their records; if either throws they are open again. */
  const endThrough = async <T>(ids: readonly string[], remove: () => Promise<T>): Promise<T> => {
    const marked = ids.filter((id) => !ending.has(id));
    for (const id of marked) ending.add(id);
    try {
      await tell(ids);
      return await remove();
    } finally {
      for (const id of marked) ending.delete(id);
    }
  };

  const indexOf = () => {
    if (index?.version !== store.version) {
      const { sessions, lastSignIns } = store.current;
      index = {
        version: store.version,
        byId: new Map(sessions.map((record) => [record.id, record])),
        lastSignIns: new Map(lastSignIns.map((entry) => [entry.username, entry.at])),
      };
    }
    return index;
  };

  const noteSeen = (record: SessionRecord, now: number): void => {
    if (now - record.lastSeenAt < LAST_SEEN_RESOLUTION_SECONDS || touching.has(record.id)) return;
    touching.add(record.id);
    const ids = new Set([record.id]);
    store
      .change((current) => ({ next: withSessionsSeen(current, ids, now), result: undefined }))
      .catch((error: unknown) => {
        // Only a convenience for the owner: a failed write is not the caller's problem.
        logger.warn('could not record when a session was last seen', {
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => touching.delete(record.id));
  };

  const liveOf = (username: string, now: number): SessionRecord[] =>
    store.current.sessions.filter((record) => record.username === username && isLiveRecord(record, sessionKeyOf, now));

  return {
    /**
     * The hot path: whether session `id` is open for a token of `username` naming `sessionKey` (the
     * token's `sid`, which the caller has compared with the account's). Notes the session seen, at
     * most one write an hour. Never throws.
     */
    isOpen(id: string, username: string, sessionKey: string): boolean {
      const record = indexOf().byId.get(id);
      if (record === undefined || record.username !== username || record.sessionKey !== sessionKey || ending.has(id)) return false;
      noteSeen(record, nowSeconds());
      return true;
    },
    /**
     * Records a new sign-in and resolves with its id once the file holds it; past the per-account
     * limit the account's oldest sessions end (`ended`). Throws StoreWriteFailed, StoreOutcomeUnknown, StoreClosed.
     */
    async begin(session: NewSession): Promise<{ readonly id: string; readonly ended: readonly SessionRecord[] }> {
      const now = nowSeconds();
      const record: SessionRecord = {
        id: newSessionId(),
        username: session.user.username,
        sessionKey: session.user.sessionKey,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: session.expiresAt,
        address: session.address.slice(0, 64).replace(/[^\x20-\x7e]/g, '?') || '?',
        browser: session.browser,
        amr: session.amr,
      };
      // Past the limit the oldest end first, with what was got through them. A racing sign-in may
      // have taken the room counted on: the change then ends nothing and the count starts again, so
      // no record goes before its listeners have run.
      for (;;) {
        const doomed = withNewSession(store.current, record, sessionKeyOf, now).ended.map((other) => other.id);
        const ended = await endThrough(doomed, () => store.change((current) => {
          const { next, ended } = withNewSession(current, record, sessionKeyOf, now);
          return ended.every((other) => doomed.includes(other.id)) ? { next, result: ended } : { next: current, result: undefined };
        }));
        if (ended !== undefined) return { id: record.id, ended };
      }
    },
    /**
     * Binds a session to its account's new session key after a credential change made from it, with
     * its new cookie's `amr` and expiry; false when that session is not there (it was ended meanwhile).
     */
    carryOver(carried: CarriedOver): Promise<boolean> {
      return store.change((current) => {
        const next = withCarriedOverSession(current, carried);
        return next === undefined ? { next: current, result: false } : { next, result: true };
      });
    },
    /**
     * Ends session `id` of `username`; resolves once the file no longer holds it, false when there was
     * no such live session.
     */
    async end(username: string, id: string): Promise<boolean> {
      if (!liveOf(username, nowSeconds()).some((record) => record.id === id)) return false;
      return endThrough([id], () => store.change((current) => {
        const next = withoutSession(current, username, id, sessionKeyOf, nowSeconds());
        return next === undefined ? { next: current, result: false } : { next, result: true };
      }));
    },
    /** Adds a listener that ends what was got through sessions as they end (the OpenID Connect provider's). */
    whenEnding(listener: SessionEndListener): void {
      listeners.push(listener);
    },
    /** The live sessions of `username`, oldest first. */
    liveOf: (username: string): SessionRecord[] => liveOf(username, nowSeconds()),
    /** When `username` last signed in (unix seconds), undefined when never since records began. */
    lastSignInOf: (username: string): number | undefined => indexOf().lastSignIns.get(username),
    /** Refuses later changes (StoreClosed) and waits for the queued ones. */
    close: (): Promise<void> => store.close(),
  };
}
