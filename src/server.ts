import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { openTotpAccounts } from './totp/start.js';
import type { Config } from './config.js';
import { createProxyTrust, isLoopbackHost } from './http/client-address.js';
import { createOriginReader } from './http/request-origin.js';
import type { Logger } from './log/logger.js';
import { accountRoutes } from './routes/account.js';
import { authRoutes } from './routes/auth.js';
import { buildForbiddenPage } from './routes/forbidden-page.js';
import { forwardRoutes } from './routes/forward.js';
import { createGateService } from './routes/gate-service.js';
import { pageRoutes } from './pages/shell.js';
import { buildUsersPage } from './pages/users-page.js';
import { passkeyRoutes } from './passkeys/routes.js';
import { totpRoutes } from './totp/routes.js';
import { healthRoutes } from './routes/health.js';
import { logoutPageRoutes } from './routes/logout-page.js';
import { probeRoutes } from './routes/probe.js';
import { createSessionCookies } from './routes/session-cookie.js';
import { sessionRoutes } from './sessions/routes.js';
import { openInvitations } from './invitations/unit.js';
import { buildLoginPage } from './routes/login-page.js';
import { buildAccountPage } from './pages/account.js';
import { buildAccountPageElsewhere } from './pages/elsewhere.js';
import { openProvider } from './oidc/provider.js';
import { guardWrites, openDataDir } from './store/data-dir.js';
import { realFileSystem, type StoreFileSystem } from './store/file-system.js';
import { openUserStore } from './store/users.js';
import { isAdministrator } from './validate/level.js';
import { createChallengeStore } from './passkeys/challenges.js';
import { decoyKeyOf } from './passkeys/decoys.js';
import { relyingPartiesOf } from './passkeys/relying-party.js';
import { epochSeconds, type EpochMs } from './time.js';

/** How long the store, revocations and hashing threads get to finish after the shutdown timeout. */
export const FINAL_WRITES_MS = 2_000;

interface ServerOptions {
  readonly logger: Logger;
  /** The wall clock; tests inject one they can move. */
  readonly now?: () => EpochMs;
  /** The store's file operations; tests inject faults here. */
  readonly fileSystem?: StoreFileSystem;
  /** A stop requested while start-up waits for the data directory lock: startServer rejects, holding nothing. */
  readonly signal?: AbortSignal | undefined;
  /** How to run an offline command where this service runs (the command line knows its own path). */
  readonly offlineInstruction?: ((args: readonly string[]) => string) | undefined;
}

const LISTEN_ADVICE: Readonly<Record<string, string>> = {
  EADDRINUSE: 'is already in use (another Gatehouse?): pick a free one',
  EACCES: 'needs privileges this user lacks: pick one above 1023',
};

export type RunningServer = Awaited<ReturnType<typeof startServer>>;

/** Prepares the data directory, takes its lock, loads secret and users, and listens. */
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
    const store = await openUserStore(config.dataDir, fs);
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
    const totp = await openTotpAccounts({ config, fs, store, logger });
    const sessions = await openSessionRecords({ fs, dataDir: config.dataDir, users: store, logger, nowSeconds: () => epochSeconds(now()) });
    const session = createSessionChecker({ codec, store, revocations, sessions, nowSeconds: () => epochSeconds(now()) });
    const machineTokens = createMachineTokenVerifier({ store, logger, nowSeconds: () => epochSeconds(now()) });
    const throttle = createLoginThrottle(config.throttle);
    const cookies = createSessionCookies({ config, codec, proxyTrust, sessions, logger, now });
    const relyingParties = relyingPartiesOf(config);
    // Passkeys need accounts: with authMethod "none" there are none, and nothing to say.
    const isPasskeyOffered = config.authMethod !== 'none' && relyingParties.offReason === undefined;
    if (config.authMethod !== 'none') {
      for (const line of relyingParties.ignoredOrigins) logger.warn(line);
      if (relyingParties.offReason !== undefined) logger.warn(relyingParties.offReason);
    }
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
    // What the route groups are built from; each takes the part it needs.
    const deps = {
      config, store, codec, session, judge, hasher, throttle, revocations, sessions, logger, proxyTrust, totp, cookies, now,
    };
    // OpenID Connect (src/oidc/): only with --public-url, its issuer, and accounts to sign in with.
    const provider = config.authMethod === 'none' ? undefined : await openProvider({ ...deps, fs, sha256Base64 });
    // Invitations and reset links make accounts: authMethod "none" has none.
    const invitations = config.authMethod === 'none' ? undefined : await openInvitations({ ...deps, fs, sha256Base64, isPasskeyOffered });
    const apiRoutes = [
      ...authRoutes({ ...deps, offlineInstruction }),
      ...accountRoutes(deps),
      ...totpRoutes(deps),
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
        minPasswordLength: config.passwordMinimums.gatehouse, isPasskeyOffered, sections: provider?.accountSections ?? [],
      })),
      ...probeRoutes(proxyTrust, origins),
      // The users page calls the /users routes, and passkeys and logout need accounts: authMethod "none" has none.
      ...(config.authMethod === 'none'
        ? []
        : [
            ...pageRoutes('usersPage', buildUsersPage(sha256Base64, [
              ...(invitations === undefined ? [] : [invitations.usersPage]), ...(provider?.usersSections ?? []),
            ], { minPasswordLength: config.passwordMinimums.gatehouse })),
            ...passkeyRoutes({
              ...deps, challenges: createChallengeStore(), decoyKey: decoyKeyOf(tokenSecret), relyingParties,
            }),
            ...logoutPageRoutes(deps, sha256Base64),
            ...(provider?.routes ?? []),
            ...sessionRoutes(deps),
            ...(invitations?.routes ?? []),
          ]),
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
    const server = createServer(
      {
        maxHeaderSize: 16 * 1024,
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        keepAliveTimeout: 5_000,
        // Node checks the two timeouts above only this often (default 30 s): a slow-header
        // client would otherwise hold its socket three times longer than configured.
        connectionsCheckingInterval: 1_000,
      },
      app.handleRequest,
    );
    // Expect: 100-continue: the app answers 100 only for a body it will read, 413 for one over the cap.
    server.on('checkContinue', app.handleCheckContinue);
    try {
      await once(server.listen(config.port, config.host), 'listening');
    } catch (error) {
      // The error's text alone does not say what to change.
      const advice = LISTEN_ADVICE[(error as NodeJS.ErrnoException).code ?? ''];
      if (advice !== undefined) {
        (error as Error).message = `${config.host} port ${config.port} ${advice} with --port or GATEHOUSE_PORT`;
      }
      throw error;
    }
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

    let closing: Promise<boolean> | undefined;
    /**
     * Stops accepting, lets in-flight requests finish (up to the shutdown timeout), then gives the
     * last writes FINAL_WRITES_MS and releases the lock. False when those writes did not finish:
     * the lock is then left to go stale, since a write may still land.
     */
    const close = (): Promise<boolean> =>
      (closing ??= (async () => {
        isStopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections that sit idle would hold close() open; in-flight ones may finish.
        server.closeIdleConnections();
        const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
        const deadline = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
        await Promise.race([closed, deadline]);
        clearInterval(idleSweep);
        server.closeAllConnections();
        // Handlers cut off by the timeout may still be hashing: no write may land after the lock
        // goes. Bounded, so that timeout plus this stays inside a container's 10 s stop.
        const finalWrites = Promise.all([
          store.close(), revocations?.close(), sessions.close(), invitations?.close(), hasher.close(), provider?.close(),
        ]).then(() => true);
        let timer: NodeJS.Timeout | undefined;
        const isClean = await Promise.race([
          finalWrites,
          new Promise<boolean>((resolve) => (timer = setTimeout(resolve, FINAL_WRITES_MS, false))),
        ]);
        clearTimeout(timer);
        if (isClean) {
          await lock.release();
          logger.info('stopped');
        } else {
          lock.abandon();
          logger.error(`stopped with writes still in flight after ${FINAL_WRITES_MS} ms; the data directory lock is left to go stale`);
        }
        logger.flush();
        return isClean;
      })());

    // lockLost resolves when the data directory lock was taken over: every write is refused from then on.
    return { url, port, server, store, hasher, close, lockLost: lock.lost };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * The key TOTP seeds are sealed with: `--seal-key-file`, else the data directory's seal.key,
 * made on first start. A missing seal.key is made anew only while no account has TOTP: with
 * seeds sealed under a lost key, start-up stops and says so rather than lock everyone out quietly.
 */

function sha256Base64(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}
