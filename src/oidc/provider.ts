import type { SessionRecords } from '../auth/session-records.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { RevocationList } from '../auth/revocations.js';
import type { Config } from '../config.js';
import type { Feature } from '../feature.js';
import type { Logger } from '../log/logger.js';
import type { PageSection, Sha256Base64 } from '../pages/shell.js';
import type { Route } from '../routes/context.js';
import type { SessionCookies } from '../routes/session-cookie.js';
import type { StoreFileSystem } from '../store/file-system.js';
import type { UserStore } from '../store/users.js';
import { createAccessTokenStore } from './access-tokens.js';
import { openClientStore } from './client-store.js';
import { CLIENTS_SECTION } from './pages/clients-section.js';
import { PROFILE_SECTION } from './pages/profile-section.js';
import { createCodeStore } from './codes.js';
import { createFreshMarks } from './fresh-mark.js';
import { openGrantStore } from './grant-store.js';
import { clientRoutes } from './routes/client-routes.js';
import { logoutRoutes } from './routes/logout-route.js';
import { providerRoutes } from './routes/provider-routes.js';
import { loadOrCreateSigningKeys } from './signing-keys.js';
import { createTokenService } from './token-service.js';
import { epochSeconds, type EpochMs, type EpochSeconds } from '../time.js';

interface Provider {
  readonly routes: readonly Route[];
  /** The account page's name and e-mail section. */
  readonly accountSections: readonly PageSection[];
  /** The users page's sign-in apps section. */
  readonly usersSections: readonly PageSection[];
  close(): Promise<void>;
}

interface ProviderDeps {
  readonly config: Config;
  readonly fs: StoreFileSystem;
  readonly store: UserStore;
  readonly throttle: LoginThrottle;
  readonly revocations: RevocationList | undefined;
  readonly sessions: SessionRecords;
  readonly cookies: SessionCookies;
  readonly logger: Logger;
  readonly sha256Base64: Sha256Base64;
  readonly now: () => EpochMs;
}

/**
 * The OpenID Connect provider (docs/contract/oidc.md), when --public-url names its
 * issuer: its keys, clients and grants loaded (keys made on first start), and its routes. Without
 * --public-url there is none, and every path of it answers 404.
 */
async function openProvider(deps: ProviderDeps): Promise<Provider | undefined> {
  const { config, logger, now } = deps;
  const issuer = config.publicUrl;
  if (issuer === undefined) return undefined;
  const nowSeconds = (): EpochSeconds => epochSeconds(now());
  const keys = await loadOrCreateSigningKeys(deps.fs, config.dataDir, nowSeconds());
  const clients = await openClientStore(deps.fs, config.dataDir);
  const grants = await openGrantStore(deps.fs, config.dataDir);
  const codes = createCodeStore();
  const accessTokens = createAccessTokenStore();
  const tokens = createTokenService({
    issuer, keys, clients, grants, codes, accessTokens, users: deps.store, sessions: deps.sessions, throttle: deps.throttle, logger, now,
  });
  // What an app got through a session ends with it, for good: before its record goes (a code or
  // access token in memory at once, refresh token families on disk).
  deps.sessions.whenEnding(async (ids) => {
    const isThrough = (got: { readonly session?: { readonly id: string } | undefined }): boolean =>
      got.session !== undefined && ids.has(got.session.id);
    codes.endSessions(ids);
    accessTokens.revokeWhere(isThrough);
    await grants.endWhere(isThrough);
  });
  const routes = [
    ...providerRoutes({
      issuer, clients, tokens, keys, accessTokens,
      authorize: { issuer, users: deps.store, codes, freshMarks: createFreshMarks(), nowSeconds },
      requireMfa: config.requireMfa, requireMfaForAdmins: config.requireMfaForAdmins,
      maxBodyBytes: config.maxBodyBytes, logger, sha256Base64: deps.sha256Base64, now,
    }),
    ...logoutRoutes({
      issuer, clients, keys, revocations: deps.revocations, sessions: deps.sessions, cookies: deps.cookies, logger,
      sha256Base64: deps.sha256Base64, maxBodyBytes: config.maxBodyBytes, now,
    }),
    ...clientRoutes({
      users: deps.store, revocations: deps.revocations, sessions: deps.sessions, clients, grants, accessTokens, logger,
      maxBodyBytes: config.maxBodyBytes, now,
    }),
  ];
  return {
    routes,
    accountSections: [PROFILE_SECTION],
    usersSections: [CLIENTS_SECTION],
    close: async () => {
      await Promise.all([clients.close(), grants.close()]);
    },
  };
}

/** OpenID Connect: only with --public-url, its issuer, and accounts to sign in with (authMethod "none" has none). */
export const OIDC: Feature = {
  name: 'OpenID Connect',
  async open(deps) {
    const provider = deps.config.authMethod === 'none' ? undefined : await openProvider(deps);
    if (provider === undefined) return {};
    return {
      routes: provider.routes,
      sections: { account: provider.accountSections, users: provider.usersSections },
      close: () => provider.close(),
    };
  },
};
