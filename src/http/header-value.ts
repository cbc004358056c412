const HEX = '0123456789ABCDEF';

/** True when every character is visible ASCII (0x21-0x7E): no space, control, or byte a proxy may rewrite. */
export function isVisibleAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

/**
 * A string as a header value no proxy mangles and no input can break: its UTF-8 bytes, with every
 * byte outside visible ASCII (0x21-0x7E) and `%` itself written as %XX. ASCII names without
 * spaces or `%` pass unchanged; decodeURIComponent gives any name back (a lone surrogate, which
 * UTF-8 cannot hold, comes back as U+FFFD).
 */
export function percentEncodeHeaderValue(text: string): string {
  if (isVisibleAscii(text) && !text.includes('%')) return text;
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    encoded += byte < 0x21 || byte > 0x7e || byte === 0x25 ? `%${HEX[byte >> 4]}${HEX[byte & 15]}` : String.fromCharCode(byte);
  }
  return encoded;
}
