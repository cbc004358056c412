// The server's life, apart from what it serves: listening with node:http's limits, the stop signals,
// and the stop (in-flight requests, then the last writes, then the lock). src/server.ts puts the core
// and the features together and hands them here; src/cli/serve.ts runs it until a signal.
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import type { Logger } from './log/logger.js';
import type { StoreFileSystem } from './store/file-system.js';
import type { DataDirLock, DataDirLockLost } from './store/lock.js';
import type { EpochMs } from './time.js';

/** How long the store, revocations and hashing threads get to finish after the shutdown timeout. */
export const FINAL_WRITES_MS = 2_000;

export interface ServerOptions {
  readonly logger: Logger;
  /** The wall clock; tests inject one they can move. */
  readonly now?: () => EpochMs;
  /** The store's file operations; tests inject faults here. */
  readonly fileSystem?: StoreFileSystem;
  /** A stop requested while start-up waits for the data directory lock: the start rejects, holding nothing. */
  readonly signal?: AbortSignal | undefined;
  /** How to run an offline command where this service runs (the command line knows its own path). */
  readonly offlineInstruction?: ((args: readonly string[]) => string) | undefined;
}

/** A service that listens: where, how to stop it (false: its last writes did not finish), and when its lock is lost. */
export interface Service {
  readonly url: string;
  readonly port: number;
  close(): Promise<boolean>;
  /** Resolves when the data directory lock was taken over: every write is refused from then on. */
  readonly lockLost: Promise<DataDirLockLost>;
}

/** What starts the service (src/server.ts startServer), for the command that runs it. */
export type StartService = (config: Config, options: ServerOptions) => Promise<Service>;

const LISTEN_ADVICE: Readonly<Record<string, string>> = {
  EADDRINUSE: 'is already in use (another Gatehouse?): pick a free one',
  EACCES: 'needs privileges this user lacks: pick one above 1023',
};

/** Creates the node:http server with its limits around the app's two listeners, and listens on config's host and port. */
export async function listen(
  config: Config, app: { readonly handleRequest: RequestListener; readonly handleCheckContinue: RequestListener },
): Promise<{ readonly server: Server; readonly url: string; readonly port: number }> {
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
  return { server, url, port };
}

interface StopParts {
  readonly server: Server;
  readonly shutdownTimeoutMs: number;
  readonly lock: DataDirLock;
  readonly logger: Logger;
  /** Called first: the health route answers 503 from then on. */
  readonly onStopping: () => void;
  /** The last writes of the core and every feature (stores, revocations, hashing threads). */
  readonly finalWrites: () => Promise<unknown>;
}

/**
 * The stop, once however often it is asked for: stops accepting, lets in-flight requests finish (up
 * to the shutdown timeout), then gives the last writes FINAL_WRITES_MS and releases the lock. False
 * when those writes did not finish: the lock is then left to go stale, since a write may still land.
 */
export function stopper({ server, shutdownTimeoutMs, lock, logger, onStopping, finalWrites }: StopParts): () => Promise<boolean> {
  let closing: Promise<boolean> | undefined;
  return () =>
    (closing ??= (async () => {
      onStopping();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections that sit idle would hold close() open; in-flight ones may finish.
      server.closeIdleConnections();
      const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, shutdownTimeoutMs).unref());
      await Promise.race([closed, deadline]);
      clearInterval(idleSweep);
      server.closeAllConnections();
      // Handlers cut off by the timeout may still be hashing: no write may land after the lock
      // goes. Bounded, so that timeout plus this stays inside a container's 10 s stop.
      let timer: NodeJS.Timeout | undefined;
      const isClean = await Promise.race([
        finalWrites().then(() => true),
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
}

/**
 * SIGTERM and SIGINT, listened for until `dispose`: `signal` aborts with the signal's name (a stop
 * during start-up aborts it), and `stopRequested` resolves with it.
 */
export function stopSignals(): { readonly signal: AbortSignal; readonly stopRequested: Promise<string>; dispose(): void } {
  const startUp = new AbortController();
  const stopRequested = new Promise<string>((resolve) => {
    startUp.signal.addEventListener('abort', () => resolve(String(startUp.signal.reason)));
  });
  const onSignal = (signal: NodeJS.Signals): void => startUp.abort(signal);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    signal: startUp.signal,
    stopRequested,
    dispose() {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    },
  };
}
