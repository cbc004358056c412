import { InvalidSecondFactor, SecondFactorRequired } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { AuthenticateBody } from '../validate/auth.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { SignInStep } from '../feature.js';
import type { TotpAccounts } from './accounts.js';
import type { EpochMs } from '../time.js';

interface SecondStepDeps {
  readonly store: UserStore;
  readonly totp: TotpAccounts;
  readonly throttle: LoginThrottle;
  readonly logger: Logger;
  readonly now: () => EpochMs;
}

/**
 * docs/contract/accounts.md "Two-step sign-in": the password was right (routes/auth.ts); an account with TOTP asks for
 * a code too, the current TOTP code or an unused recovery code. `client` is the throttle's client
 * key the sign-in's attempt was begun under. Throws SecondFactorRequired or InvalidSecondFactor.
 */
async function withSecondStep(
  deps: SecondStepDeps, address: string, body: AuthenticateBody, user: StoredUser, client: string,
): Promise<{ readonly user: StoredUser; readonly secondFactor: 'totp' | 'recovery code' | undefined }> {
  const { totp } = user;
  if (totp === undefined) return { user, secondFactor: undefined };
  if (body.code === undefined) {
    // Not a guess, so not a failure; but not a success either, which would clear the
    // username's failed codes and let a holder of the password guess codes without end.
    deps.throttle.cancelAttempt(body.username, client);
    throw new SecondFactorRequired();
  }
  const use = deps.totp.judge(totp, body.code, deps.now());
  // A code judged good is spent inside the store change, against the account as it is
  // then: of two requests with the same code, one signs in.
  const signedIn =
    use === undefined
      ? undefined
      : await deps.store.change((view) => {
          const latest = view.get(user.username);
          if (latest?.totp === undefined || latest.passwordHash !== user.passwordHash) return undefined;
          const spent = deps.totp.spend(latest.totp, use);
          if (spent === undefined) return undefined;
          const updated: StoredUser = { ...latest, totp: spent };
          view.set(updated);
          return updated;
        });
  if (signedIn === undefined) {
    // The attempt stays counted: failed codes feed the throttle like wrong passwords.
    deps.logger.warn('login failed: wrong second factor', { event: 'login_failed', address, username: body.username });
    throw new InvalidSecondFactor();
  }
  return { user: signedIn, secondFactor: use !== undefined && 'step' in use ? 'totp' : 'recovery code' };
}

/** The TOTP step of the sign-in (src/feature.ts SignInStep), as withSecondStep judges it. */
export function totpSignInStep(deps: SecondStepDeps): SignInStep {
  return ({ address, body, user, client }) => withSecondStep(deps, address, body, user, client);
}
