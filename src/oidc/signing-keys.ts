import { generateKeyPair as generateKeyPairCallback, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unlessMissing, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { isPlainObject } from '../validate/check.js';
import {
  KeyRefused, privateJwkOf, publicJwkOf, SIGNING_ALGS, signingKeyFromJwk, verifyingKeyFromJwk, type PublicJwk,
  type SigningAlg, type SigningKey, type VerifyingKey,
} from './jwk.js';
import { RETIRED_KEY_KEEP_SECONDS } from './limits.js';

// The id_token signing keys (docs/contract/oidc.md "Signing keys"): one RSA and one
// P-256 key in force, made on first start, in a file of their own beside users.json and apart from
// the session secret (which never signs anything for OpenID Connect). `gatehouse keys rotate` puts
// new ones in force and keeps the public half of the old ones, for the JWKS, until every id_token
// they signed has expired; their private half is dropped at once.

export const SIGNING_KEYS_FILE = 'oidc-keys.json';
const FORMAT = 1;
const MAX_STORED_KEYS = 64;
const generateKeyPair = promisify(generateKeyPairCallback);

/** The keys file cannot be used; it has not been changed. */
export class SigningKeysInvalid extends Error {}

interface RetiredKey {
  readonly key: VerifyingKey;
  readonly createdAt: number;
  readonly retiredAt: number;
  /** Unix seconds after which no id_token it signed is still live: it leaves the JWKS then. */
  readonly keepUntil: number;
}

interface KeysDocument {
  readonly active: Readonly<Record<SigningAlg, { readonly key: SigningKey; readonly createdAt: number }>>;
  readonly retired: readonly RetiredKey[];
}

export interface SigningKeySet {
  /** The key in force for `alg`. */
  signingKey(alg: SigningAlg): SigningKey;
  /** The key named `kid` among those in force and those retired but kept at `nowSeconds`. */
  find(kid: string | undefined, nowSeconds: number): VerifyingKey | undefined;
  /** The JWKS (RFC 7517 section 5) at `nowSeconds`: the keys in force, then the retired ones still kept. */
  jwks(nowSeconds: number): { readonly keys: readonly PublicJwk[] };
}

/**
 * The data directory's signing keys, made (RSA 2048 and P-256, file mode 0600 from creation) when
 * the file does not exist. Throws SigningKeysInvalid for a file that cannot be used.
 */
export async function loadOrCreateSigningKeys(
  fs: StoreFileSystem, dataDir: string, nowSeconds: number,
): Promise<SigningKeySet> {
  const path = join(dataDir, SIGNING_KEYS_FILE);
  let document = await readKeysFile(fs, path);
  if (document === undefined) {
    document = { active: await newActiveKeys(nowSeconds), retired: [] };
    await writeKeysFile(fs, path, document);
  }
  return keySetOf(document);
}

/**
 * `gatehouse keys rotate`: new keys in force; the old ones' public halves kept until every id_token
 * they signed has expired, retired keys past that dropped. Returns the kids added and retired.
 */
export async function rotateSigningKeys(
  fs: StoreFileSystem, dataDir: string, nowSeconds: number,
): Promise<{ readonly added: readonly string[]; readonly retired: readonly string[] }> {
  const path = join(dataDir, SIGNING_KEYS_FILE);
  const before = await readKeysFile(fs, path);
  const active = await newActiveKeys(nowSeconds);
  const retiring = before === undefined
    ? []
    : SIGNING_ALGS.map((alg) => ({
        key: before.active[alg].key,
        createdAt: before.active[alg].createdAt,
        retiredAt: nowSeconds,
        keepUntil: nowSeconds + RETIRED_KEY_KEEP_SECONDS,
      }));
  const stillKept = (before?.retired ?? []).filter((retired) => retired.keepUntil > nowSeconds);
  // A file is at most MAX_STORED_KEYS keys (more is refused at load): past it, rotations made in
  // quick succession drop the oldest retired keys early, and an id_token one of them signed no
  // longer verifies. Never refusing to rotate matters more: a rotation is what a leak asks for.
  const retired = [...retiring, ...stillKept].slice(0, MAX_STORED_KEYS - SIGNING_ALGS.length);
  await writeKeysFile(fs, path, { active, retired });
  return {
    added: SIGNING_ALGS.map((alg) => active[alg].key.kid),
    retired: retiring.map((retired) => retired.key.kid),
  };
}

function keySetOf(document: KeysDocument): SigningKeySet {
  const inForce = SIGNING_ALGS.map((alg) => document.active[alg].key);
  const inForceJwks = inForce.map(publicJwkOf);
  const retiredJwks = document.retired.map((retired) => ({ retired, jwk: publicJwkOf(retired.key) }));
  return {
    signingKey: (alg) => document.active[alg].key,
    find(kid, nowSeconds) {
      if (kid === undefined) return undefined;
      const found = inForce.find((key) => key.kid === kid);
      if (found !== undefined) return found;
      return document.retired.find((retired) => retired.key.kid === kid && retired.keepUntil > nowSeconds)?.key;
    },
    jwks(nowSeconds) {
      const kept = retiredJwks.filter(({ retired }) => retired.keepUntil > nowSeconds).map(({ jwk }) => jwk);
      return { keys: [...inForceJwks, ...kept] };
    },
  };
}

async function newActiveKeys(nowSeconds: number): Promise<KeysDocument['active']> {
  const [rsa, ec] = await Promise.all([
    generateKeyPair('rsa', { modulusLength: 2048 }),
    generateKeyPair('ec', { namedCurve: 'P-256' }),
  ]);
  const fromPair = (privateKey: KeyObject) => ({
    key: signingKeyFromJwk(privateKey.export({ format: 'jwk' })),
    createdAt: nowSeconds,
  });
  return { RS256: fromPair(rsa.privateKey), ES256: fromPair(ec.privateKey) };
}

async function writeKeysFile(fs: StoreFileSystem, path: string, document: KeysDocument): Promise<void> {
  const keys = [
    ...SIGNING_ALGS.map((alg) => {
      const { key, createdAt } = document.active[alg];
      return { kid: key.kid, alg, createdAt, private: privateJwkOf(key) };
    }),
    ...document.retired.map(({ key, createdAt, retiredAt, keepUntil }) => {
      return { kid: key.kid, alg: key.alg, createdAt, retiredAt, keepUntil, public: publicJwkOf(key) };
    }),
  ];
  const text = `{"format":${FORMAT},"keys":[\n${keys.map((key) => JSON.stringify(key)).join(',\n')}\n]}\n`;
  // No `.prev`: a retired private key is meant to be gone, not kept beside its successor.
  await writeFileAtomic(fs, path, Buffer.from(text, 'utf8'));
}

async function readKeysFile(fs: StoreFileSystem, path: string): Promise<KeysDocument | undefined> {
  const bytes = await unlessMissing(fs.readFile(path));
  if (bytes === undefined) return undefined;
  const corrupt = (detail: string): SigningKeysInvalid => new SigningKeysInvalid(
    `The OpenID Connect signing keys file ${path} cannot be used: ${detail}. It has not been changed. Restore it from a backup; or, to have new keys made, remove it (the apps signed in through Gatehouse fetch the new keys themselves, and their users sign in again).`,
  );
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw corrupt('it is not valid JSON');
  }
  if (!isPlainObject(parsed)) throw corrupt('it is not a JSON object');
  if (typeof parsed['format'] === 'number' && parsed['format'] > FORMAT) {
    throw new SigningKeysInvalid(`The OpenID Connect signing keys file ${path} was written by a newer Gatehouse (format ${parsed['format']}); this version reads format ${FORMAT}. It has not been changed.`);
  }
  if (parsed['format'] !== FORMAT) throw corrupt('it has no valid "format" number');
  const entries = parsed['keys'];
  if (!Array.isArray(entries) || entries.length > MAX_STORED_KEYS) throw corrupt(`"keys" is not an array of at most ${MAX_STORED_KEYS} keys`);
  const active: Partial<Record<SigningAlg, { key: SigningKey; createdAt: number }>> = {};
  const retired: RetiredKey[] = [];
  for (const [index, entry] of entries.entries()) {
    try {
      const read = readEntry(entry);
      if ('retiredAt' in read) retired.push(read);
      else if (active[read.key.alg] !== undefined) throw new KeyRefused(`a second ${read.key.alg} key in force`);
      else active[read.key.alg] = read;
    } catch (error) {
      if (error instanceof KeyRefused) throw corrupt(`keys[${index}]: ${error.message}`);
      throw error;
    }
  }
  const { RS256, ES256 } = active;
  if (RS256 === undefined || ES256 === undefined) throw corrupt('it needs one RS256 and one ES256 key in force');
  return { active: { RS256, ES256 }, retired };
}

/** One entry of the file: a key in force (its private JWK) or a retired one (public JWK). Throws KeyRefused. */
function readEntry(entry: unknown): { key: SigningKey; createdAt: number } | RetiredKey {
  if (!isPlainObject(entry)) throw new KeyRefused('is not an object');
  const seconds = (name: string): number => {
    const value = entry[name];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new KeyRefused(`"${name}" is not a time`);
    return value;
  };
  const createdAt = seconds('createdAt');
  const isRetired = Object.hasOwn(entry, 'retiredAt');
  const key = isRetired ? verifyingKeyFromJwk(entry['public']) : signingKeyFromJwk(entry['private']);
  if (entry['alg'] !== key.alg) throw new KeyRefused(`"alg" is not that of the key (${key.alg})`);
  if (entry['kid'] !== key.kid) throw new KeyRefused('"kid" is not the thumbprint of the key');
  if (!isRetired) return { key: key as SigningKey, createdAt };
  return { key, createdAt, retiredAt: seconds('retiredAt'), keepUntil: seconds('keepUntil') };
}
