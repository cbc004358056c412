import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export interface ScryptCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

// OWASP Password Storage Cheat Sheet lists equal-strength scrypt settings; N=2^15, r=8, p=3
// needs 32 MiB per hash in flight where N=2^17, r=8, p=1 needs 128 MiB (SECURITY.md).
export const DEFAULT_SCRYPT_COST: ScryptCost = Object.freeze({ N: 2 ** 15, r: 8, p: 3 });
const HASH_FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{43})$/;

/** Bytes scrypt needs for one hash: V is 128*r*(N+2), B is 128*r*p. */
export function scryptMemoryBytes(cost: ScryptCost): number {
  return 128 * cost.r * (cost.N + 2) + 128 * cost.r * cost.p;
}

/** A frozen copy of `cost`; throws TypeError for settings out of scrypt's (or our) bounds. */
export function checkScryptCost(cost: ScryptCost): ScryptCost {
  const { N, r, p } = cost;
  if (!Number.isInteger(N) || N < 2 || (N & (N - 1)) !== 0 || N > 2 ** 22) {
    throw new TypeError('scrypt N must be a power of two between 2 and 2^22');
  }
  if (!Number.isInteger(r) || r < 1 || r > 32) throw new TypeError('scrypt r must be an integer between 1 and 32');
  if (!Number.isInteger(p) || p < 1 || p > 16) throw new TypeError('scrypt p must be an integer between 1 and 16');
  return Object.freeze({ N, r, p });
}

export interface ScryptRequest {
  readonly password: string;
  readonly salt: Buffer;
  readonly keyBytes: number;
  readonly options: ScryptCost & { readonly maxmem: number };
}

/** Runs scrypt somewhere off the event loop: libuv's pool (the default) or the server's worker pool. */
type KeyDeriver = (request: ScryptRequest) => Promise<Buffer>;

const deriveOnLibuvPool: KeyDeriver = ({ password, salt, keyBytes, options }) =>
  new Promise((resolve, reject) => {
    scrypt(password, salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });

function deriveKey(password: string, salt: Buffer, cost: ScryptCost, derive: KeyDeriver): Promise<Buffer> {
  // Node's default maxmem (32 MiB) refuses these costs; allow exactly what they need plus slack.
  const options = { N: cost.N, r: cost.r, p: cost.p, maxmem: scryptMemoryBytes(cost) + 1024 * 1024 };
  return derive({ password: password.normalize('NFC'), salt, keyBytes: 32, options });
}

/** Hashes with a fresh random salt; the result carries its own cost so the default can be raised later. */
export async function hashPassword(password: string, cost: ScryptCost, derive = deriveOnLibuvPool): Promise<string> {
  const salt = randomBytes(16);
  const key = await deriveKey(password, salt, cost, derive);
  return `$scrypt$ln=${Math.log2(cost.N)},r=${cost.r},p=${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Parses a stored hash string; returns undefined for anything not in our format. */
export function parsePasswordHash(stored: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | undefined {
  const match = HASH_FORMAT.exec(stored);
  if (match === null) return undefined;
  try {
    const cost = checkScryptCost({ N: 2 ** Number(match[1]), r: Number(match[2]), p: Number(match[3]) });
    return { cost, salt: Buffer.from(match[4] ?? '', 'base64url'), key: Buffer.from(match[5] ?? '', 'base64url') };
  } catch {
    return undefined;
  }
}

/** True when `password` matches `stored`; compares in constant time; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string, derive = deriveOnLibuvPool): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (parsed === undefined) return false;
  const key = await deriveKey(password, parsed.salt, parsed.cost, derive);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
