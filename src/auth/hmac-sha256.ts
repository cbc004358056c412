import { hash } from 'node:crypto';

const BLOCK_BYTES = 64; // SHA-256's block size
const DIGEST_BYTES = 32;
// A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair is 4 bytes for 2 units).
const MAX_UTF8_BYTES_PER_CHAR = 3;

/**
 * HMAC-SHA256 (RFC 2104) of UTF-8 text, base64url, built on node:crypto's one-shot SHA-256.
 * Gives what `createHmac('sha256', key).update(message).digest('base64url')` gives (tested
 * against it and RFC 4231), without creating a native Hmac object per message: on the verify
 * path that object, not the hashing, was the largest single cost (SECURITY.md, "HMAC").
 *
 * The padded key blocks are computed once; a message of up to `maxMessageChars` characters is
 * written after the inner pad in a buffer kept for the purpose (calls are synchronous, so no
 * two ever share it), longer ones get a buffer of their own.
 */
export function createHmacSha256(key: Buffer, maxMessageChars: number): (message: string) => string {
  if (key.length === 0) throw new TypeError('an HMAC key must not be empty');
  if (!Number.isInteger(maxMessageChars) || maxMessageChars < 0) throw new TypeError('maxMessageChars must be a non-negative integer');
  // RFC 2104 section 2: a key longer than the block is hashed first; a shorter one is zero-padded.
  const blockKey = Buffer.alloc(BLOCK_BYTES);
  (key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : key).copy(blockKey);
  const innerPad = Buffer.alloc(BLOCK_BYTES);
  for (let i = 0; i < BLOCK_BYTES; i++) innerPad[i] = (blockKey[i] ?? 0) ^ 0x36;
  // Outer input: (key XOR opad) followed by the inner digest.
  const outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES);
  for (let i = 0; i < BLOCK_BYTES; i++) outer[i] = (blockKey[i] ?? 0) ^ 0x5c;
  blockKey.fill(0);
  // Inner input: (key XOR ipad) followed by the message.
  const inner = Buffer.alloc(BLOCK_BYTES + maxMessageChars * MAX_UTF8_BYTES_PER_CHAR);
  innerPad.copy(inner);

  return (message) => {
    let innerDigest: Buffer;
    if (message.length <= maxMessageChars) {
      // Cannot be cut short: the buffer holds the longest UTF-8 form of this many characters.
      const written = inner.write(message, BLOCK_BYTES, 'utf8');
      innerDigest = hash('sha256', inner.subarray(0, BLOCK_BYTES + written), 'buffer');
    } else {
      innerDigest = hash('sha256', Buffer.concat([innerPad, Buffer.from(message, 'utf8')]), 'buffer');
    }
    innerDigest.copy(outer, BLOCK_BYTES);
    return hash('sha256', outer, 'base64url');
  };
}
