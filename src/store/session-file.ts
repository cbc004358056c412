import { readAmr, type Amr } from '../auth/amr.js';
import { SESSION_KEY_FORMAT } from '../auth/session-key.js';
import { checkUsername } from '../validate/auth.js';
import {
  fail, matching, objectOf, oneOf, pass, unixSeconds, type Checked, type Checker, type CheckedType,
} from '../validate/check.js';

// docs/contract/links-and-sessions.md "Sessions": a record per sign-in, live while bound to its
// account's current session key and not expired; records no longer live go at the file's next write.

export const SESSIONS_FILE = 'sessions.json';
/** A sign-in beyond this many live sessions of one account ends its oldest. */
export const MAX_SESSIONS_PER_ACCOUNT = 64;
/** A session id: 128 random bits, base64url. */
export const SESSION_ID_FORMAT = /^[A-Za-z0-9_-]{22}$/;
/** The client's address, and the browser's short name (routes/browser-name.ts): printable ASCII. */
const PRINTABLE_64 = /^[\x20-\x7e]{1,64}$/;

const checkAmr: Checker<Amr> = (input, path) => {
  const amr = readAmr(input);
  return amr === undefined || amr.length === 0 ? fail(path, 'is not an amr list') : pass(amr);
};

const checkSessionRecord = objectOf(
  {
    id: matching(SESSION_ID_FORMAT, 'a session id'),
    username: checkUsername,
    /** The account's session key when the session began (or was carried over a credential change). */
    sessionKey: matching(SESSION_KEY_FORMAT, 'a session key'),
    createdAt: unixSeconds,
    /** Written at most once an hour per session: a coarse "in use lately". */
    lastSeenAt: unixSeconds,
    /** The expiry of the session's cookie: after it the record opens nothing. */
    expiresAt: unixSeconds,
    address: matching(PRINTABLE_64, 'an address'),
    browser: matching(PRINTABLE_64, 'a browser name'),
    amr: checkAmr,
  },
  { rejectUnknownKeys: true },
);
export type SessionRecord = Readonly<CheckedType<typeof checkSessionRecord>>;

const checkLastSignIn = objectOf({ username: checkUsername, at: unixSeconds }, { rejectUnknownKeys: true });

/** An array whose items pass `check`, no two with the same `keyOf`. */
function distinctList<T>(check: Checker<T>, keyOf: (item: T) => string, what: string): Checker<readonly T[]> {
  return (input, path): Checked<readonly T[]> => {
    if (!Array.isArray(input)) return fail(path, 'must be an array');
    const items: T[] = [];
    const keys = new Set<string>();
    for (const [index, item] of input.entries()) {
      const result = check(item, `${path}[${index}]`);
      if (!result.ok) return result;
      const key = keyOf(result.value);
      if (keys.has(key)) return fail(`${path}[${index}]`, `repeats a ${what}`);
      keys.add(key);
      items.push(result.value);
    }
    return pass(items);
  };
}

export const checkSessionsDocument = objectOf(
  {
    format: oneOf([1]),
    sessions: distinctList(checkSessionRecord, (record) => record.id, 'session id'),
    /** When each account last signed in: kept apart from the records, which go when their session ends. */
    lastSignIns: distinctList(checkLastSignIn, (entry) => entry.username, 'username'),
  },
  { rejectUnknownKeys: true },
);
type SessionsDocument = Readonly<CheckedType<typeof checkSessionsDocument>>;

export const EMPTY_SESSIONS: SessionsDocument = { format: 1, sessions: [], lastSignIns: [] };

/** The current session key of an account, undefined when there is no such account. */
type SessionKeyOf = (username: string) => string | undefined;

/** Whether `record` still opens its account at `nowSeconds`. */
export function isLiveRecord(record: SessionRecord, sessionKeyOf: SessionKeyOf, nowSeconds: number): boolean {
  return record.expiresAt > nowSeconds && sessionKeyOf(record.username) === record.sessionKey;
}

/** The document without the records that no longer open anything, nor the last sign-ins of accounts that are gone. */
function pruned(document: SessionsDocument, sessionKeyOf: SessionKeyOf, nowSeconds: number): SessionsDocument {
  const sessions = document.sessions.filter((record) => isLiveRecord(record, sessionKeyOf, nowSeconds));
  const lastSignIns = document.lastSignIns.filter((entry) => sessionKeyOf(entry.username) !== undefined);
  const isSame = sessions.length === document.sessions.length && lastSignIns.length === document.lastSignIns.length;
  return isSame ? document : { ...document, sessions, lastSignIns };
}

/**
 * The document with `record` (a new sign-in, live) added, records no longer live dropped, and the
 * account's last sign-in moved to its `createdAt`. Past MAX_SESSIONS_PER_ACCOUNT live sessions of
 * the account, its oldest end: they are returned as `ended`.
 */
export function withNewSession(
  document: SessionsDocument, record: SessionRecord, sessionKeyOf: SessionKeyOf, nowSeconds: number,
): { readonly next: SessionsDocument; readonly ended: readonly SessionRecord[] } {
  const live = pruned(document, sessionKeyOf, nowSeconds);
  const own = live.sessions.filter((other) => other.username === record.username);
  const excess = own.length + 1 - MAX_SESSIONS_PER_ACCOUNT;
  // The oldest by when they began; records are appended as they begin, but a carried-over one keeps its time.
  const ended = excess > 0 ? [...own].sort((a, b) => a.createdAt - b.createdAt).slice(0, excess) : [];
  const endedIds = new Set(ended.map((other) => other.id));
  const sessions = [...live.sessions.filter((other) => !endedIds.has(other.id)), record];
  const lastSignIns = [
    ...live.lastSignIns.filter((entry) => entry.username !== record.username),
    { username: record.username, at: record.createdAt },
  ];
  return { next: { ...live, sessions, lastSignIns }, ended };
}

/** The document without session `id` of `username`, or undefined when the account has no such live session. */
export function withoutSession(
  document: SessionsDocument, username: string, id: string, sessionKeyOf: SessionKeyOf, nowSeconds: number,
): SessionsDocument | undefined {
  const live = pruned(document, sessionKeyOf, nowSeconds);
  const sessions = live.sessions.filter((record) => record.id !== id || record.username !== username);
  return sessions.length === live.sessions.length ? undefined : { ...live, sessions };
}

/**
 * The document with session `id` of `username` bound to the account's new session key (a credential
 * change its owner made from this session, which goes on) and its new cookie's `amr` and expiry;
 * undefined when there is no such session.
 */
export function withCarriedOverSession(document: SessionsDocument, carried: CarriedOver): SessionsDocument | undefined {
  let isFound = false;
  const sessions = document.sessions.map((record) => {
    if (
      record.id !== carried.id ||
      record.username !== carried.username ||
      record.sessionKey !== carried.fromSessionKey
    ) {
      return record;
    }
    isFound = true;
    return { ...record, sessionKey: carried.sessionKey, amr: carried.amr, expiresAt: carried.expiresAt };
  });
  return isFound ? { ...document, sessions } : undefined;
}

/** Session `id` of `username`, bound now to `fromSessionKey` (its token's), to go on under `sessionKey`. */
export interface CarriedOver {
  readonly id: string;
  readonly username: string;
  /** The account's session key the session was bound to, and the new one it goes on under. */
  readonly fromSessionKey: string;
  readonly sessionKey: string;
  readonly amr: Amr;
  readonly expiresAt: number;
}

/** The document with the sessions in `ids` seen at `nowSeconds` (those still in it). */
export function withSessionsSeen(
  document: SessionsDocument, ids: ReadonlySet<string>, nowSeconds: number,
): SessionsDocument {
  let isChanged = false;
  const sessions = document.sessions.map((record) => {
    if (!ids.has(record.id) || record.lastSeenAt >= nowSeconds) return record;
    isChanged = true;
    return { ...record, lastSeenAt: nowSeconds };
  });
  return isChanged ? { ...document, sessions } : document;
}
