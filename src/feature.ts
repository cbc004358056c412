// What a feature is to the core (docs/architecture.md "The borders"): a folder under src/ that the
// composition (src/features.ts) opens once at start-up with the core's parts, and that gives back its
// routes, its sections of the core's pages, a step of the sign-in, and how to close it. The core never
// imports a feature; these are the points where features plug in.
import type { PageSection, Sha256Base64 } from './pages/shell.js';
import type { Route, RouteDeps } from './routes/context.js';
import type { StoreFileSystem } from './store/file-system.js';
import type { StoredUser } from './store/users.js';
import type { AuthenticateBody } from './validate/auth.js';

/** What the sign-in knows once the password was right (src/routes/auth.ts): a step may ask for more. */
interface SignInAttempt {
  readonly address: string;
  readonly body: AuthenticateBody;
  /** The account whose password it was, as the store holds it now. */
  readonly user: StoredUser;
  /** The login throttle's client key the attempt was begun under. */
  readonly client: string;
}

/** The account as it signs in after a step, and the second factor the step proved (undefined: it asked none). */
export interface SignedIn {
  readonly user: StoredUser;
  readonly secondFactor: string | undefined;
}

/** A step of the sign-in after the password (TOTP's code); throws to refuse the sign-in. */
export type SignInStep = (attempt: SignInAttempt) => Promise<SignedIn>;

/** What every feature is opened with: the core's parts, and what the composition settled before. */
interface FeatureDeps extends RouteDeps {
  readonly fs: StoreFileSystem;
  readonly sha256Base64: Sha256Base64;
  /** The token signing secret, for keys derived from it (the passkeys' decoys). */
  readonly tokenSecret: Buffer;
  /** Passkeys can be made and used here (src/passkeys/feature.ts): pages offer them. */
  readonly isPasskeyOffered: boolean;
}

/** What a feature gives back: each part optional. */
export interface FeatureParts {
  readonly routes?: readonly Route[];
  /** Sections of the core's pages: the account page's, the users page's. */
  readonly sections?: { readonly account?: readonly PageSection[]; readonly users?: readonly PageSection[] };
  readonly signInStep?: SignInStep;
  /** Its last writes, at the stop (src/lifecycle.ts). */
  close?(): Promise<unknown>;
}

export interface Feature {
  readonly name: string;
  /** Opens the feature; throws to stop the start (a file it cannot read). Returns no parts when a setting leaves it off. */
  open(deps: FeatureDeps): Promise<FeatureParts>;
}
