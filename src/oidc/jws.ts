import { sign, verify, type KeyObject } from 'node:crypto';
import { decodeBase64url, isPlainObject } from '../validate/check.js';
import { decodeUtf8Strict } from '../validate/utf8.js';
import type { SigningAlg, SigningKey, VerifyingKey } from './jwk.js';

// JWS compact serialization (RFC 7515 section 7.1) with RS256 and ES256 (RFC 7518 sections 3.3,
// 3.4), over node:crypto. The algorithm is the key's: a token only names the key (`kid`), and its
// header's `alg` must be exactly that key's algorithm (RFC 8725 section 3.1), so `none`, HS256 with
// a public key as the secret, and every other algorithm are refused before any signature is checked.

/** Far above any id_token we sign; bounds the work a hostile `id_token_hint` can cause. */
export const MAX_JWS_LENGTH = 8192;

// RFC 7518 section 3.4: an ES256 signature is R and S, 32 bytes each, concatenated (IEEE P1363),
// not the DER sequence node:crypto makes by default.
const ES256_SIGNATURE_BYTES = 64;

export type JwsInspection =
  | { readonly ok: true; readonly payload: Readonly<Record<string, unknown>>; readonly key: VerifyingKey }
  | { readonly ok: false; readonly reason: string };

const refuse = (reason: string): JwsInspection => ({ ok: false, reason });

/** The options node:crypto's sign and verify take for `alg` with `key`. */
function cryptoKeyOf(alg: SigningAlg, key: KeyObject): KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' } {
  return alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key;
}

/** Signs `claims` as a JWT (RFC 7519) with `key`: header `{alg, typ: "JWT", kid}`. */
export function signJwt(key: SigningKey, claims: Readonly<Record<string, unknown>>): string {
  const header = Buffer.from(JSON.stringify({ alg: key.alg, typ: 'JWT', kid: key.kid })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signingInput = `${header}.${payload}`;
  const signature = sign('sha256', Buffer.from(signingInput), cryptoKeyOf(key.alg, key.privateKey));
  return `${signingInput}.${signature.toString('base64url')}`;
}

/**
 * The payload of a compact JWS that the key its header names (`findKey(kid)`) signed, or why not.
 * The header's `alg` must equal that key's algorithm; `crit` is refused (we understand no
 * extension, RFC 7515 section 4.1.11); `typ`, when present, must be JWT. Never throws. Claims
 * (exp, aud, iss) are the caller's to check.
 */
export function inspectJws(token: string, findKey: (kid: string | undefined) => VerifyingKey | undefined): JwsInspection {
  if (token.length > MAX_JWS_LENGTH) return refuse('too long');
  const firstDot = token.indexOf('.');
  const secondDot = token.indexOf('.', firstDot + 1);
  if (firstDot < 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) !== -1) return refuse('segments');

  const header = decodeJsonSegment(token.slice(0, firstDot));
  if (header === undefined) return refuse('header');
  const kid = header['kid'];
  if (kid !== undefined && typeof kid !== 'string') return refuse('kid');
  const key = findKey(kid);
  if (key === undefined) return refuse('unknown key');
  if (header['alg'] !== key.alg) return refuse('alg');
  if (Object.hasOwn(header, 'crit')) return refuse('crit');
  if (Object.hasOwn(header, 'typ') && header['typ'] !== 'JWT') return refuse('typ');

  const signature = decodeBase64url(token.slice(secondDot + 1));
  if (signature === undefined || signature.length !== signatureBytesOf(key)) return refuse('signature');
  const signingInput = Buffer.from(token.slice(0, secondDot), 'latin1');
  let isValid: boolean;
  try {
    isValid = verify('sha256', signingInput, cryptoKeyOf(key.alg, key.publicKey), signature);
  } catch {
    isValid = false;
  }
  if (!isValid) return refuse('signature');

  const payload = decodeJsonSegment(token.slice(firstDot + 1, secondDot));
  if (payload === undefined) return refuse('payload');
  return { ok: true, payload, key };
}

/** The exact signature length of `key`'s algorithm: the modulus length for RSA (RFC 8017 section 8.2.1). */
function signatureBytesOf(key: VerifyingKey): number {
  if (key.alg === 'ES256') return ES256_SIGNATURE_BYTES;
  return Math.ceil((key.publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
}

/** A segment's JSON object, when it is canonical base64url of UTF-8 JSON text holding an object. */
function decodeJsonSegment(segment: string): Record<string, unknown> | undefined {
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
