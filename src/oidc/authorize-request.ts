import { OAuthRefused } from '../errors.js';
import type { StoredClient } from './clients.js';
import type { FormParameters } from './form.js';
import { MAX_REDIRECT_URI_LENGTH } from './limits.js';
import {
  optionalParameter, readClientId, readNonce, readScopes, readState, S256_CHALLENGE, type Scope,
} from './parameters.js';

// The authorization request (OpenID Connect Core section 3.1.2.1, RFC 6749 section 4.1.1, RFC 7636
// section 4.3) in two steps. First the client and its redirect URI: until both are known good no
// redirect may be made (RFC 6749 section 4.1.2.1), so a failure there is a 400 page. Then the rest,
// whose failures are sent back to that redirect URI.

/** Why the request cannot be sent back to the app: the 400 page says so. */
type NoRedirect = { readonly ok: false; readonly reason: string };

export interface RedirectTarget {
  readonly ok: true;
  readonly client: StoredClient;
  /** Exactly as registered and as sent. */
  readonly redirectUri: string;
  /** Echoed on every redirect; undefined when absent or malformed (then the redirect carries none). */
  readonly state: string | undefined;
}

interface AuthorizeRequest {
  readonly scopes: readonly Scope[];
  readonly nonce: string | undefined;
  /** The S256 PKCE challenge, when one was sent (required of public clients). */
  readonly codeChallenge: string | undefined;
  /** prompt=none: never show a page; prompt=login: a fresh sign-in. */
  readonly prompt: 'none' | 'login' | undefined;
  readonly maxAgeSeconds: number | undefined;
}

const PROMPTS = ['none', 'login', 'consent', 'select_account'];

/** The client and redirect URI of an authorization request, or why the request gets a 400 page. */
export function readRedirectTarget(
  parameters: FormParameters, findClient: (clientId: string) => StoredClient | undefined,
): RedirectTarget | NoRedirect {
  let clientId: string | undefined;
  try {
    clientId = readClientId(parameters);
  } catch {
    return { ok: false, reason: 'The client_id parameter is malformed.' };
  }
  if (clientId === undefined) return { ok: false, reason: 'The request names no app (client_id is missing).' };
  const client = findClient(clientId);
  if (client === undefined) return { ok: false, reason: 'No app with this client_id is registered with Gatehouse.' };
  const redirectUri = parameters.get('redirect_uri');
  // Required (OpenID Connect Core section 3.1.2.1), and compared exactly with the registered ones.
  if (redirectUri === undefined) return { ok: false, reason: 'The request has no redirect_uri.' };
  if (redirectUri.length > MAX_REDIRECT_URI_LENGTH || !client.redirectUris.includes(redirectUri)) {
    return { ok: false, reason: 'The redirect_uri is not one registered for this app.' };
  }
  let state: string | undefined;
  try {
    state = readState(parameters);
  } catch {
    state = undefined;
  }
  return { ok: true, client, redirectUri, state };
}

/** The rest of the request, for a client whose redirect URI is known good; throws OAuthRefused to send back. */
export function readAuthorizeRequest(parameters: FormParameters, client: StoredClient): AuthorizeRequest {
  // Request objects and dynamic registration are not supported (OpenID Connect Core section 6, 3.1.2.6).
  if (parameters.has('request')) throw new OAuthRefused('request_not_supported', 'Request objects are not supported.');
  if (parameters.has('request_uri')) throw new OAuthRefused('request_uri_not_supported', 'request_uri is not supported.');
  if (parameters.has('registration')) throw new OAuthRefused('registration_not_supported', 'Dynamic registration is not supported.');
  if (readState(parameters) === undefined && parameters.has('state')) {
    throw new OAuthRefused('invalid_request', 'The state parameter is malformed.');
  }
  const responseType = parameters.get('response_type');
  if (responseType === undefined) throw new OAuthRefused('invalid_request', 'The response_type parameter is missing.');
  // The authorization code flow only: no implicit or hybrid flow hands a token to the browser.
  if (responseType !== 'code') throw new OAuthRefused('unsupported_response_type', 'Only response_type=code is supported.');
  const responseMode = parameters.get('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') {
    throw new OAuthRefused('invalid_request', 'Only response_mode=query is supported.');
  }
  const scopes = readScopes(parameters.get('scope'));
  if (!scopes.includes('openid')) throw new OAuthRefused('invalid_scope', 'The scope must include openid.');
  const codeChallenge = readCodeChallenge(parameters);
  if (codeChallenge === undefined && client.public === true) {
    throw new OAuthRefused('invalid_request', 'This app is public: it must send a PKCE code_challenge (S256).');
  }
  const maxAge = optionalParameter(parameters, 'max_age', /^[0-9]{1,9}$/, 9);
  return {
    scopes,
    nonce: readNonce(parameters),
    codeChallenge,
    prompt: readPrompt(parameters.get('prompt')),
    maxAgeSeconds: maxAge === undefined ? undefined : Number(maxAge),
  };
}

/** RFC 7636 section 4.3: S256 only; a challenge without a method is `plain`, refused like it. */
function readCodeChallenge(parameters: FormParameters): string | undefined {
  const method = parameters.get('code_challenge_method');
  const challenge = parameters.get('code_challenge');
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthRefused('invalid_request', 'code_challenge_method came without a code_challenge.');
    return undefined;
  }
  if (method !== 'S256') throw new OAuthRefused('invalid_request', 'Only the S256 code_challenge_method is supported.');
  if (!S256_CHALLENGE.test(challenge)) throw new OAuthRefused('invalid_request', 'The code_challenge is not an S256 challenge.');
  return challenge;
}

/** OpenID Connect Core section 3.1.2.1: `none` alone, or any of login, consent, select_account. */
function readPrompt(text: string | undefined): AuthorizeRequest['prompt'] {
  if (text === undefined) return undefined;
  const values = text.split(' ').filter((value) => value !== '');
  if (values.length === 0 || values.length > PROMPTS.length || values.some((value) => !PROMPTS.includes(value))) {
    throw new OAuthRefused('invalid_request', 'The prompt parameter is malformed.');
  }
  if (values.includes('none')) {
    if (values.length > 1) throw new OAuthRefused('invalid_request', 'prompt=none cannot be combined with other values.');
    return 'none';
  }
  // There is no consent screen (the administrator made the client) and one account per session:
  // consent and select_account ask for nothing more.
  return values.includes('login') ? 'login' : undefined;
}
