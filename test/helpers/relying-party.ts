// A relying party written for the tests, independent of src/oidc: it reads discovery, builds
// authorization requests (state, nonce, PKCE S256), follows Gatehouse's answer, exchanges the code
// (client_secret_basic, client_secret_post or none), verifies the id_token against the JWKS with
// node:crypto alone, and calls userinfo; everything over real HTTP.
import assert from 'node:assert/strict';
import { createHash, createPublicKey, randomBytes, verify as verifySignature, type JsonWebKey } from 'node:crypto';
import type { TestResponse, TestServer } from './server.js';

export interface Discovery {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly userinfo_endpoint: string;
  readonly jwks_uri: string;
  readonly end_session_endpoint: string;
  readonly revocation_endpoint: string;
  readonly [key: string]: unknown;
}

export interface RegisteredClient {
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly redirectUri: string;
}

export interface AuthorizationAttempt {
  readonly url: string;
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string | undefined;
}

/** The path and query of an absolute URL of the test server (requests go to it by path). */
export const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** Registers a client through POST /api/auth/clients as `adminToken`. */
export async function registerClient(
  server: TestServer, adminToken: string, fields: Record<string, unknown> & { redirectUris: string[] },
): Promise<RegisteredClient> {
  const response = await server.request({ method: 'POST', path: '/api/auth/clients', token: adminToken, body: { name: `app-${randomBytes(4).toString('hex')}`, ...fields } });
  assert.equal(response.status, 200, response.text);
  const body = response.json as { clientId: string; clientSecret?: string };
  return { ...body, redirectUri: fields.redirectUris[0] ?? '' };
}

export async function discover(server: TestServer, basePath = ''): Promise<Discovery> {
  const response = await server.request({ path: `${basePath}/.well-known/openid-configuration` });
  assert.equal(response.status, 200, response.text);
  return response.json as Discovery;
}

/** An authorization request URL with fresh state and nonce, and PKCE unless `pkce: false`. */
export function authorizationRequest(
  discovery: Discovery, client: RegisteredClient, options: { scope?: string; pkce?: boolean; extra?: Record<string, string> } = {},
): AuthorizationAttempt {
  const state = randomBytes(12).toString('base64url');
  const nonce = randomBytes(12).toString('base64url');
  const verifier = options.pkce === false ? undefined : randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: options.scope ?? 'openid profile email groups',
    state,
    nonce,
    ...(verifier === undefined ? {} : { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' }),
    ...options.extra,
  });
  return { url: `${discovery.authorization_endpoint}?${query.toString()}`, state, nonce, verifier };
}

/** GET the authorization URL with the session cookie `token` (or none); the 303's Location resolved. */
export async function followAuthorization(server: TestServer, attempt: AuthorizationAttempt, token?: string): Promise<{ response: TestResponse; location: URL }> {
  const response = await server.request({ path: pathOf(attempt.url), ...(token === undefined ? {} : { token }), headers: { accept: 'text/html' } });
  assert.equal(response.status, 303, `authorize answered ${response.status}: ${response.text.slice(0, 300)}`);
  return { response, location: new URL(String(response.headers.location), attempt.url) };
}

/** The callback's parameters, after checking the state and the issuer (RFC 9207). */
export function callbackOf(location: URL, attempt: AuthorizationAttempt, discovery: Discovery): URLSearchParams {
  const parameters = location.searchParams;
  assert.equal(parameters.get('state'), attempt.state);
  assert.equal(parameters.get('iss'), discovery.issuer);
  return parameters;
}

export type ClientAuthentication = 'basic' | 'post' | 'none';

/** POST to the token endpoint as `client`, authenticated as `how`. */
export function tokenRequest(
  server: TestServer, discovery: Discovery, client: RegisteredClient, fields: Record<string, string>, how: ClientAuthentication = 'basic',
): Promise<TestResponse> {
  const form = new URLSearchParams(fields);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (how === 'basic') {
    const credentials = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret ?? '')}`;
    headers['authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`;
  } else {
    form.set('client_id', client.clientId);
    if (how === 'post') form.set('client_secret', client.clientSecret ?? '');
  }
  return server.request({ method: 'POST', path: pathOf(discovery.token_endpoint), headers, body: form.toString() });
}

export function exchangeCode(
  server: TestServer, discovery: Discovery, client: RegisteredClient, code: string, attempt: AuthorizationAttempt, how: ClientAuthentication = 'basic',
): Promise<TestResponse> {
  return tokenRequest(server, discovery, client, {
    grant_type: 'authorization_code', code, redirect_uri: client.redirectUri,
    ...(attempt.verifier === undefined ? {} : { code_verifier: attempt.verifier }),
  }, how);
}

export interface TokenSet {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly id_token: string;
  readonly refresh_token?: string;
  readonly scope: string;
}

/** Signs in through the whole flow as the holder of `sessionToken`; returns the token set and the checked id_token claims. */
export async function signInThrough(
  server: TestServer, discovery: Discovery, client: RegisteredClient, sessionToken: string,
  options: { scope?: string; pkce?: boolean; how?: ClientAuthentication } = {},
): Promise<{ tokens: TokenSet; claims: Record<string, unknown>; attempt: AuthorizationAttempt }> {
  const attempt = authorizationRequest(discovery, client, options);
  const { location } = await followAuthorization(server, attempt, sessionToken);
  const code = callbackOf(location, attempt, discovery).get('code');
  assert.ok(code !== null, `no code in ${location.href}`);
  const response = await exchangeCode(server, discovery, client, code, attempt, options.how ?? (client.clientSecret === undefined ? 'none' : 'basic'));
  assert.equal(response.status, 200, response.text);
  assert.equal(response.headers['cache-control'], 'no-store');
  const tokens = response.json as TokenSet;
  const claims = await verifyIdToken(server, discovery, tokens.id_token, client.clientId, attempt.nonce);
  return { tokens, claims, attempt };
}

/**
 * The id_token's claims after the checks of OpenID Connect Core section 3.1.3.7: the JWKS key named
 * by kid, whose alg the header must name, the signature, iss, aud, azp, exp, iat and the nonce.
 */
export async function verifyIdToken(
  server: TestServer, discovery: Discovery, idToken: string, clientId: string, nonce: string | undefined,
): Promise<Record<string, unknown>> {
  const [headerPart = '', payloadPart = '', signaturePart = ''] = idToken.split('.');
  const header = JSON.parse(Buffer.from(headerPart, 'base64url').toString()) as { alg: string; kid: string; typ?: string };
  const jwks = (await server.request({ path: pathOf(discovery.jwks_uri) })).json as { keys: Array<JsonWebKey & { kid: string; alg: string }> };
  const jwk = jwks.keys.find((key) => key.kid === header.kid);
  assert.ok(jwk !== undefined, `no key ${header.kid} in the JWKS`);
  assert.equal(header.alg, jwk.alg);
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  const options = header.alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
  assert.ok(verifySignature('sha256', Buffer.from(`${headerPart}.${payloadPart}`), options, Buffer.from(signaturePart, 'base64url')), 'the id_token signature does not verify');
  const claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString()) as Record<string, unknown>;
  assert.equal(claims['iss'], discovery.issuer);
  assert.equal(claims['aud'], clientId);
  assert.equal(claims['azp'], clientId);
  const now = Math.floor(server.clock.now() / 1000);
  assert.ok(typeof claims['exp'] === 'number' && claims['exp'] > now && claims['exp'] <= now + 3600);
  assert.ok(typeof claims['iat'] === 'number' && Math.abs(claims['iat'] - now) <= 5);
  assert.equal(claims['nonce'], nonce);
  return claims;
}

export function userinfo(server: TestServer, discovery: Discovery, accessToken: string): Promise<TestResponse> {
  return server.request({ path: pathOf(discovery.userinfo_endpoint), headers: { authorization: `Bearer ${accessToken}` } });
}
