import { decodeUtf8Strict } from '../validate/utf8.js';

// A CBOR decoder (RFC 8949) for what WebAuthn sends and nothing more: the attestation object,
// the COSE key and the extensions inside authenticator data. Definite lengths only, no tags,
// no floats, no undefined; integers within JavaScript's safe range; lengths in their shortest
// form (one value, one spelling); map keys are integers or text, never repeated. Every input,
// however hostile, ends in a value or a CborInvalid: the limits below bound its time and memory.

/** A decoded item: unsigned and negative integers as numbers, byte strings as Buffers. */
export type CborValue = number | string | Buffer | boolean | null | readonly CborValue[] | CborMap;
type CborMap = ReadonlyMap<number | string, CborValue>;

/**
 * Room for an attestation object with a certificate chain (a few KiB), far below the body cap.
 * The deepest thing WebAuthn sends is attStmt.x5c: map, map, array, bytes (the top level is
 * depth 1). Items count every key and value once; entries are those of one array or map.
 */
export const WEBAUTHN_CBOR_LIMITS = Object.freeze({
  maxBytes: 16 * 1024, maxDepth: 4, maxItems: 128, maxContainerLength: 32, maxTextBytes: 256,
});
const LIMITS = WEBAUTHN_CBOR_LIMITS;

// Additional information 24-27: the argument's byte count, and the least value that needs it.
const ARGUMENT_BYTES = [1, 2, 4, 8];
const SHORTEST_FROM = [24, 0x100, 0x10000, 0x100000000];

/** The error class of a WebAuthn parser: a permanent `code`, and a `reason` for logs and tests, never for a client. */
export function reasonError<C extends string>(code: C, refused: string) {
  return class extends Error {
    readonly code = code;
    readonly reason: string;
    constructor(reason: string, options?: ErrorOptions) {
      super(`${refused} refused: ${reason}.`, options);
      this.reason = reason;
    }
  };
}

/** The input is not CBOR this decoder accepts. */
export class CborInvalid extends reasonError('CBOR_INVALID', 'CBOR') {}

/** Decodes `bytes` as exactly one item (nothing may follow it). Throws CborInvalid, and only that. */
export function decodeCbor(bytes: Uint8Array): CborValue {
  const { value, end } = decodeCborPrefix(bytes, 0);
  if (end !== bytes.length) throw new CborInvalid('bytes after the item');
  return value;
}

/**
 * Decodes the one item starting at `offset` and says where it ends: authenticator data holds a
 * COSE key followed by more bytes. The byte limit caps the whole of `bytes`. Throws CborInvalid.
 */
export function decodeCborPrefix(bytes: Uint8Array, offset: number): { value: CborValue; end: number } {
  if (bytes.length > LIMITS.maxBytes) throw new CborInvalid('too many bytes');
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
    throw new CborInvalid('offset outside the input');
  }
  let position = offset;
  let items = 0;

  const take = (length: number): Uint8Array => {
    // Compared before slicing: a declared length is never allocated before the bytes are seen.
    if (length > bytes.length - position) throw new CborInvalid('truncated');
    position += length;
    return bytes.subarray(position - length, position);
  };

  /** The argument of an initial byte (RFC 8949 section 3), refusing indefinite and non-shortest forms. */
  const argument = (info: number): number => {
    if (info < 24) return info;
    const size = ARGUMENT_BYTES[info - 24];
    if (size === undefined) throw new CborInvalid(info === 31 ? 'indefinite length' : 'reserved additional information');
    let value = 0;
    for (const byte of take(size)) {
      value = value * 256 + byte;
      // Past 2^53 a number is no longer exact; nothing WebAuthn sends comes near.
      if (value > Number.MAX_SAFE_INTEGER) throw new CborInvalid('integer too large');
    }
    if (value < (SHORTEST_FROM[info - 24] ?? 0)) throw new CborInvalid('length not in its shortest form');
    return value;
  };

  const containerLength = (info: number, depth: number): number => {
    if (depth > LIMITS.maxDepth) throw new CborInvalid('nested too deeply');
    const length = argument(info);
    if (length > LIMITS.maxContainerLength) throw new CborInvalid('too many entries');
    return length;
  };

  const item = (depth: number): CborValue => {
    if (++items > LIMITS.maxItems) throw new CborInvalid('too many items');
    const initial = take(1)[0] ?? 0;
    const info = initial & 0x1f;
    switch (initial >> 5) {
      case 0:
        return argument(info);
      case 1:
        return -1 - argument(info);
      case 2:
        return Buffer.from(take(argument(info)));
      case 3: {
        const length = argument(info);
        if (length > LIMITS.maxTextBytes) throw new CborInvalid('text string too long');
        const text = decodeUtf8Strict(take(length));
        if (text === undefined) throw new CborInvalid('text string not UTF-8');
        return text;
      }
      case 4: {
        const array: CborValue[] = [];
        for (let i = containerLength(info, depth); i > 0; i--) array.push(item(depth + 1));
        return array;
      }
      case 5: {
        const map = new Map<number | string, CborValue>();
        for (let i = containerLength(info, depth); i > 0; i--) {
          const key = item(depth + 1);
          if (typeof key !== 'number' && typeof key !== 'string') {
            throw new CborInvalid('map key neither integer nor text');
          }
          if (map.has(key)) throw new CborInvalid('repeated map key');
          map.set(key, item(depth + 1));
        }
        return map;
      }
      case 6:
        throw new CborInvalid('tag');
      default:
        // Major type 7: only false, true and null have a meaning here.
        if (info >= 20 && info <= 22) return [false, true, null][info - 20] ?? null;
        throw new CborInvalid(info >= 25 && info <= 27 ? 'floating-point number' : 'simple value');
    }
  };

  const value = item(1);
  return { value, end: position };
}
