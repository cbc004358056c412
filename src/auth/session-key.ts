import { randomBytes } from 'node:crypto';

/**
 * A fresh random key for a user's sessions. Tokens we issue carry it as `sid`; every credential
 * change replaces it, so no token from before the change (even from the same second, even for
 * an account later re-created under the same name) matches afterwards.
 */
export function newSessionKey(): string {
  return randomBytes(16).toString('base64url');
}

/** A random id for one token (its `jti`, RFC 7519 section 4.1.7). */
export function newTokenId(): string {
  return randomBytes(12).toString('base64url');
}

export const SESSION_KEY_FORMAT = /^[A-Za-z0-9_-]{22}$/;
