import { MachineTokenNotFound, TooManyMachineTokens, UserNotFound } from '../errors.js';
import { MAX_MACHINE_TOKENS, type StoredMachineToken } from '../validate/machine-token.js';
import type { UserView } from './users.js';

// The rules for an account's machine tokens, over HTTP and from the offline command line alike.
// None is a credential change: sessions stay, and other tokens stay.

/** Adds a token to an account; throws UserNotFound, TooManyMachineTokens. */
export function addMachineToken(view: UserView, username: string, token: StoredMachineToken): void {
  const user = view.get(username);
  if (user === undefined) throw new UserNotFound();
  const tokens = user.tokens ?? [];
  if (tokens.length >= MAX_MACHINE_TOKENS) throw new TooManyMachineTokens();
  view.set({ ...user, tokens: Object.freeze([...tokens, Object.freeze(token)]) });
}

/** Removes one token of an account; throws UserNotFound, MachineTokenNotFound. */
export function removeMachineToken(view: UserView, username: string, id: string): void {
  const user = view.get(username);
  if (user === undefined) throw new UserNotFound();
  const tokens = user.tokens ?? [];
  const remaining = tokens.filter((token) => token.id !== id);
  if (remaining.length === tokens.length) throw new MachineTokenNotFound();
  const { tokens: _tokens, ...rest } = user;
  view.set(remaining.length === 0 ? rest : { ...user, tokens: Object.freeze(remaining) });
}

/** Records a use of a token; does nothing when the account or the token is gone meanwhile. */
export function touchMachineToken(view: UserView, username: string, id: string, nowSeconds: number): void {
  const user = view.get(username);
  const tokens = user?.tokens;
  if (user === undefined || tokens === undefined || !tokens.some((token) => token.id === id)) return;
  view.set({
    ...user,
    tokens: Object.freeze(
      tokens.map((token) => (token.id === id ? Object.freeze({ ...token, lastUsedAt: nowSeconds }) : token)),
    ),
  });
}
