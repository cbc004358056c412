import type { IncomingMessage } from 'node:http';
import { TooManyAttempts } from '../errors.js';
import { throttleKeyOf } from '../http/client-address.js';
import { networkKeyOf } from '../http/network-key.js';
import type { StoredUser } from '../store/users.js';
import { isAdministrator } from '../validate/level.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordHasher } from './password-hasher.js';
import type { Caller } from './session.js';
import type { WorkKey } from './work-limiter.js';
import type { EpochMs } from '../time.js';

/** What judging a password needs: the hash queue, the login throttle and the clock. */
export interface PasswordChecks {
  readonly hasher: PasswordHasher;
  readonly throttle: LoginThrottle;
  readonly now: () => EpochMs;
}

interface PasswordAttempt {
  readonly username: string;
  readonly password: string;
  readonly hash: string | undefined;
  readonly key: WorkKey;
}

/**
 * Whether `password` is the one `hash` was made from, judged under the login throttle: a throttled
 * attempt is refused (429) before any hashing, so an attacker cannot buy scrypt time. The attempt
 * counts as a failure from here on, until the caller records a success or cancels it.
 */
export async function throttledMatch(
  checks: PasswordChecks, address: string, req: IncomingMessage, attempt: PasswordAttempt,
): Promise<boolean> {
  const client = throttleKeyOf(address);
  const wait = checks.throttle.beginAttempt(attempt.username, client, checks.now());
  if (wait > 0) throw new TooManyAttempts(wait);
  try {
    return await checks.hasher.verify(attempt.password, attempt.hash, attempt.key, () => req.socket.destroyed);
  } catch (error) {
    // Busy or abandoned: the password was never judged, so it is not a failed login.
    checks.throttle.cancelAttempt(attempt.username, client);
    throw error;
  }
}

/**
 * Whether `password` is `user`'s current one, for a change of the account (auth/access.ts `password`):
 * judged under the login throttle like a sign-in, so a stolen session is no way to guess it. A right
 * one uncounts this attempt only: earlier failures (guessed codes among them) stay counted.
 */
export async function confirmedPassword(
  checks: PasswordChecks, user: StoredUser, password: string, address: string, req: IncomingMessage,
): Promise<boolean> {
  const { username, passwordHash } = user;
  const key = hashKeyOf(address, user);
  const isRight = await throttledMatch(checks, address, req, { username, password, hash: passwordHash, key });
  if (isRight) checks.throttle.cancelAttempt(username, throttleKeyOf(address));
  return isRight;
}

/**
 * The hash queue's key for a request (docs/security-notes.md "Login storms"): an administrator's
 * work queues as that account, without the per-client caps (a script adding users in parallel is
 * normal); anyone else's, signed in or not, under the throttle's client key and its network.
 */
export function hashKeyOf(address: string, account: StoredUser | Caller | undefined): WorkKey {
  const user = account === undefined ? undefined : 'user' in account ? account.user : account;
  // The comma keeps it apart from every address key: no X-Forwarded-For hop holds one.
  if (user !== undefined && isAdministrator(user.level)) {
    return { client: `,account:${user.username}`, network: `,account:${user.username}`, isUncapped: true };
  }
  const client = throttleKeyOf(address);
  return { client, network: networkKeyOf(client) };
}
