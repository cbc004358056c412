import { createHmac, randomBytes } from 'node:crypto';

// Sign-in options for a username name the account's passkeys. An unknown name, or an account
// without passkeys, gets decoys instead: ids derived from the name with a key of the server's,
// so the answer is the same every time and looks like an account's (INTERFACE.md "Signing in":
// an unknown username gets options indistinguishable from a real one).

// Lengths real authenticators use for credential ids.
const DECOY_LENGTHS = [16, 20, 32, 48, 64] as const;

/** One or two decoy credential ids (base64url) for `username`, fixed for a given key. */
export function decoyCredentialIds(key: Buffer, username: string): string[] {
  const seed = createHmac('sha256', key).update(username, 'utf8').digest();
  const count = 1 + ((seed[0] ?? 0) % 2);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = DECOY_LENGTHS[(seed[1 + i] ?? 0) % DECOY_LENGTHS.length] ?? 32;
    // Two HMAC blocks hold the longest length (64 bytes).
    const block = (n: number): Buffer =>
      createHmac('sha256', key).update(`${i}:${n}:`).update(username, 'utf8').digest();
    ids.push(Buffer.concat([block(0), block(1)]).subarray(0, length).toString('base64url'));
  }
  return ids;
}

/** The key decoys are made with, derived from the token secret so they outlive a restart. */
export function decoyKeyOf(secret: Buffer): Buffer {
  return createHmac('sha256', secret).update('gatehouse passkey decoy credential ids').digest();
}

/** A fresh WebAuthn user.id for an account's first passkey: 16 random bytes, base64url (no personal data). */
export function newUserHandle(): string {
  return randomBytes(16).toString('base64url');
}
