// The features, listed once (docs/architecture.md "The borders"): what the service opens, in this
// order (src/server.ts), and the checks the service and the command line read the users file with.
// Each feature is a folder under src/; the core offers the points they plug into (src/feature.ts).
import type { Feature } from './feature.js';
import { INVITATIONS } from './invitations/unit.js';
import { OIDC } from './oidc/provider.js';
import { checkStoredPasskeys } from './passkeys/checks.js';
import { PASSKEYS } from './passkeys/feature.js';
import { SESSIONS } from './sessions/feature.js';
import type { FeatureFieldChecks } from './store/stored-fields.js';
import { TOTP } from './totp/feature.js';
import { checkStoredTotp } from './totp/stored.js';

/** The features the service opens, in order; their routes and page sections follow the core's in this order. */
export const FEATURES: readonly Feature[] = Object.freeze([TOTP, PASSKEYS, SESSIONS, INVITATIONS, OIDC]);

/** The checks of the fields features keep in an account of users.json (src/store/stored-fields.ts). */
export const FEATURE_FIELDS: FeatureFieldChecks = Object.freeze({ totp: checkStoredTotp, passkeys: checkStoredPasskeys });
