import { createHmac, randomBytes } from 'node:crypto';
import { MAX_PASSKEYS } from './checks.js';

// Sign-in options for a username name the account's passkeys. An unknown name, or an account
// without passkeys, gets decoys instead: ids derived from the name with a key of the server's,
// so the answer is the same every time and looks like an account's
// (docs/contract/access.md "Decoys": an unknown username gets options indistinguishable from a real one).

/** Lengths real authenticators use for credential ids, in bytes. */
export const DECOY_LENGTHS = [16, 20, 32, 48, 64] as const;
/** As many as an account may have passkeys. */
export const MAX_DECOYS = MAX_PASSKEYS;

/**
 * 1 to 16 decoy credential ids (base64url) for `username`, fixed for a given key. How many is
 * fixed by the name's keyed hash, small numbers most often (n for a share of 2^-n of all names),
 * so an account with 3 or 5 passkeys looks like many unknown names; each id has a length real
 * ones have, chosen by the same hash.
 */
export function decoyCredentialIds(key: Buffer, username: string): string[] {
  const seed = createHmac('sha256', key).update(username, 'utf8').digest();
  const count = decoyCountOf(seed.readUInt16BE(0));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = DECOY_LENGTHS[(seed[2 + i] ?? 0) % DECOY_LENGTHS.length] ?? 32;
    // Two HMAC blocks hold the longest length (64 bytes).
    const block = (n: number): Buffer =>
      createHmac('sha256', key).update(`${i}:${n}:`).update(username, 'utf8').digest();
    ids.push(Buffer.concat([block(0), block(1)]).subarray(0, length).toString('base64url'));
  }
  return ids;
}

/** 1 plus the leading one bits of 16 hash bits, at most MAX_DECOYS: 1 for half, 2 for a quarter, 16 for 2^-15. */
function decoyCountOf(bits: number): number {
  let count = 1;
  while (count < MAX_DECOYS && (bits & (0x8000 >> (count - 1))) !== 0) count += 1;
  return count;
}

/** The key decoys are made with, derived from the token secret so they outlive a restart. */
export function decoyKeyOf(secret: Buffer): Buffer {
  return createHmac('sha256', secret).update('gatehouse passkey decoy credential ids').digest();
}

/** A fresh WebAuthn user.id for an account's first passkey: 16 random bytes, base64url (no personal data). */
export function newUserHandle(): string {
  return randomBytes(16).toString('base64url');
}
