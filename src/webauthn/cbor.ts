import { decodeUtf8Strict } from '../validate/utf8.js';

// A CBOR decoder (RFC 8949) for what WebAuthn sends and nothing more: the attestation object,
// the COSE key and the extensions inside authenticator data. Definite lengths only, no tags,
// no floats, no undefined; integers within JavaScript's safe range; lengths in their shortest
// form (one value, one spelling); map keys are integers or text, never repeated. Every input,
// however hostile, ends in a value or a CborInvalid: the limits below bound its time and memory.

/** A decoded item: unsigned and negative integers as numbers, byte strings as Buffers. */
export type CborValue = number | string | Buffer | boolean | null | readonly CborValue[] | CborMap;
export type CborMap = ReadonlyMap<number | string, CborValue>;

export interface CborLimits {
  /** The most bytes a whole input may have. */
  readonly maxBytes: number;
  /** Arrays and maps inside arrays and maps: the top level is depth 1. */
  readonly maxDepth: number;
  /** Every item counted once (a map entry is two: key and value). */
  readonly maxItems: number;
  /** Entries of one array or map. */
  readonly maxContainerLength: number;
  /** UTF-8 bytes of one text string. */
  readonly maxTextBytes: number;
}

/**
 * Room for an attestation object with a certificate chain (a few KiB), far below the body cap.
 * The deepest thing WebAuthn sends is attStmt.x5c: map, map, array, bytes.
 */
export const WEBAUTHN_CBOR_LIMITS: CborLimits = Object.freeze({ maxBytes: 16 * 1024, maxDepth: 4, maxItems: 128, maxContainerLength: 32, maxTextBytes: 256 });

/** The input is not CBOR this decoder accepts; `reason` says why (for logs and tests, never for a client). */
export class CborInvalid extends Error {
  readonly code = 'CBOR_INVALID';
  readonly reason: string;
  constructor(reason: string) {
    super(`CBOR refused: ${reason}.`);
    this.reason = reason;
  }
}

/** Decodes `bytes` as exactly one item (nothing may follow it). Throws CborInvalid, and only that. */
export function decodeCbor(bytes: Uint8Array, limits: CborLimits = WEBAUTHN_CBOR_LIMITS): CborValue {
  const { value, end } = decodeCborPrefix(bytes, 0, limits);
  if (end !== bytes.length) throw new CborInvalid('bytes after the item');
  return value;
}

/**
 * Decodes the one item starting at `offset` and says where it ends: authenticator data holds a
 * COSE key followed by more bytes. `limits.maxBytes` caps the whole of `bytes`. Throws CborInvalid.
 */
export function decodeCborPrefix(bytes: Uint8Array, offset: number, limits: CborLimits = WEBAUTHN_CBOR_LIMITS): { value: CborValue; end: number } {
  if (bytes.length > limits.maxBytes) throw new CborInvalid('too many bytes');
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) throw new CborInvalid('offset outside the input');
  const reader = new Reader(bytes, offset, limits);
  const value = reader.item(1);
  return { value, end: reader.position };
}

class Reader {
  position: number;
  private items = 0;
  private readonly bytes: Uint8Array;
  private readonly limits: CborLimits;
  constructor(bytes: Uint8Array, offset: number, limits: CborLimits) {
    this.bytes = bytes;
    this.position = offset;
    this.limits = limits;
  }

  private byte(): number {
    const value = this.bytes[this.position];
    if (value === undefined) throw new CborInvalid('truncated');
    this.position++;
    return value;
  }

  /** The argument of an initial byte (RFC 8949 section 3), refusing indefinite and non-shortest forms. */
  private argument(info: number): number {
    if (info < 24) return info;
    let size: number;
    if (info === 24) size = 1;
    else if (info === 25) size = 2;
    else if (info === 26) size = 4;
    else if (info === 27) size = 8;
    else throw new CborInvalid(info === 31 ? 'indefinite length' : 'reserved additional information');
    if (this.position + size > this.bytes.length) throw new CborInvalid('truncated');
    let value = 0;
    for (let i = 0; i < size; i++) {
      value = value * 256 + this.byte();
      // Past 2^53 a number is no longer exact; nothing WebAuthn sends comes near.
      if (value > Number.MAX_SAFE_INTEGER) throw new CborInvalid('integer too large');
    }
    const smallest = size === 1 ? 24 : size === 2 ? 0x100 : size === 4 ? 0x10000 : 0x100000000;
    if (value < smallest) throw new CborInvalid('length not in its shortest form');
    return value;
  }

  private count(): void {
    this.items++;
    if (this.items > this.limits.maxItems) throw new CborInvalid('too many items');
  }

  private take(length: number): Uint8Array {
    // Compared before slicing: a declared length is never allocated before the bytes are seen.
    if (length > this.bytes.length - this.position) throw new CborInvalid('truncated');
    const slice = this.bytes.subarray(this.position, this.position + length);
    this.position += length;
    return slice;
  }

  item(depth: number): CborValue {
    this.count();
    const initial = this.byte();
    const major = initial >> 5;
    const info = initial & 0x1f;
    switch (major) {
      case 0:
        return this.argument(info);
      case 1:
        return -1 - this.argument(info);
      case 2:
        return Buffer.from(this.take(this.argument(info)));
      case 3: {
        const length = this.argument(info);
        if (length > this.limits.maxTextBytes) throw new CborInvalid('text string too long');
        const text = decodeUtf8Strict(this.take(length));
        if (text === undefined) throw new CborInvalid('text string not UTF-8');
        return text;
      }
      case 4: {
        const length = this.container(info, depth);
        const array: CborValue[] = [];
        for (let i = 0; i < length; i++) array.push(this.item(depth + 1));
        return array;
      }
      case 5: {
        const length = this.container(info, depth);
        const map = new Map<number | string, CborValue>();
        for (let i = 0; i < length; i++) {
          const key = this.item(depth + 1);
          if (typeof key !== 'number' && typeof key !== 'string') throw new CborInvalid('map key neither integer nor text');
          if (map.has(key)) throw new CborInvalid('repeated map key');
          map.set(key, this.item(depth + 1));
        }
        return map;
      }
      case 6:
        throw new CborInvalid('tag');
      default:
        // Major type 7: only false, true and null have a meaning here.
        if (info === 20) return false;
        if (info === 21) return true;
        if (info === 22) return null;
        throw new CborInvalid(info >= 25 && info <= 27 ? 'floating-point number' : 'simple value');
    }
  }

  private container(info: number, depth: number): number {
    if (depth > this.limits.maxDepth) throw new CborInvalid('nested too deeply');
    const length = this.argument(info);
    if (length > this.limits.maxContainerLength) throw new CborInvalid('too many entries');
    return length;
  }
}

