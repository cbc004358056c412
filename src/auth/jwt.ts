import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { TokenInvalid } from '../errors.js';
import { isPlainObject } from '../validate/check.js';

export interface SessionClaims {
  readonly username: string;
  readonly iat: number;
  readonly exp: number;
}

export interface TokenCodec {
  /** Signs `claims` (plus any extra claims) as an HS256 JWS compact token. */
  sign(claims: SessionClaims & Readonly<Record<string, unknown>>): string;
  /** Returns the claims of a token this secret signed and that is live at `nowSeconds`; throws TokenInvalid otherwise. */
  verify(token: string, nowSeconds: number): SessionClaims;
}

// Far above any token we issue; stops a 100 KB cookie from costing an HMAC over 100 KB.
export const MAX_TOKEN_LENGTH = 4096;
// Tolerance for `iat` slightly ahead of our clock (a token from a peer with a fast clock).
export const IAT_SKEW_SECONDS = 60;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const OUR_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** Creates a signer/verifier bound to one secret (at least 32 bytes). */
export function createTokenCodec(secret: Buffer): TokenCodec {
  if (secret.length < 32) throw new TypeError('the token secret must be at least 32 bytes');
  const key: KeyObject = createSecretKey(secret);
  const mac = (signingInput: string): string => createHmac('sha256', key).update(signingInput).digest('base64url');

  return {
    sign(claims) {
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      const signingInput = `${OUR_HEADER}.${payload}`;
      return `${signingInput}.${mac(signingInput)}`;
    },

    verify(token, nowSeconds) {
      // RFC 7515 section 7.1 (compact form): exactly three base64url segments.
      if (token.length > MAX_TOKEN_LENGTH) throw new TokenInvalid('too long');
      const firstDot = token.indexOf('.');
      const secondDot = token.indexOf('.', firstDot + 1);
      if (firstDot < 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) !== -1) throw new TokenInvalid('segments');
      const headerSegment = token.slice(0, firstDot);
      const payloadSegment = token.slice(firstDot + 1, secondDot);
      const signatureSegment = token.slice(secondDot + 1);

      // RFC 8725 section 3.1: the algorithm is ours to choose, never the token's.
      if (headerSegment !== OUR_HEADER) checkHeader(decodeJsonSegment(headerSegment, 'header'));

      // The expected MAC in canonical base64url; comparing encodings in constant time also
      // refuses non-canonical spellings of the same bytes.
      const expected = Buffer.from(mac(token.slice(0, secondDot)), 'latin1');
      const received = Buffer.from(signatureSegment, 'latin1');
      if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
        throw new TokenInvalid('signature');
      }

      const payload = decodeJsonSegment(payloadSegment, 'payload');
      const exp = payload['exp'];
      const iat = payload['iat'];
      const username = payload['username'];
      // RFC 7519 section 4.1.4: not accepted on or after exp.
      if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new TokenInvalid('exp missing');
      if (nowSeconds >= exp) throw new TokenInvalid('expired');
      if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new TokenInvalid('iat missing');
      if (iat > nowSeconds + IAT_SKEW_SECONDS) throw new TokenInvalid('iat in the future');
      if (typeof username !== 'string') throw new TokenInvalid('username');
      return { username, iat, exp };
    },
  };
}

function checkHeader(header: Record<string, unknown>): void {
  if (header['alg'] !== 'HS256') throw new TokenInvalid('alg');
  // RFC 7515 section 4.1.11: we understand no extensions, so any `crit` is refused.
  if (Object.hasOwn(header, 'crit')) throw new TokenInvalid('crit');
  if (Object.hasOwn(header, 'typ') && header['typ'] !== 'JWT') throw new TokenInvalid('typ');
}

function decodeJsonSegment(segment: string, part: string): Record<string, unknown> {
  if (!BASE64URL.test(segment)) throw new TokenInvalid(`${part} encoding`);
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) throw new TokenInvalid(`${part} encoding`);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new TokenInvalid(`${part} json`);
  }
  if (!isPlainObject(value)) throw new TokenInvalid(`${part} not an object`);
  return value;
}
