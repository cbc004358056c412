import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { CONFIGS, nowSeconds } from './api.js';
import { TEST_SECRET, type TestServer } from './server.js';

// Helpers for test/attack: hand-made tokens, raw sockets and streamed bodies, and the
// "does the server still answer normally" check every attack ends with.

export function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A segment: a string is taken as already encoded, anything else is JSON-encoded. */
export function segment(value: unknown): string {
  return typeof value === 'string' ? value : base64url(JSON.stringify(value));
}

export type HmacHash = 'sha256' | 'sha384' | 'sha512';

export function hmacSignature(signingInput: string, key: string | Buffer = TEST_SECRET, hash: HmacHash = 'sha256'): string {
  return createHmac(hash, key).update(signingInput).digest('base64url');
}

/** A compact JWS made by hand: header and payload as objects (or pre-encoded segments), HMAC-signed. */
export function craftToken(header: unknown, payload: unknown, options: { key?: string | Buffer; hash?: HmacHash; signature?: string } = {}): string {
  const signingInput = `${segment(header)}.${segment(payload)}`;
  return `${signingInput}.${options.signature ?? hmacSignature(signingInput, options.key ?? TEST_SECRET, options.hash ?? 'sha256')}`;
}

export const HS256_HEADER = Object.freeze({ alg: 'HS256', typ: 'JWT' });

/** Claims the server would issue right now for `username`. */
export function liveClaims(server: TestServer, username: string): { username: string; iat: number; exp: number } {
  const iat = nowSeconds(server);
  return { username, iat, exp: iat + 7 * 24 * 3600 };
}

/** Lines the server logged at level error: an unexpected exception somewhere. */
export function errorLogLines(server: TestServer): string[] {
  return server.logs.filter((line) => line.includes('"level":"error"'));
}

/** The server still answers normally: the admin's session verifies, no session gives 401 {configs}, nothing was logged as an error. */
export async function assertServerAnswers(server: TestServer, adminToken: string, adminName: string): Promise<void> {
  const ok = await server.request({ path: '/api/auth/verify', token: adminToken });
  assert.equal(ok.status, 200, `verify with the admin token answered ${ok.status} ${ok.text}`);
  assert.equal((ok.json as { username?: unknown }).username, adminName);
  const anonymous = await server.request({ path: '/api/auth/verify' });
  assert.equal(anonymous.status, 401);
  assert.deepEqual(anonymous.json, { configs: CONFIGS });
  assert.deepEqual(errorLogLines(server), []);
}

export interface StreamedResponse {
  readonly status: number | undefined;
  readonly headers: IncomingHttpHeaders | undefined;
  readonly text: string;
  /** ECONNRESET / EPIPE when the server closed the connection under us. */
  readonly error: string | undefined;
  readonly bytesWritten: number;
}

/**
 * Sends a body of `totalBytes` (filled with `fill`) in chunks, honouring back-pressure, and
 * stops writing as soon as a response arrives or the connection fails. `stopAfterBytes` writes
 * only that much and then waits for the answer without ending the request.
 */
export function streamBody(
  port: number,
  options: { method?: string; path: string; headers: Record<string, string>; totalBytes: number; fill?: number; chunkBytes?: number; stopAfterBytes?: number; token?: string },
): Promise<StreamedResponse> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.token !== undefined) headers['cookie'] = `jwt=${options.token}`;
    let written = 0;
    let answered = false;
    let settled = false;
    const settle = (result: Omit<StreamedResponse, 'bytesWritten'>): void => {
      if (settled) return;
      settled = true;
      resolve({ ...result, bytesWritten: written });
    };
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.path, headers, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        settle({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), error: undefined });
        req.destroy();
      });
      res.on('error', () => settle({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), error: 'response aborted' }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => settle({ status: undefined, headers: undefined, text: '', error: e.code ?? e.message }));
    const chunk = Buffer.alloc(options.chunkBytes ?? 64 * 1024, options.fill ?? 0x20);
    const limit = Math.min(options.totalBytes, options.stopAfterBytes ?? options.totalBytes);
    const pump = (): void => {
      while (!answered && !req.destroyed && written < limit) {
        const piece = chunk.subarray(0, Math.min(chunk.length, limit - written));
        written += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered && !req.destroyed && options.stopAfterBytes === undefined) req.end();
      else if (options.stopAfterBytes !== undefined) req.flushHeaders();
    };
    pump();
  });
}

/** Percent-encodes everything outside the unreserved set, so any token can ride in ?token=. */
export function queryValue(value: string): string {
  return encodeURIComponent(value);
}
