// What the proxies suite's tests do through a proxy: register and log in users, keep cookies as a
// browser does, read an event stream. Requests go to 127.0.0.1 only, each bounded in time.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { CLIENT_SETTINGS, type ServeProcess } from '../../helpers/process.js';
import type { HomeSite } from '../../helpers/proxies.js';
import { sendRequest, type RequestOptions, type TestResponse } from '../../helpers/server.js';

export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
export const API_ACCEPT = 'application/json, text/plain, */*';

let counter = 0;

/** A username unique in this process. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** One request to the proxy (Accept: application/json unless the headers say otherwise). */
export function viaProxy(port: number, options: RequestOptions): Promise<TestResponse> {
  return sendRequest(port, options);
}

export interface ProxyUser {
  readonly username: string;
  readonly password: string;
  readonly token: string;
}

/** One request to Gatehouse's own site on the stack's proxy, with its Host. */
export function viaHome(home: HomeSite, options: RequestOptions): Promise<TestResponse> {
  return sendRequest(home.port, { ...options, headers: { host: home.host, ...options.headers } });
}

/**
 * Registers through /api/auth/register on Gatehouse's own site on the proxy (a Flood origin's
 * port works too): the first user without a token, later ones as `adminToken`.
 */
export async function registerVia(site: HomeSite | number, options: { username?: string; level: 'ADMINISTRATOR' | 'USER'; adminToken?: string }): Promise<ProxyUser> {
  const username = options.username ?? uniqueName(options.level === 'ADMINISTRATOR' ? 'admin' : 'user');
  const password = `${username}-password-9q`;
  const request: RequestOptions = {
    method: 'POST',
    path: '/api/auth/register',
    body: { username, password, client: CLIENT_SETTINGS, level: options.level },
    ...(options.adminToken === undefined ? {} : { token: options.adminToken }),
  };
  const res = typeof site === 'number' ? await viaProxy(site, request) : await viaHome(site, request);
  assert.equal(res.status, 200, `register ${username} through the proxy: ${res.status} ${res.text}`);
  assert.ok(res.cookieToken !== undefined && res.cookieToken !== '', 'register sets the jwt cookie through the proxy');
  return { username, password, token: res.cookieToken };
}

/**
 * Cookies as a browser keeps them for one origin: Set-Cookie lines are applied (an empty value or
 * Max-Age=0 removes), and `header()` is what the next request sends.
 */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  apply(res: TestResponse): void {
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair = '', ...attributes] = line.split(';');
      const equals = pair.indexOf('=');
      if (equals <= 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      const isExpired = attributes.some((attribute) => /^\s*max-age\s*=\s*(0|-\d+)\s*$/i.test(attribute));
      if (isExpired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  /** Extra headers for the next request: a Cookie header when the jar holds any. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    if (this.#cookies.size === 0) return extra;
    return { ...extra, cookie: [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }
}

export interface StreamReading {
  readonly status: number;
  readonly contentType: string | undefined;
  /** When each event arrived, in ms after the answer's headers. */
  readonly eventTimesMs: number[];
  /** True if the stream was still open when the reading ended. */
  readonly wasOpen: boolean;
}

/** Reads an event stream for `durationMs`, then hangs up; rejects if nothing answers within 10 s. */
export function readEventStream(port: number, path: string, headers: Record<string, string>, durationMs: number): Promise<StreamReading> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      const started = Date.now();
      const eventTimesMs: number[] = [];
      let wasOpen = true;
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        const events = buffered.split('\n\n');
        buffered = events.pop() ?? '';
        for (const event of events) if (event.includes('data:')) eventTimesMs.push(Date.now() - started);
      });
      res.once('end', () => (wasOpen = false));
      res.once('close', () => (wasOpen = false));
      res.on('error', () => undefined);
      const timer = setTimeout(() => {
        const reading = { status: res.statusCode ?? 0, contentType: res.headers['content-type'], eventTimesMs, wasOpen };
        req.destroy();
        resolve(reading);
      }, durationMs);
      if (res.statusCode !== 200) {
        clearTimeout(timer);
        res.resume();
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], eventTimesMs, wasOpen: false });
      }
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer from ${path} within 10 s`)));
    req.on('error', (error) => reject(error));
    req.end();
  });
}

export interface Echo {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | undefined>;
  readonly bodyBytes: number;
  readonly bodySha256: string;
}

/** The upstream's echo of a request: what it received, the body as its length and SHA-256. */
export function echoOf(res: TestResponse): Echo {
  assert.equal(res.status, 200, res.text);
  const echo = res.json as Echo | undefined;
  assert.ok(echo !== undefined && typeof echo.url === 'string', `the upstream answered: ${res.text.slice(0, 300)}`);
  return echo;
}

/** One answer from Gatehouse's request log. */
export interface Answered {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** Gatehouse's request log from line `from` on (up to `to`), for paths under /api/auth/, /gatehouse/ and /logout (not the gate's checks nor the probe). */
export function answeredSince(gatehouse: ServeProcess, from: number, to?: number): Answered[] {
  return gatehouse.stdoutLines.slice(from, to).flatMap((line) => {
    let record: { msg?: unknown; method?: unknown; path?: unknown; status?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      return [];
    }
    if (record.msg !== 'request' || typeof record.path !== 'string' || typeof record.method !== 'string' || typeof record.status !== 'number') return [];
    // The gate's checks, and the probe (loggedSoFar's marker).
    const isGate = record.path === '/api/auth/forward' || record.path === '/api/auth/verify' || record.path === '/api/auth/probe';
    const isGatehouse = record.path.startsWith('/api/auth/') || record.path.startsWith('/gatehouse/') || record.path === '/logout';
    return isGatehouse && !isGate ? [{ method: record.method, path: record.path, status: record.status }] : [];
  });
}

/** Waits until Gatehouse has logged `count` such answers since `from` (its log is written in batches). */
export async function waitForAnswers(gatehouse: ServeProcess, from: number, count: number): Promise<Answered[]> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const answered = answeredSince(gatehouse, from);
    if (answered.length >= count) return answered;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`Gatehouse logged ${JSON.stringify(answeredSince(gatehouse, from))}, expected ${count} answers\n${gatehouse.stderr().slice(-2_000)}`);
}

/** Answers as `METHOD PATH STATUS`, sorted. */
export const sortedAnswers = (answers: readonly Answered[]): string[] => answers.map((answer) => `${answer.method} ${answer.path} ${answer.status}`).sort();

/**
 * How many lines Gatehouse has logged once every answer given so far is among them (its log is
 * written in batches): the probe is asked on its own site, and waited for in the log.
 */
export async function loggedSoFar(gatehouse: ServeProcess, home: HomeSite): Promise<number> {
  const from = gatehouse.stdoutLines.length;
  const marker = await viaHome(home, { path: '/api/auth/probe' });
  assert.equal(marker.status, 200, marker.text);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const index = gatehouse.stdoutLines.findIndex((line, at) => at >= from && line.includes('"/api/auth/probe"'));
    if (index >= 0) return index + 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`Gatehouse never logged the probe asked at ${home.origin}`);
}
