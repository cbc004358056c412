import { sign, verify, type KeyObject } from 'node:crypto';
import {
  decodeJsonSegment, encodeJsonSegment, headerRefusal, joinCompact, splitCompact, type CompactRefusal, type JsonObject,
} from '../auth/jose.js';
import { decodeBase64url } from '../validate/check.js';
import type { SigningAlg, SigningKey, VerifyingKey } from './jwk.js';

// JWS compact serialization (RFC 7515 section 7.1, read and written by auth/jose.ts) with RS256 and
// ES256 (RFC 7518 sections 3.3, 3.4), over node:crypto. The algorithm is the key's: a token only
// names the key (`kid`), and its header's `alg` must be exactly that key's algorithm (RFC 8725
// section 3.1), so `none`, HS256 with a public key as the secret, and every other algorithm are
// refused before any signature is checked.

/** Far above any id_token we sign; bounds the work a hostile `id_token_hint` can cause. */
export const MAX_JWS_LENGTH = 8192;

// RFC 7518 section 3.4: an ES256 signature is R and S, 32 bytes each, concatenated (IEEE P1363),
// not the DER sequence node:crypto makes by default.
const ES256_SIGNATURE_BYTES = 64;

/** Why an id_token (or a hint naming one) is refused. */
export type JwsRefusal = CompactRefusal | 'kid' | 'unknown-key';

type JwsInspection =
  | { readonly ok: true; readonly payload: JsonObject; readonly key: VerifyingKey }
  | { readonly ok: false; readonly reason: JwsRefusal };

const refuse = (reason: JwsRefusal): JwsInspection => ({ ok: false, reason });

/** The options node:crypto's sign and verify take for `alg` with `key`. */
function cryptoKeyOf(alg: SigningAlg, key: KeyObject): KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' } {
  return alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key;
}

/** Signs `claims` as a JWT (RFC 7519) with `key`: header `{alg, typ: "JWT", kid}`. */
export function signJwt(key: SigningKey, claims: JsonObject): string {
  const header = encodeJsonSegment({ alg: key.alg, typ: 'JWT', kid: key.kid });
  const privateKey = cryptoKeyOf(key.alg, key.privateKey);
  return joinCompact(header, claims, (signingInput) => sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url'));
}

/**
 * The payload of a compact JWS that the key its header names (`findKey(kid)`) signed, or why not.
 * The header's `alg` must equal that key's algorithm; `crit` is refused (we understand no
 * extension, RFC 7515 section 4.1.11); `typ`, when present, must be JWT. Never throws. Claims
 * (exp, aud, iss) are the caller's to check.
 */
export function inspectJws(token: string, findKey: (kid: string | undefined) => VerifyingKey | undefined): JwsInspection {
  const segments = splitCompact(token, MAX_JWS_LENGTH);
  if (typeof segments === 'string') return refuse(segments);

  const header = decodeJsonSegment(segments.header);
  if (header === undefined) return refuse('header');
  const kid = header['kid'];
  if (kid !== undefined && typeof kid !== 'string') return refuse('kid');
  const key = findKey(kid);
  if (key === undefined) return refuse('unknown-key');
  const problem = headerRefusal(header, [key.alg]);
  if (problem !== undefined) return refuse(problem);

  const signature = decodeBase64url(segments.signature);
  if (signature === undefined || signature.length !== signatureBytesOf(key)) return refuse('signature');
  const signingInput = Buffer.from(segments.signingInput, 'latin1');
  let isValid: boolean;
  try {
    isValid = verify('sha256', signingInput, cryptoKeyOf(key.alg, key.publicKey), signature);
  } catch {
    isValid = false;
  }
  if (!isValid) return refuse('signature');

  const payload = decodeJsonSegment(segments.payload);
  if (payload === undefined) return refuse('payload');
  return { ok: true, payload, key };
}

/** The exact signature length of `key`'s algorithm: the modulus length for RSA (RFC 8017 section 8.2.1). */
function signatureBytesOf(key: VerifyingKey): number {
  if (key.alg === 'ES256') return ES256_SIGNATURE_BYTES;
  return Math.ceil((key.publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
}
