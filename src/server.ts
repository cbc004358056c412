import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { createTokenCodec } from './auth/jwt.js';
import { createLoginThrottle } from './auth/login-throttle.js';
import { createPasswordHasher, type PasswordHasher } from './auth/password-hasher.js';
import { openRevocationList } from './auth/revocations.js';
import { loadOrCreateSecretFile, secretFromEnvironment } from './auth/secret.js';
import { createSessionAuthenticator } from './auth/session.js';
import type { Config } from './config.js';
import { createProxyTrust, isLoopbackAddress } from './http/client-address.js';
import type { Logger } from './log/logger.js';
import { authRoutes } from './routes/auth.js';
import { healthRoutes } from './routes/health.js';
import { openDataDir } from './store/data-dir.js';
import { realFileSystem, type StoreFileSystem } from './store/file-system.js';
import { openUserStore, type UserStore } from './store/users.js';
import { isAdministrator } from './validate/level.js';

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly store: UserStore;
  readonly hasher: PasswordHasher;
  /** Stops accepting, lets in-flight requests and writes finish (bounded by the shutdown timeout), releases the lock. */
  close(): Promise<void>;
}

export interface ServerOptions {
  readonly logger: Logger;
  /** Milliseconds since the epoch; tests inject a clock they can move. */
  readonly now?: () => number;
  /** The store's file operations; tests inject faults here. */
  readonly fileSystem?: StoreFileSystem;
}

/** Prepares the data directory, takes its lock, loads secret and users, and listens. */
export async function startServer(config: Config, options: ServerOptions): Promise<RunningServer> {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const fs = options.fileSystem ?? realFileSystem;
  const proxyTrust = createProxyTrust(config.trustProxy);
  if (config.authMethod === 'none' && !isLoopback(config.host) && config.trustProxy.length === 0) {
    throw new Error(`--auth none lets anyone who reaches the port act as administrator; it is refused on ${config.host} unless --trust-proxy names the proxy that authenticates.`);
  }
  const secret = config.secret === undefined ? undefined : secretFromEnvironment(config.secret);

  const { lock, tightened, removedTempFiles } = await openDataDir(config.dataDir, { isService: true });
  if (tightened) logger.warn('tightened the data directory permissions to 0700', { dataDir: config.dataDir });
  if (removedTempFiles > 0) logger.warn('removed temp files left by an interrupted write', { count: removedTempFiles });
  try {
    const codec = createTokenCodec(secret ?? (await loadOrCreateSecretFile(fs, config.dataDir)));
    const store = await openUserStore(config.dataDir, fs);
    const revocations = config.revokeOnLogout ? await openRevocationList(fs, config.dataDir, config.maxRevokedTokens) : undefined;
    const hasher = createPasswordHasher({
      cost: config.scryptCost,
      maxConcurrent: config.hashConcurrency,
      maxQueued: config.hashQueueLength,
      fairness: { maxQueuedPerClient: config.hashQueuePerClient, maxQueuedPerNetwork: config.hashQueuePerNetwork },
    });
    await hasher.warmUp();
    if (store.size > 0 && ![...store.list()].some((user) => isAdministrator(user.level))) {
      logger.warn('no administrator exists, so no one can add users; raise a level with: gatehouse users set-level NAME ADMINISTRATOR');
    }

    let isStopping = false;
    const session = createSessionAuthenticator({ codec, store, revocations, nowSeconds: () => Math.floor(now() / 1000) });
    const app = createApp({
      apiRoutes: authRoutes({ config, store, codec, session, hasher, throttle: createLoginThrottle(config.throttle), revocations, logger, proxyTrust, now }),
      rootRoutes: healthRoutes(() => isStopping),
      baseUri: config.baseUri,
      proxyTrust,
      logger,
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
      app,
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
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
        // Handlers cut off by the timeout may still be hashing: no write may land after the lock goes.
        await store.close();
        await revocations?.close();
        await hasher.close();
        lock.release();
        logger.info('stopped');
        logger.flush();
      })());

    return { url, port, server, store, hasher, close };
  } catch (error) {
    lock.release();
    throw error;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host);
}
