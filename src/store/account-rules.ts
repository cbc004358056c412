import { newSessionKey } from '../auth/session-key.js';
import { LastAdministrator, UsernameTaken, UserNotFound } from '../errors.js';
import type { ClientSettings } from '../validate/client-settings.js';
import { isAdministrator, roleOf, type AccessLevel } from '../validate/level.js';
import type { StoredUser, UserView } from './users.js';

// The rules every change to accounts obeys, whether it comes over HTTP or from the
// offline command line. Each runs inside UserStore.change, so it sees queued changes too.

/** Adds a user; throws UsernameTaken. */
export function addUser(view: UserView, user: StoredUser): void {
  if (view.has(user.username)) throw new UsernameTaken();
  view.set(user);
}

export interface UserChanges {
  readonly username?: string;
  readonly level?: AccessLevel;
  readonly passwordHash?: string;
  readonly client?: ClientSettings;
}

/**
 * Applies a partial update. A new username, password or level is a credential change: the
 * session key is replaced, so every earlier token stops working. Client settings alone are not. Throws UserNotFound,
 * UsernameTaken, LastAdministrator.
 */
export function changeUser(view: UserView, target: string, changes: UserChanges, nowSeconds: number): void {
  const user = view.get(target);
  if (user === undefined) throw new UserNotFound();
  const username = changes.username ?? user.username;
  const level = changes.level ?? user.level;
  if (username !== user.username && view.has(username)) throw new UsernameTaken();
  if (isAdministrator(user.level) && !isAdministrator(level) && view.administratorCount() === 1) throw new LastAdministrator();
  // Levels compare by role (INTERFACE.md): rewriting 10 as "ADMINISTRATOR" changes no access.
  const isCredentialChange = changes.passwordHash !== undefined || username !== user.username || roleOf(level) !== roleOf(user.level);
  if (!isCredentialChange && changes.client === undefined && level === user.level) return;
  if (username !== user.username) view.delete(user.username);
  view.set({
    username,
    level,
    passwordHash: changes.passwordHash ?? user.passwordHash,
    client: changes.client ?? user.client,
    credentialsChangedAt: isCredentialChange ? Math.max(nowSeconds, user.credentialsChangedAt) : user.credentialsChangedAt,
    sessionKey: isCredentialChange ? newSessionKey() : user.sessionKey,
  });
}

/** Removes a user; throws UserNotFound, or LastAdministrator for the only administrator. */
export function removeUser(view: UserView, target: string): void {
  const user = view.get(target);
  if (user === undefined) throw new UserNotFound();
  if (isAdministrator(user.level) && view.administratorCount() === 1) throw new LastAdministrator();
  view.delete(target);
}
