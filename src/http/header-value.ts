const HEX = '0123456789ABCDEF';

/** True when every character is visible ASCII (0x21-0x7E): no space, control, or byte a proxy may rewrite. */
export function isVisibleAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

// Visible ASCII an app may read as structure rather than as part of a name: `%` (the escape),
// `,` (header lists: a proxy or framework may join or split values on it), `;` (parameters),
// `"` (quoted strings), `<` and `>` (markup, where an app echoes the name into a page).
const ENCODED_ASCII = '%,;"<>';

function isKeptByte(byte: number): boolean {
  return byte >= 0x21 && byte <= 0x7e && !ENCODED_ASCII.includes(String.fromCharCode(byte));
}

/**
 * A string as a header value no proxy mangles and no input can break, and no app splitting on
 * commas can misread: its UTF-8 bytes, with every byte outside visible ASCII (0x21-0x7E) and
 * each of `% , ; " < >` written as %XX. Other ASCII names without spaces pass unchanged;
 * decodeURIComponent gives any name back (a lone surrogate, which UTF-8 cannot hold, comes back
 * as U+FFFD).
 */
export function percentEncodeHeaderValue(text: string): string {
  let isPlain = true;
  for (let i = 0; i < text.length && isPlain; i += 1) isPlain = isKeptByte(text.charCodeAt(i));
  if (isPlain) return text;
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    encoded += isKeptByte(byte) ? String.fromCharCode(byte) : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return encoded;
}
