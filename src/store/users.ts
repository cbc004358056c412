import { join } from 'node:path';
import { StoreClosed, StoreOutcomeUnknown, StoreWriteFailed } from '../errors.js';
import { checkUsername } from '../validate/auth.js';
import { fail, integerIn, isPlainObject, objectOf, optional, pass, stringOf, type Checker, type CheckedType } from '../validate/check.js';
import { checkClientSettings } from '../validate/client-settings.js';
import { checkStoredGroups } from '../validate/groups.js';
import { checkStoredMachineTokens } from '../validate/machine-token.js';
import { checkStoredPasskeys } from '../validate/passkey.js';
import { checkAccessLevel, isAdministrator } from '../validate/level.js';
import { parsePasswordHash } from '../auth/password.js';
import { SEALED_FORMAT } from '../auth/seal.js';
import { SESSION_KEY_FORMAT } from '../auth/session-key.js';
import { RECOVERY_CODE_COUNT, RECOVERY_DIGEST_FORMAT } from '../auth/totp.js';
import { isErrorCode, RenamedButNotDurable, writeFileAtomic } from './atomic-file.js';
import type { StoreFileSystem } from './file-system.js';

export const USERS_FILE = 'users.json';
/**
 * The newest format this version reads. Format 1 is the file as it was before accounts could
 * lack client settings or hold anything else: a file is still written as format 1 while every
 * account fits it, so an older Gatehouse keeps reading it. As soon as one account does not fit
 * (no `client`, or any field outside FORMAT_1_FIELDS), the file is written as format 2, which an
 * older Gatehouse refuses with "written by a newer Gatehouse", instead of reading a field it does
 * not know as corruption or dropping it on its next write.
 */
export const USERS_FORMAT = 2;
const FORMAT_1_FIELDS: ReadonlySet<string> = new Set(['username', 'level', 'passwordHash', 'client', 'credentialsChangedAt', 'sessionKey']);

const matching =
  (format: RegExp, what: string): Checker<string> =>
  (input, path) =>
    typeof input === 'string' && format.test(input) ? pass(input) : fail(path, `is not ${what}`);

/**
 * An account's TOTP (SECURITY.md "Two-step sign-in"): the seed sealed with the seal key, the
 * last time step that signed in (a step signs in once), and the digests of the unused recovery codes.
 */
const checkStoredTotp = objectOf(
  {
    sealedSeed: matching(SEALED_FORMAT, 'a sealed seed'),
    lastUsedStep: integerIn(0, Number.MAX_SAFE_INTEGER),
    recoveryDigests: (input: unknown, path: string) => {
      if (!Array.isArray(input) || input.length > RECOVERY_CODE_COUNT) return fail(path, `must be an array of at most ${RECOVERY_CODE_COUNT} digests`);
      const check = matching(RECOVERY_DIGEST_FORMAT, 'a recovery code digest');
      const digests: string[] = [];
      for (const [index, item] of input.entries()) {
        const result = check(item, `${path}[${index}]`);
        if (!result.ok) return result;
        digests.push(result.value);
      }
      return pass(Object.freeze(digests) as readonly string[]);
    },
  },
  { rejectUnknownKeys: true },
);
export type StoredTotp = Readonly<CheckedType<typeof checkStoredTotp>>;

const checkStoredUser = objectOf(
  {
    username: checkUsername,
    level: checkAccessLevel,
    passwordHash: (input: unknown, path: string) => {
      const result = stringOf({ minLength: 1, maxLength: 512 })(input, path);
      if (result.ok && parsePasswordHash(result.value) === undefined) {
        return { ok: false as const, problems: [{ path, message: 'is not a scrypt hash in our format' }] };
      }
      return result;
    },
    // Optional since format 2: accounts made outside the Flood API need none.
    client: optional(checkClientSettings),
    groups: optional(checkStoredGroups),
    tokens: optional(checkStoredMachineTokens),
    credentialsChangedAt: integerIn(0, Number.MAX_SAFE_INTEGER),
    sessionKey: (input: unknown, path: string) =>
      typeof input === 'string' && SESSION_KEY_FORMAT.test(input)
        ? { ok: true as const, value: input }
        : { ok: false as const, problems: [{ path, message: 'is not a session key' }] },
    totp: optional(checkStoredTotp),
    passkeys: optional(checkStoredPasskeys),
  },
  { rejectUnknownKeys: true },
);

/**
 * One account as stored. `sessionKey` is replaced on every credential change and must match a
 * token's `sid`; `credentialsChangedAt` (unix seconds) covers tokens without `sid`.
 */
export type StoredUser = Readonly<CheckedType<typeof checkStoredUser>>;

/** What a change sees: the committed users plus the changes queued before it in the same batch. */
export interface UserView {
  get(username: string): StoredUser | undefined;
  has(username: string): boolean;
  set(user: StoredUser): void;
  delete(username: string): void;
  readonly size: number;
  administratorCount(): number;
}

export interface UserStore {
  readonly size: number;
  /** Goes up with every committed change: lets callers cache what they derive from the users. */
  readonly version: number;
  find(username: string): StoredUser | undefined;
  list(): Iterable<StoredUser>;
  /**
   * Runs `apply` against the current view and resolves once its changes are durable on disk.
   * If `apply` throws, nothing it did is kept. If the write fails, throws StoreWriteFailed and
   * memory stays equal to the file.
   */
  change<T>(apply: (view: UserView) => T): Promise<T>;
  /** Refuses every later change (StoreClosed) and resolves once the queued ones are done. */
  close(): Promise<void>;
}

export class StoreCorrupt extends Error {
  constructor(path: string, detail: string) {
    super(
      `The users file ${path} cannot be used: ${detail}. It has not been changed. ` +
        `To restore the previous good copy, stop every Gatehouse process, inspect ${path}.prev, ` +
        `then copy it over ${path} (cp ${path}.prev ${path}) and start again.`,
    );
  }
}

/** The users file is in a newer format than this version reads: nothing is wrong with it, and it is not touched. */
export class StoreTooNew extends Error {
  constructor(path: string, format: number) {
    super(
      `The users file ${path} was written by a newer Gatehouse (format ${format}); this version reads formats 1 to ${USERS_FORMAT}. ` +
        `It has not been changed. Run the newer Gatehouse again (its accounts use fields this version does not know, and would lose them).`,
    );
  }
}

interface Job {
  readonly apply: (view: UserView) => unknown;
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
  result?: unknown;
}

const serializeUser = (user: StoredUser): string =>
  JSON.stringify({
    username: user.username,
    level: user.level,
    passwordHash: user.passwordHash,
    client: user.client,
    groups: user.groups,
    tokens: user.tokens,
    credentialsChangedAt: user.credentialsChangedAt,
    sessionKey: user.sessionKey,
    totp: user.totp,
    passkeys: user.passkeys,
  });

/** True when an account cannot be written as format 1: it lacks client settings or holds a newer field. */
export function needsNewerFormat(user: StoredUser): boolean {
  if (user.client === undefined) return true;
  for (const [key, value] of Object.entries(user)) if (value !== undefined && !FORMAT_1_FIELDS.has(key)) return true;
  return false;
}

/** Loads (and fully validates) the users file, or starts empty when there is none. Throws StoreCorrupt, or StoreTooNew for a newer format. */
export async function openUserStore(dataDir: string, fs: StoreFileSystem): Promise<UserStore> {
  const path = join(dataDir, USERS_FILE);
  const committed = new Map<string, StoredUser>();
  // Each user's JSON is kept, so a write at 100,000 users re-serializes only what changed.
  const serialized = new Map<string, string>();
  // How many committed accounts need format 2: the file is written as format 1 while none do.
  let newerFormatCount = 0;
  for (const user of await readUsersFile(fs, path)) {
    committed.set(user.username, user);
    serialized.set(user.username, serializeUser(user));
    if (needsNewerFormat(user)) newerFormatCount++;
  }

  const pending: Job[] = [];
  let draining: Promise<void> | undefined;
  let isClosed = false;
  let version = 0;

  async function commitBatch(batch: Job[]): Promise<void> {
    const overlay = new Map<string, StoredUser | null>();
    let size = committed.size;
    const lookup = (name: string): StoredUser | undefined => {
      const changed = overlay.get(name);
      return changed === undefined ? committed.get(name) : (changed ?? undefined);
    };
    const accepted: Job[] = [];
    for (const job of batch) {
      const undo: Array<() => void> = [];
      const remember = (name: string): void => {
        const had = overlay.has(name);
        const previous = overlay.get(name);
        const previousSize = size;
        undo.push(() => {
          size = previousSize;
          if (had) overlay.set(name, previous ?? null);
          else overlay.delete(name);
        });
      };
      const view: UserView = {
        get: lookup,
        has: (name) => lookup(name) !== undefined,
        set(user) {
          remember(user.username);
          if (lookup(user.username) === undefined) size++;
          overlay.set(user.username, user);
        },
        delete(name) {
          if (lookup(name) === undefined) return;
          remember(name);
          size--;
          overlay.set(name, null);
        },
        get size() {
          return size;
        },
        administratorCount() {
          let count = 0;
          for (const [name, user] of committed) if (!overlay.has(name) && isAdministrator(user.level)) count++;
          for (const user of overlay.values()) if (user !== null && isAdministrator(user.level)) count++;
          return count;
        },
      };
      try {
        job.result = job.apply(view);
        accepted.push(job);
      } catch (error) {
        for (const step of undo.reverse()) step();
        job.reject(error);
      }
    }
    if (accepted.length === 0) return;
    if (overlay.size === 0) {
      for (const job of accepted) job.resolve(job.result as never);
      return;
    }

    const overlaySerialized = new Map<string, string>();
    for (const [name, user] of overlay) if (user !== null) overlaySerialized.set(name, serializeUser(user));
    const parts: string[] = [];
    for (const [name, text] of serialized) {
      // A changed user is written in its new form; a removed one has no entry there.
      const replaced = overlay.has(name) ? overlaySerialized.get(name) : text;
      if (replaced !== undefined) parts.push(replaced);
    }
    for (const [name, text] of overlaySerialized) if (!committed.has(name)) parts.push(text);
    let nextNewerFormatCount = newerFormatCount;
    for (const [name, user] of overlay) {
      const before = committed.get(name);
      if (before !== undefined && needsNewerFormat(before)) nextNewerFormatCount--;
      if (user !== null && needsNewerFormat(user)) nextNewerFormatCount++;
    }
    const format = nextNewerFormatCount > 0 ? USERS_FORMAT : 1;
    const document = `{"format":${format},"users":[\n${parts.join(',\n')}\n]}\n`;

    let failure: unknown;
    let isOnDisk = false;
    try {
      await writeFileAtomic(fs, path, Buffer.from(document, 'utf8'), { keepPrevious: true });
      isOnDisk = true;
    } catch (error) {
      failure = error;
      // The new file is visible (rolling back failed) but may not survive a power cut: memory
      // follows the file, and the change is not acknowledged.
      isOnDisk = error instanceof RenamedButNotDurable;
    }
    if (isOnDisk) {
      version++;
      newerFormatCount = nextNewerFormatCount;
      for (const [name, user] of overlay) {
        if (user === null) {
          committed.delete(name);
          serialized.delete(name);
        } else {
          committed.set(name, user);
          serialized.set(name, overlaySerialized.get(name) ?? serializeUser(user));
        }
      }
    }
    for (const job of accepted) {
      if (failure === undefined) job.resolve(job.result as never);
      else if (isOnDisk) job.reject(new StoreOutcomeUnknown({ cause: failure }));
      else job.reject(new StoreWriteFailed({ cause: failure }));
    }
  }

  async function drain(): Promise<void> {
    try {
      while (pending.length > 0) {
        const batch = pending.splice(0);
        // commitBatch settles every job itself; a throw here is a bug (say, a value JSON cannot
        // hold) before anything was written: fail the batch rather than stall every later change.
        await commitBatch(batch).catch((error: unknown) => {
          for (const job of batch) job.reject(error);
        });
      }
    } finally {
      draining = undefined;
    }
  }

  return {
    get size() {
      return committed.size;
    },
    get version() {
      return version;
    },
    find: (username) => committed.get(username),
    list: () => committed.values(),
    change<T>(apply: (view: UserView) => T): Promise<T> {
      if (isClosed) return Promise.reject(new StoreClosed());
      return new Promise<T>((resolve, reject) => {
        pending.push({ apply, resolve: resolve as (value: never) => void, reject });
        draining ??= drain();
      });
    },
    async close() {
      isClosed = true;
      while (draining !== undefined) await draining;
    },
  };
}

async function readUsersFile(fs: StoreFileSystem, path: string): Promise<StoredUser[]> {
  let text: string;
  try {
    text = (await fs.readFile(path)).toString('utf8');
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return [];
    throw error;
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    // Only the position: the parser's message quotes the text around it, which may hold a hash
    // or a torrent client's password.
    const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw new StoreCorrupt(path, `it is not valid JSON${position === undefined ? '' : ` (at byte ${position})`}`);
  }
  if (!isPlainObject(document)) throw new StoreCorrupt(path, 'it is not a JSON object');
  const format = document['format'];
  if (typeof format !== 'number' || !Number.isInteger(format) || format < 1) throw new StoreCorrupt(path, 'it has no valid "format" number');
  if (format > USERS_FORMAT) throw new StoreTooNew(path, format);
  const users = document['users'];
  if (!Array.isArray(users)) throw new StoreCorrupt(path, 'it has no "users" array');
  const seen = new Set<string>();
  return users.map((entry: unknown, index: number) => {
    const result = checkStoredUser(entry, `users[${index}]`);
    if (!result.ok) {
      const problem = result.problems[0];
      throw new StoreCorrupt(path, `${problem?.path ?? `users[${index}]`} ${problem?.message ?? 'is invalid'}`);
    }
    if (seen.has(result.value.username)) throw new StoreCorrupt(path, `users[${index}] repeats a username`);
    seen.add(result.value.username);
    return result.value;
  });
}
