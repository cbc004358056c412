import { decodeBase64url, isPlainObject } from '../validate/check.js';
import { decodeUtf8Strict } from '../validate/utf8.js';

// JOSE compact serialization for every token we sign or read: HS256 sessions (auth/jwt.ts), RS256 and
// ES256 id_tokens (oidc/jws.ts), each with its own cap, algorithms and MAC or signature. Refusals are
// values, not exceptions: the 401 path is the cheapest request an outsider can send.

/**
 * Every reason a token is refused, in the order the checks run: longer than the caller's cap; not
 * three segments (RFC 7515 section 7.1); a header that is not canonical base64url of UTF-8 JSON text
 * holding an object (section 5.2); a `kid` not a string, or naming no key of ours; an `alg` the
 * caller does not allow (RFC 8725 section 3.1); any `crit` (we understand no extension, RFC 7515
 * section 4.1.11); a `typ` other than JWT; a MAC or signature that fails over the received bytes;
 * a payload like the header (read only after the signature passed); no numeric `exp`; the clock at
 * or after `exp` (RFC 7519 section 4.1.4); no numeric `iat`; `iat` further ahead than the skew.
 */
export const JOSE_REFUSALS = [
  'too-long', 'segments', 'header', 'kid', 'unknown-key', 'alg', 'crit', 'typ', 'signature', 'payload',
  'exp', 'expired', 'iat', 'not-yet-valid',
] as const;
export type JoseRefusal = (typeof JOSE_REFUSALS)[number];
/** The refusals of the compact form and its header, whoever the key. */
export type CompactRefusal = Exclude<JoseRefusal, 'kid' | 'unknown-key' | TimeRefusal>;
export type TimeRefusal = 'exp' | 'expired' | 'iat' | 'not-yet-valid';

export type JsonObject = Readonly<Record<string, unknown>>;

/** The three segments of a compact token, and the bytes its signature covers (header.payload). */
interface CompactSegments {
  readonly header: string;
  readonly payload: string;
  readonly signature: string;
  readonly signingInput: string;
}

/** `token`'s three segments, when it is at most `maxLength` characters and has exactly two dots. */
export function splitCompact(token: string, maxLength: number): CompactSegments | 'too-long' | 'segments' {
  if (token.length > maxLength) return 'too-long';
  const firstDot = token.indexOf('.');
  const secondDot = token.indexOf('.', firstDot + 1);
  if (firstDot < 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) !== -1) return 'segments';
  return {
    header: token.slice(0, firstDot),
    payload: token.slice(firstDot + 1, secondDot),
    signature: token.slice(secondDot + 1),
    signingInput: token.slice(0, secondDot),
  };
}

/** A compact token of `headerSegment` and `claims`, signed by `sign` over header.payload. */
export function joinCompact(headerSegment: string, claims: JsonObject, sign: (signingInput: string) => string): string {
  const signingInput = `${headerSegment}.${encodeJsonSegment(claims)}`;
  return `${signingInput}.${sign(signingInput)}`;
}

/** The base64url segment of `value` as JSON. */
export function encodeJsonSegment(value: JsonObject): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * A segment's JSON object, when it is canonical base64url (one spelling per value) of strict UTF-8
 * JSON text holding an object; else undefined. The caller's length cap bounds the work.
 */
export function decodeJsonSegment(segment: string): JsonObject | undefined {
  if (segment === '') return undefined;
  const bytes = decodeBase64url(segment);
  const text = bytes === undefined ? undefined : decodeUtf8Strict(bytes);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isPlainObject(value) ? value : undefined;
}

/**
 * Why `header` is refused, or undefined: its `alg` must be exactly one of `allowedAlgs` (the
 * caller's or its key's, never the token's choice: RFC 8725 section 3.1), it has no `crit`, and a
 * `typ`, when present, is JWT.
 */
export function headerRefusal(header: JsonObject, allowedAlgs: readonly string[]): 'alg' | 'crit' | 'typ' | undefined {
  const alg = header['alg'];
  if (typeof alg !== 'string' || !allowedAlgs.includes(alg)) return 'alg';
  if (Object.hasOwn(header, 'crit')) return 'crit';
  if (Object.hasOwn(header, 'typ') && header['typ'] !== 'JWT') return 'typ';
  return undefined;
}

/**
 * Why `exp` and `iat` do not make a token live at `nowSeconds`, or undefined: both are finite
 * numbers, the clock is before `exp`, and `iat` is at most `iatSkewSeconds` ahead of the clock.
 */
export function timeRefusal(exp: unknown, iat: unknown, nowSeconds: number, iatSkewSeconds: number): TimeRefusal | undefined {
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return 'exp';
  if (nowSeconds >= exp) return 'expired';
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'iat';
  if (iat > nowSeconds + iatSkewSeconds) return 'not-yet-valid';
  return undefined;
}
