const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of `bytes`, or undefined when they are not valid UTF-8. Never U+FFFD in their place:
 * two different inputs would then read as one (two usernames merged, two passwords alike).
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
