import { OAuthRefused } from '../errors.js';
import { decodeUtf8Strict } from '../validate/utf8.js';
import { decodeFormComponent, type FormParameters } from './form.js';
import { MAX_REDIRECT_URI_LENGTH } from './limits.js';
import {
  CODE_FORMAT, CODE_VERIFIER, optionalParameter, readClientId, readClientSecret, readScopes, REFRESH_TOKEN_FORMAT,
  requiredParameter, type Scope,
} from './parameters.js';

// The token request (RFC 6749 sections 4.1.3 and 6, RFC 7636 section 4.5) and the client's credentials
// (RFC 6749 section 2.3.1): client_secret_basic, client_secret_post, or none for a public client.

export type TokenRequest =
  | {
      readonly grant: 'authorization_code';
      readonly code: string;
      readonly redirectUri: string;
      readonly codeVerifier: string | undefined;
    }
  | {
      readonly grant: 'refresh_token';
      readonly refreshToken: string;
      /** A narrower scope asked for (RFC 6749 section 6); undefined: the grant's. */
      readonly scopes: readonly Scope[] | undefined;
    };

export interface ClientCredentials {
  readonly clientId: string;
  /** Undefined for a client that sent none (a public client, or one that will be refused). */
  readonly secret: string | undefined;
  /** Whether the Authorization header carried them: a refusal then answers with WWW-Authenticate (section 5.2). */
  readonly isBasic: boolean;
}

// "Basic " and the base64 of a client id and secret of at most 128 and 256 characters, escaped.
const MAX_BASIC_LENGTH = 6 + Math.ceil(((128 + 256) * 3 + 1) / 3) * 4;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The grant and its parameters; throws OAuthRefused (invalid_request, unsupported_grant_type, invalid_scope). */
export function readTokenRequest(parameters: FormParameters): TokenRequest {
  const grantType = parameters.get('grant_type');
  if (grantType === undefined) throw new OAuthRefused('invalid_request', 'The grant_type parameter is missing.');
  if (grantType === 'authorization_code') {
    return {
      grant: grantType,
      code: requiredParameter(parameters, 'code', CODE_FORMAT, 43),
      // Required: every authorization request of ours carried one (RFC 6749 section 4.1.3).
      redirectUri: requiredParameter(parameters, 'redirect_uri', /^[\x21-\x7e]+$/, MAX_REDIRECT_URI_LENGTH),
      codeVerifier: optionalParameter(parameters, 'code_verifier', CODE_VERIFIER, 128),
    };
  }
  if (grantType === 'refresh_token') {
    const scope = parameters.get('scope');
    return {
      grant: grantType,
      refreshToken: requiredParameter(parameters, 'refresh_token', REFRESH_TOKEN_FORMAT, 66),
      scopes: scope === undefined ? undefined : readScopes(scope),
    };
  }
  // The password and client credentials grants, and the implicit flow's, are not offered.
  throw new OAuthRefused('unsupported_grant_type', 'Only the authorization_code and refresh_token grants are supported.');
}

/**
 * Who the client says it is: the Authorization header (Basic), or client_id and client_secret in
 * the body; never both (RFC 6749 section 2.3). Throws OAuthRefused: invalid_client for a header
 * that is not one, invalid_request for two methods or no client_id.
 */
export function readClientCredentials(parameters: FormParameters, authorization: string | undefined): ClientCredentials {
  const bodyId = readClientId(parameters);
  // An empty client_secret is treated as absent (RFC 6749 section 3.1), as a public client may send it.
  const bodySecret = readClientSecret(parameters);
  if (authorization === undefined) {
    if (bodyId === undefined) throw new OAuthRefused('invalid_client', 'The client did not say who it is (client_id).');
    return { clientId: bodyId, secret: bodySecret, isBasic: false };
  }
  const basic = readBasic(authorization);
  if (basic === undefined) throw new OAuthRefused('invalid_client', 'The Authorization header is not client_secret_basic.');
  if (bodySecret !== undefined) throw new OAuthRefused('invalid_request', 'The client used two authentication methods.');
  if (bodyId !== undefined && bodyId !== basic.clientId) throw new OAuthRefused('invalid_request', 'The client_id does not match the Authorization header.');
  return { ...basic, isBasic: true };
}

/** RFC 6749 section 2.3.1: base64 of the form-encoded id, a colon, the form-encoded secret. */
function readBasic(header: string): { clientId: string; secret: string } | undefined {
  if (header.length > MAX_BASIC_LENGTH || !/^Basic /i.test(header)) return undefined;
  const encoded = header.slice(6).trim();
  if (!BASE64.test(encoded)) return undefined;
  const text = decodeUtf8Strict(Buffer.from(encoded, 'base64'));
  const colon = text?.indexOf(':') ?? -1;
  if (text === undefined || colon < 1) return undefined;
  const clientId = decodeFormComponent(text.slice(0, colon));
  const secret = decodeFormComponent(text.slice(colon + 1));
  const isVisible = (value: string | undefined): value is string => value !== undefined && /^[\x20-\x7e]{1,256}$/.test(value);
  return isVisible(clientId) && isVisible(secret) ? { clientId, secret } : undefined;
}
