import { createHash } from 'node:crypto';
import { createApp } from './app.js';
import { createTokenCodec } from './auth/jwt.js';
import { createLoginThrottle } from './auth/login-throttle.js';
import { createPasswordHasher } from './auth/password-hasher.js';
import { openRevocationList } from './auth/revocations.js';
import { loadOrCreateSecretFile, readSecretFile, secretFromEnvironment } from './auth/secret.js';
import { assertRoutesFollowTable } from './auth/access.js';
import { createJudge } from './auth/judge.js';
import { createSessionChecker } from './auth/session.js';
import { openSessionRecords } from './auth/session-records.js';
import { createMachineTokenVerifier } from './auth/machine-tokens.js';
import { createCredentialChanges } from './auth/credential-changes.js';
import type { Config } from './config.js';
import type { FeatureParts } from './feature.js';
import { FEATURE_FIELDS, FEATURES } from './features.js';
import { listen, stopper, type ServerOptions } from './lifecycle.js';
import { passkeysOffered } from './passkeys/feature.js';
import { createProxyTrust, isLoopbackHost } from './http/client-address.js';
import { createOriginReader } from './http/request-origin.js';
import { accountRoutes } from './routes/account.js';
import { authRoutes } from './routes/auth.js';
import { buildForbiddenPage } from './routes/forbidden-page.js';
import { forwardRoutes } from './routes/forward.js';
import { createGateService } from './routes/gate-service.js';
import { pageRoutes } from './pages/shell.js';
import { buildUsersPage } from './pages/users-page.js';
import { healthRoutes } from './routes/health.js';
import { logoutPageRoutes } from './routes/logout-page.js';
import { probeRoutes } from './routes/probe.js';
import { createSessionCookies } from './routes/session-cookie.js';
import { buildLoginPage } from './routes/login-page.js';
import { buildAccountPage } from './pages/account.js';
import { buildAccountPageElsewhere } from './pages/elsewhere.js';
import { guardWrites, openDataDir } from './store/data-dir.js';
import { realFileSystem } from './store/file-system.js';
import { openUserStore } from './store/users.js';
import { isAdministrator } from './validate/level.js';
import { epochSeconds } from './time.js';

export type RunningServer = Awaited<ReturnType<typeof startServer>>;

/**
 * Prepares the data directory, takes its lock, loads secret and users, opens the core and then each
 * feature (src/features.ts), and listens (src/lifecycle.ts).
 */
export async function startServer(config: Config, options: ServerOptions) {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const offlineInstruction = options.offlineInstruction ??
    ((args: readonly string[]): string =>
      `stop the service, then run: gatehouse ${args.join(' ')} --data-dir ${config.dataDir}`);
  const proxyTrust = createProxyTrust(config.trustProxy);
  if (config.authMethod === 'none' && !isLoopbackHost(config.host) && config.trustProxy.length === 0) {
    throw new Error(`--auth none lets anyone who reaches the port act as administrator; it is refused on ${config.host} unless --trust-proxy names the proxy that authenticates.`);
  }
  const warn = (message: string): void => logger.warn(message);
  let secret: Buffer | undefined;
  if (config.secret !== undefined) secret = secretFromEnvironment(config.secret);
  else if (config.secretFile !== undefined) secret = await readSecretFile(config.secretFile, warn);

  const { lock, tightened, removedTempFiles } = await openDataDir(config.dataDir, {
    purpose: 'serve', signal: options.signal, onWait: warn,
  });
  const fs = guardWrites(options.fileSystem ?? realFileSystem, lock, config.dataDir);
  if (tightened) logger.warn('tightened the data directory permissions to 0700', { dataDir: config.dataDir });
  if (removedTempFiles > 0) logger.warn('removed temp files left by an interrupted write', { count: removedTempFiles });
  try {
    const tokenSecret = secret ?? (await loadOrCreateSecretFile(fs, config.dataDir));
    const codec = createTokenCodec(tokenSecret);
    const store = await openUserStore(config.dataDir, fs, FEATURE_FIELDS);
    const revocations = config.revokeOnLogout
      ? await openRevocationList(fs, config.dataDir, config.maxRevokedTokens)
      : undefined;
    const hasher = createPasswordHasher({
      cost: config.scryptCost,
      maxConcurrent: config.hashConcurrency,
      maxQueued: config.hashQueueLength,
      fairness: { maxQueuedPerClient: config.hashQueuePerClient, maxQueuedPerNetwork: config.hashQueuePerNetwork },
    });
    await hasher.warmUp();
    if (store.size > 0 && ![...store.list()].some((user) => isAdministrator(user.level))) {
      logger.warn(`no administrator exists, so no one can add users; raise a level offline: ${offlineInstruction(['users', 'set-level', 'NAME', 'ADMINISTRATOR'])}`);
    }

    let isStopping = false;
    void lock.lost.then(() => (isStopping = true));
    const sessions = await openSessionRecords({ fs, dataDir: config.dataDir, users: store, logger, nowSeconds: () => epochSeconds(now()) });
    const session = createSessionChecker({ codec, store, revocations, sessions, nowSeconds: () => epochSeconds(now()) });
    const machineTokens = createMachineTokenVerifier({ store, logger, nowSeconds: () => epochSeconds(now()) });
    const throttle = createLoginThrottle(config.throttle);
    const cookies = createSessionCookies({ config, codec, proxyTrust, sessions, logger, now });
    const isPasskeyOffered = passkeysOffered(config, logger);
    const origins = createOriginReader({ publicUrl: config.publicUrl, floodUrls: config.floodUrls, proxyTrust });
    const judge = createJudge({
      session,
      proxyTrust,
      accountCount: () => store.size,
      origins,
      isTwoFactorRequiredOfAdministrators: config.requireMfaForAdmins,
      passwords: { hasher, throttle, now },
      logger,
    });
    // The account page on Gatehouse's own origin, for the links of the pages apps' sites show too.
    const accountPageUrl = config.publicUrl === undefined ? undefined : `${config.publicUrl}/gatehouse/account`;
    // What the route groups and the features are built from; each takes the part it needs.
    const deps = {
      config, store, codec, session, judge, hasher, throttle, revocations, sessions, logger, proxyTrust, cookies, now,
      credentialChanges: createCredentialChanges(),
    };
    const features: FeatureParts[] = [];
    for (const feature of FEATURES) {
      features.push(await feature.open({ ...deps, fs, sha256Base64, tokenSecret, isPasskeyOffered }));
    }
    const sectionsOf = (page: 'account' | 'users') => features.flatMap((parts) => parts.sections?.[page] ?? []);
    const apiRoutes = [
      ...authRoutes({ ...deps, offlineInstruction, signInSteps: features.flatMap((parts) => parts.signInStep ?? []) }),
      ...accountRoutes(deps),
      ...forwardRoutes({
        gate: createGateService({
          session,
          machineTokens,
          isTwoFactorRequiredOfAdministrators: config.requireMfaForAdmins,
          requireMfa: config.requireMfa,
          allowedRedirectHosts: config.allowedRedirectHosts,
          isStopping: () => isStopping,
          logger,
          now,
        }),
        forbiddenPage: buildForbiddenPage(sha256Base64, { isPasskeyOffered, accountUrl: accountPageUrl }),
      }),
      ...pageRoutes('signInPage', buildLoginPage({
        allowedRedirectHosts: config.allowedRedirectHosts, isCookieSecure: config.secureCookie, cookieDomain: config.cookieDomain,
        isPasskeyOffered, siteName: config.siteName, sha256Base64, accountUrl: accountPageUrl,
      })),
      ...pageRoutes('accountPage', buildAccountPage(sha256Base64, {
        minPasswordLength: config.passwordMinimums.gatehouse, isPasskeyOffered, sections: sectionsOf('account'),
      })),
      ...probeRoutes(proxyTrust, origins),
      // The users page calls the /users routes, and logout needs accounts: authMethod "none" has none.
      ...(config.authMethod === 'none'
        ? []
        : [
            ...pageRoutes('usersPage', buildUsersPage(sha256Base64, sectionsOf('users'), {
              minPasswordLength: config.passwordMinimums.gatehouse,
            })),
            ...logoutPageRoutes(deps, sha256Base64),
          ]),
      ...features.flatMap((parts) => parts.routes ?? []),
    ];
    const rootRoutes = healthRoutes(() => isStopping);
    assertRoutesFollowTable([...apiRoutes, ...rootRoutes]);
    const app = createApp({
      apiRoutes,
      rootRoutes,
      baseUri: config.baseUri,
      judge,
      proxyTrust,
      logger,
      maxBodyBytes: config.maxBodyBytes,
      accountPageElsewhere: buildAccountPageElsewhere({ publicUrl: config.publicUrl, baseUri: config.baseUri, sha256Base64 }),
    });
    const { server, url, port } = await listen(config, app);
    const close = stopper({
      server,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      lock,
      logger,
      onStopping: () => (isStopping = true),
      finalWrites: () => Promise.all([
        store.close(), revocations?.close(), sessions.close(), hasher.close(), ...features.map((parts) => parts.close?.()),
      ]),
    });

    // lockLost resolves when the data directory lock was taken over: every write is refused from then on.
    return { url, port, server, store, hasher, close, lockLost: lock.lost };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

function sha256Base64(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}
