// RFC 4648 section 6 base32, the alphabet authenticator apps take a TOTP seed in.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Far above a TOTP seed (20 bytes are 32 characters); longer input is refused before any work. */
export const MAX_BASE32_LENGTH = 1024;

/** Encodes bytes as upper-case base32 without padding (the Key URI format omits it). */
export function encodeBase32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Decodes base32 (either case, `=` padding optional but only as a whole, correct tail). Returns
 * undefined for anything else: other characters, a length no byte count encodes, non-zero
 * leftover bits (a second spelling of the same bytes), or more than MAX_BASE32_LENGTH characters.
 */
export function decodeBase32(text: string): Buffer | undefined {
  if (typeof text !== 'string' || text.length > MAX_BASE32_LENGTH) return undefined;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--;
  const padding = text.length - end;
  // Padded input fills its last 8-character group exactly (RFC 4648 pads with 1, 3, 4 or 6 `=`).
  if (padding > 0 && (end % 8 === 0 || padding !== 8 - (end % 8))) return undefined;
  // 1, 3 or 6 characters left over hold no whole byte.
  if ([1, 3, 6].includes(end % 8)) return undefined;
  const out = Buffer.alloc(Math.floor((end * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (let i = 0; i < end; i++) {
    const value = valueOf(text.charCodeAt(i));
    if (value < 0) return undefined;
    buffer = ((buffer << 5) | value) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (buffer >>> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}

function valueOf(code: number): number {
  if (code >= 0x41 && code <= 0x5a) return code - 0x41; // A-Z
  if (code >= 0x61 && code <= 0x7a) return code - 0x61; // a-z
  if (code >= 0x32 && code <= 0x37) return code - 0x32 + 26; // 2-7
  return -1;
}
