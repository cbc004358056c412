import { createHash, createPrivateKey, createPublicKey, sign, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isPlainObject } from '../validate/check.js';

// Keys for signing id_tokens, as JWKs (RFC 7517) and as node:crypto KeyObjects. Only two kinds
// exist: RSA of 2048 bits or more for RS256, and P-256 for ES256 (RFC 7518 sections 3.3 and 3.4).

export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** RFC 7518 section 3.3: "A key of size 2048 bits or larger MUST be used with these algorithms." */
const MIN_RSA_BITS = 2048;

/** A public key that verifies one algorithm, named by its `kid`. */
export interface VerifyingKey {
  readonly kid: string;
  readonly alg: SigningAlg;
  readonly publicKey: KeyObject;
}

/** A key pair that signs one algorithm; its public half verifies. */
export interface SigningKey extends VerifyingKey {
  readonly privateKey: KeyObject;
}

/** The public JWK a JWKS lists (RFC 7517 section 4; `use` and `alg` say what it is for). */
export type PublicJwk = Readonly<Record<string, string>>;

/** Why a key was refused, in words for an operator; thrown by the functions here that read keys. */
export class KeyRefused extends Error {}

/** The algorithm `key` can sign or verify, or undefined when it is neither kind we use. */
function algorithmOf(key: KeyObject): SigningAlg | undefined {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= MIN_RSA_BITS) return 'RS256';
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') return 'ES256';
  return undefined;
}

/** The members RFC 7638 section 3.2 requires, in lexicographic order, as the thumbprint hashes them. */
function requiredMembers(jwk: JsonWebKey): Record<string, string> | undefined {
  const text = (value: unknown): value is string => typeof value === 'string' && value !== '';
  if (jwk.kty === 'RSA' && text(jwk.e) && text(jwk.n)) return { e: jwk.e, kty: 'RSA', n: jwk.n };
  if (jwk.kty === 'EC' && text(jwk.crv) && text(jwk.x) && text(jwk.y)) {
    return { crv: jwk.crv, kty: 'EC', x: jwk.x, y: jwk.y };
  }
  return undefined;
}

/**
 * The RFC 7638 thumbprint of a public RSA or EC JWK: SHA-256 over its required members, written
 * with no whitespace in key order, base64url. Throws KeyRefused for any other kind of key.
 */
export function thumbprintOf(jwk: JsonWebKey): string {
  const members = requiredMembers(jwk);
  if (members === undefined) throw new KeyRefused('only RSA and EC keys have a thumbprint here');
  return createHash('sha256').update(JSON.stringify(members), 'utf8').digest('base64url');
}

/** The public JWK of a verifying key, as the JWKS lists it: its required members, `kid`, `use` and `alg`. */
export function publicJwkOf(key: VerifyingKey): PublicJwk {
  const members = requiredMembers(key.publicKey.export({ format: 'jwk' }));
  if (members === undefined) throw new KeyRefused('the key is neither RSA nor EC');
  return Object.freeze({ ...members, kid: key.kid, use: 'sig', alg: key.alg });
}

/**
 * A signing key from a private JWK (the form the keys file keeps), its `kid` the thumbprint of its
 * public half. Throws KeyRefused unless it is an RSA key of 2048 bits or more or a P-256 key.
 */
export function signingKeyFromJwk(jwk: unknown): SigningKey {
  if (!isPlainObject(jwk) || typeof jwk['d'] !== 'string') throw new KeyRefused('not a private JWK');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new KeyRefused('not a private key node:crypto can read');
  }
  const alg = algorithmOf(privateKey);
  if (alg === undefined) throw new KeyRefused(`neither an RSA key of ${MIN_RSA_BITS} bits or more nor a P-256 key`);
  const publicKey = createPublicKey(privateKey);
  // A JWK carries its public members beside `d`; node:crypto does not check that they belong
  // together, and a key whose halves disagree would sign what its published half never verifies.
  const probe = Buffer.from('gatehouse signing key check');
  if (!verify('sha256', probe, publicKey, sign('sha256', probe, privateKey))) {
    throw new KeyRefused('its public members do not belong to its private key');
  }
  return Object.freeze({ kid: thumbprintOf(publicKey.export({ format: 'jwk' })), alg, privateKey, publicKey });
}

/** A verifying key from a public JWK, its `kid` its thumbprint. Throws KeyRefused as signingKeyFromJwk. */
export function verifyingKeyFromJwk(jwk: unknown): VerifyingKey {
  if (!isPlainObject(jwk)) throw new KeyRefused('not a JWK');
  const members = requiredMembers(jwk as JsonWebKey);
  if (members === undefined) throw new KeyRefused('not an RSA or EC public JWK');
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: members as JsonWebKey, format: 'jwk' });
  } catch {
    throw new KeyRefused('not a public key node:crypto can read');
  }
  const alg = algorithmOf(publicKey);
  if (alg === undefined) throw new KeyRefused(`neither an RSA key of ${MIN_RSA_BITS} bits or more nor a P-256 key`);
  return Object.freeze({ kid: thumbprintOf(members), alg, publicKey });
}

/** The private JWK of a signing key, as the keys file keeps it (never served). */
export function privateJwkOf(key: SigningKey): JsonWebKey {
  return key.privateKey.export({ format: 'jwk' });
}
