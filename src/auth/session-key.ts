import { randomBytes } from 'node:crypto';

/**
 * A fresh random key for a user's sessions, carried by our tokens as `sid`. Every credential change
 * replaces it, so no earlier token (same second or re-created account alike) matches afterwards.
 */
export function newSessionKey(): string {
  return randomBytes(16).toString('base64url');
}

/** A random id for one token (its `jti`, RFC 7519 section 4.1.7). */
export function newTokenId(): string {
  return randomBytes(12).toString('base64url');
}

export const SESSION_KEY_FORMAT = /^[A-Za-z0-9_-]{22}$/;

/** A random id for one session record (store/session-file.ts), carried by its tokens as `ses`. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}
