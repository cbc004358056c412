import { PasskeyNotFound, PasskeyTaken, TooManyPasskeys, UserNotFound } from '../errors.js';
import { MAX_PASSKEYS } from './checks.js';
import type { StoredPasskey } from '../store/stored-fields.js';
import { withNewSessions } from '../store/account-rules.js';
import type { StoredUser, UserView } from '../store/users.js';

// The rules for an account's passkeys. Adding or removing one is a credential change
// (docs/contract/accounts.md "The caller's own account"): the session key is replaced, so every other
// session ends.

/** Whether an account in `view`, its batch's changes included, holds the credential `id`. A linear scan. */
function isHeld(view: UserView, id: string): boolean {
  for (const user of view.values()) if (user.passkeys?.some((passkey) => passkey.id === id) === true) return true;
  return false;
}

/**
 * Adds a passkey; throws UserNotFound, TooManyPasskeys, or PasskeyTaken when any account already
 * has that credential id (WebAuthn section 7.1 step 26).
 */
export function addPasskey(view: UserView, username: string, passkey: StoredPasskey, nowSeconds: number): StoredUser {
  const user = view.get(username);
  if (user === undefined) throw new UserNotFound();
  const passkeys = user.passkeys ?? [];
  if (passkeys.length >= MAX_PASSKEYS) throw new TooManyPasskeys();
  if (isHeld(view, passkey.id)) throw new PasskeyTaken();
  const added = Object.freeze([...passkeys, Object.freeze(passkey)]);
  const changed = withNewSessions({ ...user, passkeys: added }, nowSeconds);
  view.set(changed);
  return changed;
}

/** Removes a passkey; throws UserNotFound, PasskeyNotFound. */
export function removePasskey(view: UserView, username: string, id: string, nowSeconds: number): StoredUser {
  const user = view.get(username);
  if (user === undefined) throw new UserNotFound();
  const passkeys = user.passkeys ?? [];
  const remaining = passkeys.filter((passkey) => passkey.id !== id);
  if (remaining.length === passkeys.length) throw new PasskeyNotFound();
  const { passkeys: _passkeys, ...rest } = user;
  const changed = withNewSessions(
    remaining.length === 0 ? rest : { ...rest, passkeys: Object.freeze(remaining) },
    nowSeconds,
  );
  view.set(changed);
  return changed;
}

/**
 * Records a sign-in with a passkey: its new sign count and the time. Refuses (returns undefined)
 * when the account or the passkey is gone meanwhile, or when another sign-in already stored a
 * count this one does not exceed (two uses of one counter value raced).
 */
export function recordPasskeyUse(
  view: UserView, username: string, id: string, signCount: number, nowSeconds: number,
): StoredUser | undefined {
  const user = view.get(username);
  const passkey = user?.passkeys?.find((held) => held.id === id);
  if (user === undefined || passkey === undefined) return undefined;
  if (signCount !== 0 && signCount <= passkey.signCount) return undefined;
  const updated = Object.freeze({
    ...passkey, signCount: Math.max(signCount, passkey.signCount), lastUsedAt: nowSeconds,
  });
  const changed: StoredUser = {
    ...user,
    passkeys: Object.freeze((user.passkeys ?? []).map((held) => (held.id === id ? updated : held))),
  };
  view.set(changed);
  return changed;
}
