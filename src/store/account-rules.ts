import { randomBytes } from 'node:crypto';
import { newSessionKey } from '../auth/session-key.js';
import { LastAdministrator, UsernameLookAlike, UsernameTaken, UserNotFound } from '../errors.js';
import type { ClientSettings } from '../validate/client-settings.js';
import { isAdministrator, roleOf, type AccessLevel } from '../validate/level.js';
import { lookAlikeKeyOf } from '../validate/look-alike.js';
import type { StoredUser, UserView } from './users.js';

// The rules every change to accounts obeys, whether it comes over HTTP or from the
// offline command line. Each runs inside UserStore.change, so it sees queued changes too.

/** A new account's record: its credentials changed now, under a session key of its own. */
export function newAccount(
  fields: Omit<StoredUser, 'credentialsChangedAt' | 'sessionKey'>, nowSeconds: number,
): StoredUser {
  return { ...fields, credentialsChangedAt: nowSeconds, sessionKey: newSessionKey() };
}

/** `user` with a new session key: every token issued before stops working (a credential change ends sessions). */
export function withNewSessions(user: StoredUser, nowSeconds: number): StoredUser {
  const credentialsChangedAt = Math.max(nowSeconds, user.credentialsChangedAt);
  return { ...user, credentialsChangedAt, sessionKey: newSessionKey() };
}

/** Adds a user; throws UsernameTaken, or UsernameLookAlike for a name that looks like an existing one. */
export function addUser(view: UserView, user: StoredUser): void {
  refuseTakenName(view, user.username);
  view.set(user);
}

/** Throws what addUser would for `username` (UsernameTaken, UsernameLookAlike): to refuse before asking for a password. */
export function refuseTakenName(view: Pick<UserView, 'has' | 'values'>, username: string): void {
  if (view.has(username)) throw new UsernameTaken();
  refuseLookAlike(view, username, undefined);
}

/**
 * Throws UsernameLookAlike when `username` differs from an existing account's name (other than
 * `renamed`, the account taking it) only in case, width or invisible characters (validate/look-alike.ts).
 * Only new names are judged: accounts that already look alike stay as they are.
 */
function refuseLookAlike(view: Pick<UserView, 'values'>, username: string, renamed: string | undefined): void {
  const key = lookAlikeKeyOf(username);
  for (const user of view.values()) {
    if (user.username !== renamed && lookAlikeKeyOf(user.username) === key) throw new UsernameLookAlike();
  }
}

export interface UserChanges {
  readonly username?: string;
  readonly level?: AccessLevel;
  readonly passwordHash?: string;
  readonly client?: ClientSettings;
  /** The account's whole new list of groups; empty removes them. */
  readonly groups?: readonly string[];
  /** Removes the account's TOTP and recovery codes (an administrator's reset of a lost authenticator). */
  readonly removeTotp?: boolean;
  /** A new e-mail address, verified when an administrator sets it and not when its owner does; null removes it. */
  readonly email?: { readonly address: string; readonly isVerified: boolean } | null;
  /** A new display name; null removes it. */
  readonly name?: string | null;
  /** Removes every passkey of the account. */
  readonly removePasskeys?: boolean;
  /** Revokes every machine token of the account. */
  readonly removeTokens?: boolean;
}

/**
 * Applies a partial update. A new username, password or level is a credential change: the session
 * key is replaced, so every earlier token stops working; a new username or password also removes
 * the account's machine tokens. Client settings and groups are not (the gate reads groups on every
 * request). Fields it does not know are kept. Throws UserNotFound, UsernameTaken, UsernameLookAlike,
 * LastAdministrator.
 */
export function changeUser(view: UserView, target: string, changes: UserChanges, nowSeconds: number): void {
  const user = view.get(target);
  if (user === undefined) throw new UserNotFound();
  const username = changes.username ?? user.username;
  const level = changes.level ?? user.level;
  if (username !== user.username && view.has(username)) throw new UsernameTaken();
  if (username !== user.username) refuseLookAlike(view, username, user.username);
  if (isAdministrator(user.level) && !isAdministrator(level) && view.administratorCount() === 1) {
    throw new LastAdministrator();
  }
  // Levels compare by role (docs/contract/flood-api.md "Values"): rewriting 10 as "ADMINISTRATOR" changes no access.
  // Removing a second factor ends the account's sessions, as its owner removing it does.
  const isTotpRemoved = changes.removeTotp === true && user.totp !== undefined;
  const arePasskeysRemoved = changes.removePasskeys === true && user.passkeys !== undefined;
  const isCredentialChange =
    changes.passwordHash !== undefined ||
    username !== user.username ||
    roleOf(level) !== roleOf(user.level) ||
    isTotpRemoved ||
    arePasskeysRemoved;
  const isGroupChange = changes.groups !== undefined && !sameGroups(changes.groups, user.groups ?? []);
  const isProfileChange = changes.email !== undefined || changes.name !== undefined;
  const areTokensRemoved = changes.removeTokens === true && user.tokens !== undefined;
  const isOtherChange = isGroupChange || isProfileChange || areTokensRemoved || changes.client !== undefined;
  if (!isCredentialChange && !isOtherChange && level === user.level) return;
  if (username !== user.username) view.delete(user.username);
  // A new password or name ends the account's machine tokens too (SECURITY.md "Machine tokens and groups"):
  // whoever changes a password after a leak expects every way in to close. A level does not:
  // the gate reads the level on every request, so a demotion counts at once.
  const isTokenEnding = changes.passwordHash !== undefined || username !== user.username || areTokensRemoved;
  const {
    groups: _groups, tokens: _tokens, totp: _totp, passkeys: _passkeys, email: _email, emailVerified: _verified,
    name: _name, ...rest
  } = user;
  const groups = changes.groups ?? user.groups ?? [];
  const email = changes.email === undefined
    ? (user.email === undefined ? undefined : { address: user.email, isVerified: user.emailVerified === true })
    : changes.email;
  const name = changes.name === undefined ? user.name : changes.name;
  const changed: StoredUser = {
    ...rest,
    username,
    level,
    passwordHash: changes.passwordHash ?? user.passwordHash,
    ...(changes.client === undefined ? {} : { client: changes.client }),
    // An account without groups has no field (docs/contract/accounts.md "Stored per account": absent when unused).
    ...(groups.length === 0 ? {} : { groups }),
    ...(isTokenEnding || user.tokens === undefined ? {} : { tokens: user.tokens }),
    ...(isTotpRemoved || user.totp === undefined ? {} : { totp: user.totp }),
    ...(arePasskeysRemoved || user.passkeys === undefined ? {} : { passkeys: user.passkeys }),
    ...(email === null || email === undefined ? {} : { email: email.address, emailVerified: email.isVerified }),
    ...(name === null || name === undefined ? {} : { name }),
  };
  view.set(isCredentialChange ? withNewSessions(changed, nowSeconds) : changed);
}

function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index]);
}

/**
 * Account `username` with its `sub`, made now if it has none: 128 random bits, once per account, kept
 * through renames, never another account's. The id apps and links know the account by. Throws UserNotFound.
 */
export function withSubjectIn(view: UserView, username: string): StoredUser & { readonly sub: string } {
  const user = view.get(username);
  if (user === undefined) throw new UserNotFound();
  if (user.sub !== undefined) return { ...user, sub: user.sub };
  const taken = new Set<string>();
  for (const other of view.values()) if (other.sub !== undefined) taken.add(other.sub);
  let sub = randomBytes(16).toString('base64url');
  while (taken.has(sub)) sub = randomBytes(16).toString('base64url');
  const updated = { ...user, sub };
  view.set(updated);
  return updated;
}

/** Removes a user; throws UserNotFound, or LastAdministrator for the only administrator. */
export function removeUser(view: UserView, target: string): void {
  const user = view.get(target);
  if (user === undefined) throw new UserNotFound();
  if (isAdministrator(user.level) && view.administratorCount() === 1) throw new LastAdministrator();
  view.delete(target);
}
