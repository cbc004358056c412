const HEX = '0123456789ABCDEF';

/** True when every character is visible ASCII (0x21-0x7E): no space, control, or byte a proxy may rewrite. */
export function isVisibleAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

// Kept as they are: RFC 3986's unreserved characters and `@` (e-mail-like names). Everything
// else is written as %XX (docs/contract/access.md "Remote-User"): punctuation an app may read as
// structure (`,` in header lists, `;` parameters, `"` quoted strings, `'` `&` `<` `>` when it
// echoes the name into HTML or a URL, `%` the escape itself), and every byte outside ASCII.
const KEPT = /^[A-Za-z0-9\-._~@]*$/;

const isKeptByte = (byte: number): boolean => byte < 0x80 && KEPT.test(String.fromCharCode(byte));

/**
 * A username as the `Remote-User` value: its UTF-8 bytes, each outside `A-Z a-z 0-9 - . _ ~ @`
 * written as %XX (upper-case hex). No proxy mangles it and no input can break it; names of only
 * those characters pass unchanged; decodeURIComponent gives any name back (a lone surrogate, which
 * UTF-8 cannot hold, comes back as U+FFFD).
 */
export function percentEncodeHeaderValue(text: string): string {
  if (KEPT.test(text)) return text;
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    encoded += isKeptByte(byte) ? String.fromCharCode(byte) : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return encoded;
}
