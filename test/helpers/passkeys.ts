// Passkey ceremonies over HTTP for API tests: ask the server for options, answer them with a
// SoftAuthenticator, send the response.
import assert from 'node:assert/strict';
import type { TestResponse, TestServer } from './server.js';
import { SoftAuthenticator, type CreateOverrides, type CreationOptionsLike, type GetOverrides, type RequestOptionsLike } from './soft-authenticator.js';

/** The Host the tests' "browser" uses, and the origin its pages have. */
export const HOST = 'localhost:3000';
export const ORIGIN = 'http://localhost:3000';
export const HEADERS = Object.freeze({ host: HOST });

export function newAuthenticator(options: ConstructorParameters<typeof SoftAuthenticator>[0] = {}): SoftAuthenticator {
  return new SoftAuthenticator({ origin: ORIGIN, ...options });
}

export async function creationOptions(server: TestServer, token: string, headers: Record<string, string> = HEADERS): Promise<CreationOptionsLike & Record<string, unknown>> {
  const res = await server.request({ method: 'POST', path: '/api/auth/account/passkeys/options', token, headers, body: {} });
  assert.equal(res.status, 200, res.text);
  return res.json as CreationOptionsLike & Record<string, unknown>;
}

/**
 * Registers `authenticator` on the account of `token`, whose current password is `password` (a passkey
 * is a way in); returns the answer (200 {id, name} + a new cookie).
 */
export async function addPasskey(
  server: TestServer,
  token: string,
  password: string,
  authenticator: SoftAuthenticator,
  options: { name?: string; overrides?: CreateOverrides; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const headers = options.headers ?? HEADERS;
  const creation = await creationOptions(server, token, headers);
  const credential = authenticator.create(creation, options.overrides);
  return server.request({ method: 'POST', path: '/api/auth/account/passkeys', token, headers, body: { name: options.name ?? 'laptop', credential, password } });
}

export async function requestOptions(server: TestServer, username?: string, headers: Record<string, string> = HEADERS): Promise<RequestOptionsLike & Record<string, unknown>> {
  const res = await server.request({ method: 'POST', path: '/api/auth/passkey/options', headers, body: username === undefined ? {} : { username } });
  assert.equal(res.status, 200, res.text);
  return res.json as RequestOptionsLike & Record<string, unknown>;
}

/** Signs in with `authenticator` (a discoverable credential unless `username` is given). */
export async function signIn(
  server: TestServer,
  authenticator: SoftAuthenticator,
  options: { username?: string; overrides?: GetOverrides; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const headers = options.headers ?? HEADERS;
  const request = await requestOptions(server, options.username, headers);
  return server.request({ method: 'POST', path: '/api/auth/passkey', headers, body: { credential: authenticator.get(request, options.overrides) } });
}
