import type { Config } from '../config.js';
import type { Feature } from '../feature.js';
import type { Logger } from '../log/logger.js';
import { PASSKEYS_SECTION } from './account-section.js';
import { createChallengeStore } from './challenges.js';
import { decoyKeyOf } from './decoys.js';
import { relyingPartiesOf } from './relying-party.js';
import { createPasskeyService } from './ceremonies.js';
import { passkeyRoutes } from './routes.js';

/**
 * Whether passkeys can be made and used here: they need accounts (authMethod "none" has none, and
 * nothing to say) and a relying party (passkeys/relying-party.ts). Says once in the log why not,
 * and which origins it ignored.
 */
export function passkeysOffered(config: Config, logger: Logger): boolean {
  if (config.authMethod === 'none') return false;
  const relyingParties = relyingPartiesOf(config);
  for (const line of relyingParties.ignoredOrigins) logger.warn(line);
  if (relyingParties.offReason !== undefined) logger.warn(relyingParties.offReason);
  return relyingParties.offReason === undefined;
}

/**
 * Passkeys (docs/contract/accounts.md "Passkeys"): their routes, for every deployment with accounts,
 * and the account page's section (served under authMethod "none" too, so there either way; where
 * passkeys are off it lists those the account has as off).
 */
export const PASSKEYS: Feature = {
  name: 'passkeys',
  async open(deps) {
    const sections = { account: [PASSKEYS_SECTION] };
    if (deps.config.authMethod === 'none') return { sections };
    const passkeys = createPasskeyService({
      ...deps, challenges: createChallengeStore(), decoyKey: decoyKeyOf(deps.tokenSecret), relyingParties: relyingPartiesOf(deps.config),
    });
    return { routes: passkeyRoutes({ ...deps, passkeys }), sections };
  },
};
