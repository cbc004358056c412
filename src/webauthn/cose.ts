import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { decodeCbor, type CborValue } from './cbor.js';

// COSE public keys (RFC 9052/9053, RFC 8230) for the three algorithms Gatehouse offers.
// Each key type has an exact set of labels: a missing one, a wrong value or any other label
// refuses the key, so one key has one reading.

/** COSE algorithm identifiers, in the order the registration options offer them. */
export const COSE_ALGORITHMS = [-8, -7, -257] as const;
export type CoseAlgorithm = (typeof COSE_ALGORITHMS)[number];
export const EDDSA = -8;
export const ES256 = -7;
export const RS256 = -257;

export interface CosePublicKey {
  readonly algorithm: CoseAlgorithm;
  readonly key: KeyObject;
}

/** The key is not one Gatehouse accepts; `reason` is for logs and tests. */
export class CoseInvalid extends Error {
  readonly code = 'COSE_INVALID';
  readonly reason: string;
  constructor(reason: string) {
    super(`COSE key refused: ${reason}.`);
    this.reason = reason;
  }
}

// Labels (RFC 9052 section 7.1, RFC 9053 section 7, RFC 8230 section 4).
const KTY = 1;
const ALG = 3;
const OKP = 1;
const EC2 = 2;
const RSA = 3;
const P_256 = 1;
const ED25519 = 6;
const RSA_EXPONENT = Buffer.from([1, 0, 1]);
const MIN_RSA_MODULUS_BYTES = 256; // 2048 bits
const MAX_RSA_MODULUS_BYTES = 512; // 4096 bits

/** Imports a decoded COSE_Key map as a node:crypto public key. Throws CoseInvalid. */
export function importCoseKey(value: CborValue): CosePublicKey {
  if (!(value instanceof Map)) throw new CoseInvalid('not a map');
  const kty = value.get(KTY);
  const alg = value.get(ALG);
  const bytesOf = (label: number, length: number | undefined): Buffer => {
    const field = value.get(label);
    if (!Buffer.isBuffer(field)) throw new CoseInvalid(`label ${label} is not a byte string`);
    if (length !== undefined && field.length !== length) throw new CoseInvalid(`label ${label} has the wrong length`);
    return field;
  };
  const labelsExactly = (labels: readonly number[]): void => {
    if (value.size !== labels.length || !labels.every((label) => value.has(label))) throw new CoseInvalid('labels other than the key type needs');
  };
  if (kty === EC2 && alg === ES256) {
    labelsExactly([KTY, ALG, -1, -2, -3]);
    if (value.get(-1) !== P_256) throw new CoseInvalid('curve is not P-256');
    const jwk = { kty: 'EC', crv: 'P-256', x: bytesOf(-2, 32).toString('base64url'), y: bytesOf(-3, 32).toString('base64url') };
    return { algorithm: ES256, key: importJwk(jwk) };
  }
  if (kty === OKP && alg === EDDSA) {
    labelsExactly([KTY, ALG, -1, -2]);
    if (value.get(-1) !== ED25519) throw new CoseInvalid('curve is not Ed25519');
    return { algorithm: EDDSA, key: importJwk({ kty: 'OKP', crv: 'Ed25519', x: bytesOf(-2, 32).toString('base64url') }) };
  }
  if (kty === RSA && alg === RS256) {
    labelsExactly([KTY, ALG, -1, -2]);
    const n = bytesOf(-1, undefined);
    if (n.length < MIN_RSA_MODULUS_BYTES || n.length > MAX_RSA_MODULUS_BYTES || n[0] === 0) throw new CoseInvalid('modulus outside 2048 to 4096 bits');
    // Every authenticator uses 65537; anything else is refused rather than judged.
    if (!bytesOf(-2, undefined).equals(RSA_EXPONENT)) throw new CoseInvalid('exponent is not 65537');
    return { algorithm: RS256, key: importJwk({ kty: 'RSA', n: n.toString('base64url'), e: RSA_EXPONENT.toString('base64url') }) };
  }
  throw new CoseInvalid('key type and algorithm not one of EdDSA/Ed25519, ES256/P-256, RS256');
}

function importJwk(jwk: Record<string, string>): KeyObject {
  try {
    // node:crypto refuses a P-256 point that is not on the curve.
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw new CoseInvalid('node:crypto refused the key');
  }
}

/** Decodes and imports COSE key bytes (as stored). Throws CborInvalid or CoseInvalid. */
export function decodeCoseKey(bytes: Uint8Array): CosePublicKey {
  return importCoseKey(decodeCbor(bytes));
}

// An ES256 signature is DER (WebAuthn section 6.5.5): at most 72 bytes for P-256.
const MAX_ECDSA_SIGNATURE_BYTES = 72;

/**
 * Whether `signature` is `key`'s signature over `data` under its COSE algorithm: ECDSA with
 * SHA-256 (DER), Ed25519, or RSASSA-PKCS1-v1_5 with SHA-256. False for anything malformed; never throws.
 */
export function verifyCoseSignature(publicKey: CosePublicKey, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    switch (publicKey.algorithm) {
      case ES256:
        if (signature.length > MAX_ECDSA_SIGNATURE_BYTES) return false;
        return verify('sha256', data, { key: publicKey.key, dsaEncoding: 'der' }, signature);
      case EDDSA:
        if (signature.length !== 64) return false;
        return verify(null, data, publicKey.key, signature);
      case RS256:
        if (signature.length !== (publicKey.key.asymmetricKeyDetails?.modulusLength ?? 0) / 8) return false;
        return verify('sha256', data, { key: publicKey.key, padding: constants.RSA_PKCS1_PADDING }, signature);
    }
  } catch {
    return false;
  }
}
