import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { StoreFileSystem } from '../../src/store/file-system.js';

export const TEST_SECRET = 'test-secret-that-is-at-least-32-characters-long';
export const CLIENT_SETTINGS = Object.freeze({ client: 'rTorrent', type: 'socket', version: 1, socket: '/run/rtorrent.sock' });

export interface TestClock {
  now(): number;
  advanceSeconds(seconds: number): void;
}

export interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly clock: TestClock;
  readonly running: RunningServer;
  /** Every log line written so far (stdout and stderr); reading it flushes the logger's batch first. */
  readonly logs: string[];
  request(options: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  readonly method?: string;
  /** Sent exactly as given: no URL normalization. */
  readonly path: string;
  /** An object or array is sent as JSON; a string or Buffer as is. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Token for the `jwt` cookie. */
  readonly token?: string;
  /** A keep-alive agent for tests that send thousands of requests; by default a connection per request. */
  readonly agent?: Agent;
  /** Aborting it destroys the request: the server sees its client leave. */
  readonly signal?: AbortSignal;
  /** How long the answer may take before the request fails (10 s by default). */
  readonly timeoutMs?: number;
}

export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: unknown;
  /** The `jwt` cookie's value from Set-Cookie, if any. */
  readonly cookieToken: string | undefined;
}

/**
 * Starts the real server on 127.0.0.1, port 0, a fresh temp data directory, a fixed secret,
 * a cheap scrypt cost and a clock the test moves. `settings` are GATEHOUSE_* values. With
 * GATEHOUSE_PUBLIC_URL, `request` sends that URL's host as `Host` unless the test sends its own.
 */
export async function startTestServer(settings: Record<string, string> = {}, options: { fileSystem?: StoreFileSystem; dataDir?: string } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'gatehouse-test-')));
  const values: Record<string, string> = {
    GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_PORT: '0',
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_SECRET: TEST_SECRET,
    GATEHOUSE_SCRYPT: '1024,8,1',
    GATEHOUSE_LOG_LEVEL: 'info',
    ...settings,
  };
  let nowMs = Date.now();
  const clock: TestClock = {
    now: () => nowMs,
    advanceSeconds: (seconds) => {
      nowMs += seconds * 1000;
    },
  };
  const logs: string[] = [];
  const sink = { write: (text: string) => logs.push(...text.split('\n').filter((line) => line !== '')) };
  let running: RunningServer;
  let logger: Logger;
  try {
    const config = buildConfig((spec) => values[spec.env]);
    logger = createLogger({ level: config.logLevel, format: config.logFormat, stdout: sink, stderr: sink, now: clock.now });
    running = await startServer(config, { logger, now: clock.now, ...(options.fileSystem === undefined ? {} : { fileSystem: options.fileSystem }) });
  } catch (error) {
    // A test that expects start-up to be refused gets no server to close: the directory made
    // for it goes here, or every such test leaves one behind in the temp directory.
    if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  // With --public-url, Gatehouse's own origin is that URL's alone (docs/contract/own-origin.md): a request
  // carries its host, as a browser at that URL and a proxy in front send it, unless the test names another.
  const publicUrl = values['GATEHOUSE_PUBLIC_URL'];
  const homeHost = publicUrl === undefined || publicUrl === '' ? undefined : new URL(publicUrl).host;
  return {
    url: running.url,
    port: running.port,
    dataDir,
    clock,
    running,
    get logs() {
      logger.flush();
      return logs;
    },
    request: (requestOptions) => sendRequest(running.port, homeHost === undefined
      ? requestOptions
      : { ...requestOptions, headers: { host: homeHost, ...requestOptions.headers } }),
    async close() {
      await running.close();
      if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function sendRequest(port: number, options: RequestOptions): Promise<TestResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.isBuffer(options.body) ? options.body : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    headers['content-type'] ??= 'application/json';
    headers['content-length'] ??= String(payload.length);
  }
  if (options.token !== undefined) headers['cookie'] = `jwt=${options.token}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 10_000, ...(options.signal === undefined ? {} : { signal: options.signal }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, cookieToken: cookieTokenOf(res.headers) });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`request ${options.path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function cookieTokenOf(headers: IncomingHttpHeaders): string | undefined {
  for (const line of headers['set-cookie'] ?? []) {
    const match = /^jwt=([^;]*)/.exec(line);
    if (match !== null) return match[1];
  }
  return undefined;
}

/** Registers a user through the API; the first one needs no token. Returns that user's session token. */
export async function registerUser(server: TestServer, username: string, options: { password?: string; level?: number | string; asToken?: string } = {}): Promise<string> {
  const res = await server.request({
    method: 'POST',
    path: '/api/auth/register',
    body: { username, password: options.password ?? `${username}-password`, client: CLIENT_SETTINGS, level: options.level ?? 10 },
    ...(options.asToken === undefined ? {} : { token: options.asToken }),
  });
  if (res.status !== 200 || res.cookieToken === undefined) throw new Error(`register ${username} answered ${res.status} ${res.text}`);
  return res.cookieToken;
}
