// Shared helpers for the black-box API tests in test/api: unique names, users made over HTTP,
// and the assertions every endpoint shares (error body shape, cookie lines).
import assert from 'node:assert/strict';
import { createTokenCodec } from '../../src/auth/jwt.js';
import { registerUser, TEST_SECRET, startTestServer, type RequestOptions, type TestResponse, type TestServer } from './server.js';

export const CONFIGS = Object.freeze({ authMethod: 'default', pollInterval: 2000 });
export const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;
export const CLEARED_COOKIE = 'jwt=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict';

let counter = 0;

/** A username no other test in this process uses. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

export interface TestUser {
  readonly username: string;
  readonly password: string;
  readonly level: number | string;
  /** The session cookie the registration handed out. */
  readonly token: string;
}

/** Starts a server and registers its first user, an administrator; tests make their own users under it. */
export async function startPopulatedServer(settings: Record<string, string> = {}): Promise<{ server: TestServer; root: TestUser }> {
  const server = await startTestServer(settings);
  try {
    const root = await createUser(server, undefined, { prefix: 'root', level: 10 });
    return { server, root };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** Starts a server, runs `use`, and always closes it. */
export async function withServer<T>(use: (server: TestServer) => Promise<T>, settings: Record<string, string> = {}): Promise<T> {
  const server = await startTestServer(settings);
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}

/** Registers a user through POST /api/auth/register (as `adminToken`, or as the first user when undefined). */
export async function createUser(
  server: TestServer,
  adminToken: string | undefined,
  options: { prefix?: string; username?: string; password?: string; level?: number | string } = {},
): Promise<TestUser> {
  const username = options.username ?? uniqueName(options.prefix ?? 'user');
  const password = options.password ?? `${username}-secret-pw`;
  const level = options.level ?? 5;
  const token = await registerUser(server, username, { password, level, ...(adminToken === undefined ? {} : { asToken: adminToken }) });
  return { username, password, level, token };
}

export function createAdmin(server: TestServer, adminToken: string, options: { prefix?: string; level?: number | string } = {}): Promise<TestUser> {
  return createUser(server, adminToken, { prefix: options.prefix ?? 'admin', level: options.level ?? 10 });
}

export function login(server: TestServer, username: string, password: string, headers?: Record<string, string>): Promise<TestResponse> {
  return server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username, password }, ...(headers === undefined ? {} : { headers }) });
}

export function verify(server: TestServer, token: string | undefined): Promise<TestResponse> {
  return server.request({ path: '/api/auth/verify', ...(token === undefined ? {} : { token }) });
}

export function listUsers(server: TestServer, token: string | undefined): Promise<TestResponse> {
  return server.request({ path: '/api/auth/users', ...(token === undefined ? {} : { token }) });
}

export function updateUser(server: TestServer, token: string | undefined, username: string, body: unknown): Promise<TestResponse> {
  return server.request({ method: 'PATCH', path: `/api/auth/users/${encodeURIComponent(username)}`, body, ...(token === undefined ? {} : { token }) });
}

export function deleteUser(server: TestServer, token: string | undefined, username: string): Promise<TestResponse> {
  return server.request({ method: 'DELETE', path: `/api/auth/users/${encodeURIComponent(username)}`, ...(token === undefined ? {} : { token }) });
}

export function register(server: TestServer, body: unknown, options: { token?: string; query?: string } = {}): Promise<TestResponse> {
  const request: RequestOptions = {
    method: 'POST',
    path: `/api/auth/register${options.query ?? ''}`,
    body,
    ...(options.token === undefined ? {} : { token: options.token }),
  };
  return server.request(request);
}

/** Asserts the session is live: verify answers 200 for that username. */
export async function assertTokenWorks(server: TestServer, token: string, username: string): Promise<void> {
  const res = await verify(server, token);
  assert.equal(res.status, 200, `expected the token of ${username} to work, verify said ${res.status} ${res.text}`);
  assert.equal((res.json as { username?: unknown }).username, username);
}

/** Asserts the session is refused: verify answers 401 with exactly {configs}. */
export async function assertTokenRefused(server: TestServer, token: string): Promise<void> {
  const res = await verify(server, token);
  assert.equal(res.status, 401, `expected the token to be refused, verify said ${res.status} ${res.text}`);
  assert.deepEqual(res.json, { configs: CONFIGS });
}

/** The JSON content type every answer carries. */
export function assertJsonContentType(res: TestResponse): void {
  assert.match(String(res.headers['content-type']), /^application\/json(;|$)/);
}

/** Asserts status and an error body of exactly {code, message} (docs/contract/flood-api.md "Responses", any error), JSON, and no Set-Cookie. */
export function assertError(res: TestResponse, status: number, code?: string): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status} ${res.text}`);
  assertJsonContentType(res);
  assert.ok(typeof res.json === 'object' && res.json !== null && !Array.isArray(res.json), `error body is not an object: ${res.text}`);
  const body = res.json as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);
  assert.equal(typeof body['code'], 'string');
  assert.match(body['code'] as string, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  assert.equal(typeof body['message'], 'string');
  assert.notEqual(body['message'], '');
  if (code !== undefined) assert.equal(body['code'], code);
  assertNoCookie(res);
}

export function assertNoCookie(res: TestResponse): void {
  assert.equal(res.headers['set-cookie'], undefined, `expected no Set-Cookie, got ${JSON.stringify(res.headers['set-cookie'])}`);
}

/**
 * Asserts exactly one Set-Cookie line of the session form (docs/contract/flood-api.md "Tokens and cookies"),
 * with Expires seven days after the server's clock, and returns the token.
 */
export function assertSessionCookie(res: TestResponse, server: TestServer): string {
  const lines = res.headers['set-cookie'];
  assert.ok(lines !== undefined && lines.length === 1, `expected one Set-Cookie line, got ${JSON.stringify(lines)}`);
  const line = lines[0] ?? '';
  const expires = new Date(server.clock.now() + TOKEN_TTL_SECONDS * 1000).toUTCString();
  const match = /^jwt=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+); (.*)$/.exec(line);
  assert.ok(match !== null, `not a jwt cookie line: ${line}`);
  assert.equal(match[2], `Path=/; Max-Age=${TOKEN_TTL_SECONDS}; Expires=${expires}; HttpOnly; SameSite=Strict`);
  return match[1] ?? '';
}

/** The claims of a JWS compact token, read without checking it. */
export function claimsOf(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Signs a token with the test server's secret (or another one), as a peer service would. */
export function signToken(claims: Record<string, unknown> & { username: string; iat: number; exp: number }, secret: string = TEST_SECRET): string {
  return createTokenCodec(Buffer.from(secret)).sign(claims);
}

/** The server clock in whole seconds. */
export function nowSeconds(server: TestServer): number {
  return Math.floor(server.clock.now() / 1000);
}
