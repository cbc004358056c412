import type { Feature } from '../feature.js';
import { TOTP_SECTION } from './account-section.js';
import { totpRoutes } from './routes.js';
import { totpSignInStep } from './sign-in-step.js';
import { openTotpAccounts } from './start.js';

/**
 * TOTP (docs/contract/accounts.md "Two-step sign-in"): the seal key and the accounts' sealed seeds,
 * the account's TOTP routes and its section of the account page, and the sign-in's code step. A set-up still pending goes when the
 * account's credentials change.
 */
export const TOTP: Feature = {
  name: 'TOTP',
  async open(deps) {
    const totp = await openTotpAccounts(deps);
    deps.credentialChanges.whenChanged((username) => totp.forget(username));
    return {
      routes: totpRoutes({ ...deps, totp }), sections: { account: [TOTP_SECTION] }, signInStep: totpSignInStep({ ...deps, totp }),
    };
  },
};
