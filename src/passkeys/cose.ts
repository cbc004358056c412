import { constants, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { decodeCbor, reasonError, type CborValue } from './cbor.js';

// COSE public keys (RFC 9052/9053, RFC 8230) for the three algorithms Gatehouse offers.
// Each key type has an exact set of labels: a missing one, a wrong value or any other label
// refuses the key, so one key has one reading.

/** COSE algorithm identifiers, in the order the registration options offer them: EdDSA, ES256, RS256. */
export const COSE_ALGORITHMS = [-8, -7, -257] as const;
type CoseAlgorithm = (typeof COSE_ALGORITHMS)[number];

export type CosePublicKey = { readonly algorithm: CoseAlgorithm; readonly key: KeyObject };

/** The key is not one Gatehouse accepts. */
export class CoseInvalid extends reasonError('COSE_INVALID', 'COSE key') {}

// Labels kty 1 and alg 3 (RFC 9052 section 7.1); a byte string of the key, checked for its length.
const KTY = 1;
const ALG = 3;
type Field = (label: number, length?: number) => Buffer;
const RSA_EXPONENT = Buffer.from([1, 0, 1]);
const base64url = (bytes: Buffer): string => bytes.toString('base64url');

/**
 * Per algorithm: its key type, the other labels it has and the curve in label -1 (RFC 9053 section 7,
 * RFC 8230 section 4), the key as a JWK, and its signature check, false for a malformed signature.
 */
const SUITES: Record<CoseAlgorithm, {
  kty: number;
  labels: readonly number[];
  curve?: readonly [label: number, name: string];
  jwk: (field: Field) => JsonWebKey;
  verify: (key: KeyObject, data: Uint8Array, signature: Uint8Array) => boolean;
}> = {
  [-8]: {
    kty: 1, // OKP
    labels: [-1, -2],
    curve: [6, 'Ed25519'],
    jwk: (field) => ({ kty: 'OKP', crv: 'Ed25519', x: base64url(field(-2, 32)) }),
    verify: (key, data, signature) => signature.length === 64 && verify(null, data, key, signature),
  },
  [-7]: {
    kty: 2, // EC2
    labels: [-1, -2, -3],
    curve: [1, 'P-256'],
    jwk: (field) => ({ kty: 'EC', crv: 'P-256', x: base64url(field(-2, 32)), y: base64url(field(-3, 32)) }),
    // DER (WebAuthn section 6.5.5): at most 72 bytes for P-256.
    verify: (key, data, signature) =>
      signature.length <= 72 && verify('sha256', data, { key, dsaEncoding: 'der' }, signature),
  },
  [-257]: {
    kty: 3, // RSA: n -1, e -2
    labels: [-1, -2],
    jwk: (field) => {
      const n = field(-1);
      if (n.length < 256 || n.length > 512 || n[0] === 0) throw new CoseInvalid('modulus outside 2048 to 4096 bits');
      // Every authenticator uses 65537; anything else is refused rather than judged.
      if (!field(-2).equals(RSA_EXPONENT)) throw new CoseInvalid('exponent is not 65537');
      return { kty: 'RSA', n: base64url(n), e: base64url(RSA_EXPONENT) };
    },
    verify: (key, data, signature) =>
      signature.length === (key.asymmetricKeyDetails?.modulusLength ?? 0) / 8 &&
      verify('sha256', data, { key, padding: constants.RSA_PKCS1_PADDING }, signature),
  },
};

/** Imports a decoded COSE_Key map as a node:crypto public key. Throws CoseInvalid. */
export function importCoseKey(value: CborValue): CosePublicKey {
  if (!(value instanceof Map)) throw new CoseInvalid('not a map');
  const algorithm = COSE_ALGORITHMS.find((alg) => value.get(ALG) === alg && value.get(KTY) === SUITES[alg].kty);
  if (algorithm === undefined) throw new CoseInvalid('key type and algorithm not one of EdDSA/Ed25519, ES256/P-256, RS256');
  const labels = [KTY, ALG, ...SUITES[algorithm].labels];
  if (value.size !== labels.length || !labels.every((label) => value.has(label))) {
    throw new CoseInvalid('labels other than the key type needs');
  }
  const [crv, curveName] = SUITES[algorithm].curve ?? [];
  if (crv !== undefined && value.get(-1) !== crv) throw new CoseInvalid(`curve is not ${curveName}`);
  const field: Field = (label, length) => {
    const bytes: unknown = value.get(label);
    if (!Buffer.isBuffer(bytes)) throw new CoseInvalid(`label ${label} is not a byte string`);
    if (length !== undefined && bytes.length !== length) throw new CoseInvalid(`label ${label} has the wrong length`);
    return bytes;
  };
  const jwk = SUITES[algorithm].jwk(field);
  try {
    // node:crypto refuses a P-256 point that is not on the curve.
    return { algorithm, key: createPublicKey({ key: jwk, format: 'jwk' }) };
  } catch {
    throw new CoseInvalid('node:crypto refused the key');
  }
}

/** Decodes and imports COSE key bytes (as stored). Throws CborInvalid or CoseInvalid. */
export function decodeCoseKey(bytes: Uint8Array): CosePublicKey {
  return importCoseKey(decodeCbor(bytes));
}

/**
 * Whether `signature` is `key`'s signature over `data` under its COSE algorithm: ECDSA with
 * SHA-256 (DER), Ed25519, or RSASSA-PKCS1-v1_5 with SHA-256. False for anything malformed; never throws.
 */
export function verifyCoseSignature(publicKey: CosePublicKey, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    return SUITES[publicKey.algorithm].verify(publicKey.key, data, signature);
  } catch {
    return false;
  }
}
