import { OAuthRefused } from '../errors.js';
import type { FormParameters } from './form.js';

// The value rules of the OAuth and OpenID Connect parameters we read, each bounded: what is not
// one of these is refused as invalid_request before anything is looked up.

/** RFC 6749 appendix A: VSCHAR, the characters of state, client_id and client_secret. */
const VSCHAR = /^[\x20-\x7e]+$/;
/** RFC 7636 section 4.1: code_verifier = 43*128unreserved. */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** RFC 7636 section 4.2: an S256 challenge is the base64url of a SHA-256, 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** Our codes: 256 random bits, base64url. */
export const CODE_FORMAT = /^[A-Za-z0-9_-]{43}$/;
/** Our refresh tokens: the grant's id, a dot, 256 random bits. */
export const REFRESH_TOKEN_FORMAT = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

const MAX_STATE_LENGTH = 2048;
const MAX_NONCE_LENGTH = 512;
const MAX_SCOPE_LENGTH = 1024;
const MAX_SCOPE_TOKENS = 32;
const MAX_CLIENT_ID_LENGTH = 128;
const MAX_CLIENT_SECRET_LENGTH = 256;

/** The scopes Gatehouse knows (docs/contract/oidc.md "Discovery"); others are ignored. */
export const SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'] as const;
export type Scope = (typeof SCOPES)[number];

const invalid = (description: string): OAuthRefused => new OAuthRefused('invalid_request', description);

/** A parameter's value when it matches `format` (absent: undefined); else throws invalid_request naming it. */
export function optionalParameter(parameters: FormParameters, name: string, format: RegExp, maxLength: number): string | undefined {
  const value = parameters.get(name);
  if (value === undefined) return undefined;
  if (value.length > maxLength || !format.test(value)) throw invalid(`The ${name} parameter is malformed.`);
  return value;
}

/** As optionalParameter, but throws invalid_request when it is absent. */
export function requiredParameter(parameters: FormParameters, name: string, format: RegExp, maxLength: number): string {
  const value = optionalParameter(parameters, name, format, maxLength);
  if (value === undefined) throw invalid(`The ${name} parameter is missing.`);
  return value;
}

export const readClientId = (parameters: FormParameters): string | undefined =>
  optionalParameter(parameters, 'client_id', VSCHAR, MAX_CLIENT_ID_LENGTH);

export const readClientSecret = (parameters: FormParameters): string | undefined =>
  optionalParameter(parameters, 'client_secret', VSCHAR, MAX_CLIENT_SECRET_LENGTH);

/** `state`: 1 to 2048 VSCHAR, echoed as it came. */
export const readState = (parameters: FormParameters): string | undefined =>
  optionalParameter(parameters, 'state', VSCHAR, MAX_STATE_LENGTH);

/** `nonce`: any text of at most 512 characters without control characters; it is only copied into the id_token. */
export function readNonce(parameters: FormParameters): string | undefined {
  const value = parameters.get('nonce');
  if (value === undefined) return undefined;
  if (value.length > MAX_NONCE_LENGTH || CONTROL.test(value)) throw invalid('The nonce parameter is malformed.');
  return value;
}

/**
 * `scope` (RFC 6749 section 3.3): space-separated tokens of NQCHAR; the known ones among them, in
 * our order. Unknown ones are ignored, as OpenID Connect Core section 3.1.2.1 says.
 */
export function readScopes(text: string | undefined): readonly Scope[] {
  if (text === undefined) return [];
  if (text.length > MAX_SCOPE_LENGTH) throw invalid('The scope parameter is too long.');
  const tokens = text.split(' ').filter((token) => token !== '');
  if (tokens.length > MAX_SCOPE_TOKENS || tokens.some((token) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(token))) {
    throw invalid('The scope parameter is malformed.');
  }
  return SCOPES.filter((scope) => tokens.includes(scope));
}
