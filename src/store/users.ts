import { join } from 'node:path';
import { StoreOutcomeUnknown, StoreWriteFailed } from '../errors.js';
import { checkUsername } from '../validate/auth.js';
import {
  fail, integerIn, isPlainObject, matching, objectOf, optional, pass, stringOf, type Checker, type CheckedType,
} from '../validate/check.js';
import { checkClientSettings } from '../validate/client-settings.js';
import { checkStoredGroups } from '../validate/groups.js';
import { checkStoredMachineTokens } from '../validate/machine-token.js';
import { checkAccessLevel, isAdministrator } from '../validate/level.js';
import { checkDisplayName, checkEmail, checkSubject } from '../validate/profile.js';
import { parsePasswordHash } from '../auth/password.js';
import { SESSION_KEY_FORMAT } from '../auth/session-key.js';
import { RenamedButNotDurable, unlessMissing, writeFileAtomic } from './atomic-file.js';
import { createGroupCommit } from './group-commit.js';
import type { StoreFileSystem } from './file-system.js';
import type { FeatureFieldChecks } from './stored-fields.js';

export const USERS_FILE = 'users.json';
/**
 * The newest format this version reads. The file stays format 1 while every account fits it (has
 * `client`, only FORMAT_1_FIELDS), so an older Gatehouse keeps reading it; format 2 makes an older
 * one refuse it ("written by a newer Gatehouse") instead of dropping fields it does not know.
 */
export const USERS_FORMAT = 2;
const FORMAT_1_FIELDS: ReadonlySet<string> = new Set([
  'username', 'level', 'passwordHash', 'client', 'credentialsChangedAt', 'sessionKey',
]);

const isBoolean: Checker<boolean> = (input, path) =>
  (typeof input === 'boolean' ? pass(input) : fail(path, 'must be true or false'));

/** The fields of an account as stored; `features` check the fields features keep. */
const storedUserFields = (features: FeatureFieldChecks) => objectOf(
  {
    username: checkUsername,
    level: checkAccessLevel,
    passwordHash: (input: unknown, path: string) => {
      const result = stringOf({ minLength: 1, maxLength: 512 })(input, path);
      const isOurs = !result.ok || parsePasswordHash(result.value) !== undefined;
      return isOurs ? result : fail(path, 'is not a scrypt hash in our format');
    },
    // Optional since format 2: accounts made outside the Flood API need none.
    client: optional(checkClientSettings),
    groups: optional(checkStoredGroups),
    tokens: optional(checkStoredMachineTokens),
    credentialsChangedAt: integerIn(0, Number.MAX_SAFE_INTEGER),
    sessionKey: matching(SESSION_KEY_FORMAT, 'a session key'),
    totp: optional(features.totp),
    passkeys: optional(features.passkeys),
    // OpenID Connect (docs/contract/oidc.md "Accounts"): `emailVerified` is true when
    // an administrator set the address, false when the account's owner did. `sub` is made the first
    // time the account signs in to an app, so accounts that never do keep the file in format 1.
    email: optional(checkEmail),
    emailVerified: optional(isBoolean),
    name: optional(checkDisplayName),
    sub: optional(checkSubject),
  },
  { rejectUnknownKeys: true },
);

type StoredUserFields = CheckedType<ReturnType<typeof storedUserFields>>;

/** An account as stored: its fields each checked, and `emailVerified` present exactly when `email` is. */
function storedUserChecker(features: FeatureFieldChecks): Checker<StoredUserFields> {
  const checkFields = storedUserFields(features);
  return (input, path) => {
    const result = checkFields(input, path);
    if (result.ok && (result.value.email === undefined) !== (result.value.emailVerified === undefined)) {
      return fail(`${path}.emailVerified`, 'must be present exactly when email is');
    }
    return result;
  };
}

/**
 * One account as stored. `sessionKey` is replaced on every credential change and must match a
 * token's `sid`; `credentialsChangedAt` (unix seconds) covers tokens without `sid`.
 */
export type StoredUser = Readonly<StoredUserFields>;

/** What a change sees: the committed users plus the changes queued before it in the same batch. */
export interface UserView {
  get(username: string): StoredUser | undefined;
  has(username: string): boolean;
  set(user: StoredUser): void;
  delete(username: string): void;
  readonly size: number;
  /** Every account in the view, each once. */
  values(): Iterable<StoredUser>;
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

/** What a batch changes: a new or changed account by name, or null for a removed one. */
type Changes = ReadonlyMap<string, StoredUser | null>;

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
    email: user.email,
    emailVerified: user.emailVerified,
    name: user.name,
    sub: user.sub,
  });

/** True when an account cannot be written as format 1: it lacks client settings or holds a newer field. */
function needsNewerFormat(user: StoredUser): boolean {
  if (user.client === undefined) return true;
  for (const [key, value] of Object.entries(user)) if (value !== undefined && !FORMAT_1_FIELDS.has(key)) return true;
  return false;
}

/** The committed users, as the file holds them. */
class CommittedUsers {
  readonly users = new Map<string, StoredUser>();
  // Each user's JSON is kept, so a write at 100,000 users re-serializes only what changed.
  readonly #json = new Map<string, string>();
  // How many accounts need format 2: the file is written as format 1 while none do.
  #newerFormatCount = 0;

  /** The file's text with `changes` applied; the changed users' JSON is left in `json` for takeIn. */
  render(changes: Changes, json: Map<string, string>): string {
    for (const [name, user] of changes) if (user !== null) json.set(name, serializeUser(user));
    const parts: string[] = [];
    for (const [name, text] of this.#json) {
      // A changed user is written in its new form; a removed one has no entry there.
      const replaced = changes.has(name) ? json.get(name) : text;
      if (replaced !== undefined) parts.push(replaced);
    }
    for (const [name, text] of json) if (!this.users.has(name)) parts.push(text);
    const format = this.#newerFormatCountAfter(changes) > 0 ? USERS_FORMAT : 1;
    return `{"format":${format},"users":[\n${parts.join(',\n')}\n]}\n`;
  }

  /** Takes in changes the file shows now. */
  takeIn(changes: Changes, json: ReadonlyMap<string, string> = new Map()): void {
    this.#newerFormatCount = this.#newerFormatCountAfter(changes);
    for (const [name, user] of changes) {
      if (user === null) {
        this.users.delete(name);
        this.#json.delete(name);
      } else {
        this.users.set(name, user);
        this.#json.set(name, json.get(name) ?? serializeUser(user));
      }
    }
  }

  #newerFormatCountAfter(changes: Changes): number {
    let count = this.#newerFormatCount;
    for (const [name, user] of changes) {
      const before = this.users.get(name);
      if (before !== undefined && needsNewerFormat(before)) count--;
      if (user !== null && needsNewerFormat(user)) count++;
    }
    return count;
  }
}

/** One batch's view: its changes over the committed users. A job that throws has its own changes undone. */
class BatchView implements UserView {
  readonly changes = new Map<string, StoredUser | null>();
  size: number;
  readonly #committed: ReadonlyMap<string, StoredUser>;
  // What the running job changed: each name's entry in `changes` before the job (undefined: none).
  readonly #undo = new Map<string, StoredUser | null | undefined>();

  constructor(committed: ReadonlyMap<string, StoredUser>) {
    this.#committed = committed;
    this.size = committed.size;
  }

  /** Runs one job; if it throws, the view is as it was before it and the error is rethrown. */
  run(apply: (view: UserView) => unknown): unknown {
    const sizeBefore = this.size;
    this.#undo.clear();
    try {
      return apply(this);
    } catch (error) {
      this.size = sizeBefore;
      for (const [name, before] of this.#undo) {
        if (before === undefined) this.changes.delete(name);
        else this.changes.set(name, before);
      }
      throw error;
    }
  }

  get(name: string): StoredUser | undefined {
    const changed = this.changes.get(name);
    return changed === undefined ? this.#committed.get(name) : (changed ?? undefined);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(user: StoredUser): void {
    this.#remember(user.username);
    if (!this.has(user.username)) this.size++;
    this.changes.set(user.username, user);
  }

  delete(name: string): void {
    if (!this.has(name)) return;
    this.#remember(name);
    this.size--;
    this.changes.set(name, null);
  }

  *values(): IterableIterator<StoredUser> {
    for (const [name, user] of this.#committed) if (!this.changes.has(name)) yield user;
    for (const user of this.changes.values()) if (user !== null) yield user;
  }

  administratorCount(): number {
    let count = 0;
    for (const user of this.values()) if (isAdministrator(user.level)) count++;
    return count;
  }

  #remember(name: string): void {
    if (!this.#undo.has(name)) this.#undo.set(name, this.changes.get(name));
  }
}

/**
 * Loads (and fully validates) the users file, or starts empty when there is none; `features` check the
 * fields features keep (src/features.ts `FEATURE_FIELDS`). Throws StoreCorrupt, or StoreTooNew for a newer format.
 */
export async function openUserStore(dataDir: string, fs: StoreFileSystem, features: FeatureFieldChecks): Promise<UserStore> {
  const path = join(dataDir, USERS_FILE);
  const committed = new CommittedUsers();
  committed.takeIn(await readUsersFile(fs, path, storedUserChecker(features)));
  let version = 0;

  /** Writes `changes` at once; memory follows what the file shows. Throws StoreWriteFailed, StoreOutcomeUnknown. */
  async function write(changes: Changes): Promise<void> {
    const json = new Map<string, string>();
    const document = committed.render(changes, json);
    let isOnDisk = true;
    try {
      await writeFileAtomic(fs, path, Buffer.from(document, 'utf8'), { keepPrevious: true });
    } catch (error) {
      // RenamedButNotDurable: the new file is visible (rolling back failed) but may not survive a
      // power cut: memory follows the file, and the change is not acknowledged.
      isOnDisk = error instanceof RenamedButNotDurable;
      throw isOnDisk ? new StoreOutcomeUnknown({ cause: error }) : new StoreWriteFailed({ cause: error });
    } finally {
      if (isOnDisk) {
        version++;
        committed.takeIn(changes, json);
      }
    }
  }

  const changes = createGroupCommit<BatchView, (view: UserView) => unknown>({
    begin: () => new BatchView(committed.users),
    apply: (view, change) => view.run(change),
    write: (view) => (view.changes.size > 0 ? write(view.changes) : undefined),
  });

  return {
    get size() {
      return committed.users.size;
    },
    get version() {
      return version;
    },
    find: (username) => committed.users.get(username),
    list: () => committed.users.values(),
    change: <T>(apply: (view: UserView) => T): Promise<T> => changes.submit<T>(apply),
    close: () => changes.close(),
  };
}

async function readUsersFile(
  fs: StoreFileSystem, path: string, checkStoredUser: Checker<StoredUserFields>,
): Promise<Map<string, StoredUser>> {
  const users = new Map<string, StoredUser>();
  const bytes = await unlessMissing(fs.readFile(path));
  if (bytes === undefined) return users;
  let document: unknown;
  try {
    document = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    // Only the position: the parser's message quotes the text around it, which may hold a hash
    // or a torrent client's password.
    const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw new StoreCorrupt(path, `it is not valid JSON${position === undefined ? '' : ` (at byte ${position})`}`);
  }
  if (!isPlainObject(document)) throw new StoreCorrupt(path, 'it is not a JSON object');
  const format = document['format'];
  if (typeof format !== 'number' || !Number.isInteger(format) || format < 1) {
    throw new StoreCorrupt(path, 'it has no valid "format" number');
  }
  if (format > USERS_FORMAT) throw new StoreTooNew(path, format);
  const entries = document['users'];
  if (!Array.isArray(entries)) throw new StoreCorrupt(path, 'it has no "users" array');
  for (const [index, entry] of entries.entries()) {
    const result = checkStoredUser(entry, `users[${index}]`);
    if (!result.ok) {
      const problem = result.problems[0];
      throw new StoreCorrupt(path, `${problem?.path ?? `users[${index}]`} ${problem?.message ?? 'is invalid'}`);
    }
    if (users.has(result.value.username)) throw new StoreCorrupt(path, `users[${index}] repeats a username`);
    users.set(result.value.username, result.value);
  }
  return users;
}
