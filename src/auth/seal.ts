import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isErrorCode, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { readKeyFile } from '../store/key-file.js';

// TOTP seeds are sealed (AES-256-GCM) with a key kept apart from users.json, so that a copy of
// users.json, users.json.prev or a backup of that file alone does not yield a second factor
// (SECURITY.md "Two-step sign-in"). The key is its own file, not derived from the token secret:
// `gatehouse secret rotate` ends sessions and must not make every enrolled authenticator useless.

export const SEAL_KEY_FILE = 'seal.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'v1.';
// The seal says what it holds: a sealed seed cannot be passed off as some other sealed value.
const PURPOSE = Buffer.from('gatehouse totp seed v1');
/** A sealed 20-byte seed is 67 characters; anything much longer is not one of ours. */
export const MAX_SEALED_LENGTH = 256;
export const SEALED_FORMAT = /^v1\.[A-Za-z0-9_-]{40,250}$/;

export class SealKeyInvalid extends Error {}

export interface Sealer {
  seal(plain: Uint8Array): string;
  /** The plain bytes, or undefined when the text is not ours, was changed, or was sealed with another key. */
  open(sealed: string): Buffer | undefined;
}

export function createSealer(key: Buffer): Sealer {
  if (key.length !== KEY_BYTES) throw new TypeError(`the seal key must be ${KEY_BYTES} bytes`);
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(PURPOSE);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    open(sealed) {
      if (sealed.length > MAX_SEALED_LENGTH || !SEALED_FORMAT.test(sealed)) return undefined;
      const bytes = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
        decipher.setAAD(PURPOSE);
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
      } catch {
        return undefined;
      }
    },
  };
}

/** The data directory's seal key, created (32 random bytes, mode 0600) when absent. Throws SealKeyInvalid. */
export async function loadOrCreateSealKey(fs: StoreFileSystem, dataDir: string): Promise<Buffer> {
  const path = join(dataDir, SEAL_KEY_FILE);
  try {
    return parseSealKey(path, (await fs.readFile(path)).toString('utf8'));
  } catch (error) {
    if (!isErrorCode(error, 'ENOENT')) throw error;
  }
  const key = randomBytes(KEY_BYTES);
  await writeFileAtomic(fs, path, Buffer.from(`${key.toString('base64url')}\n`));
  return key;
}

/**
 * The seal key from `--seal-key-file` (a file outside the data directory, so that a backup of
 * the whole directory holds no usable seed either), after readKeyFile's owner and mode checks.
 * Throws SealKeyInvalid.
 */
export async function readSealKeyFile(path: string, warn: (message: string) => void, uid: number | undefined = process.getuid?.()): Promise<Buffer> {
  const bytes = await readKeyFile(path, {
    label: `--seal-key-file ${path}`,
    maxBytes: 4096,
    swapHarm: 'replace the seal key',
    readHarm: 'open the TOTP seeds sealed in users.json',
    whenMissing: `does not exist; make one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))" > ${path}`,
    uid,
    warn,
    refuse: (message) => new SealKeyInvalid(message),
  });
  return parseSealKey(path, bytes.toString('utf8'));
}

function parseSealKey(path: string, text: string): Buffer {
  const encoded = text.trim();
  const key = Buffer.from(encoded, 'base64url');
  if (!/^[A-Za-z0-9_-]{43}$/.test(encoded) || key.length !== KEY_BYTES) {
    throw new SealKeyInvalid(`The seal key file ${path} does not hold ${KEY_BYTES} base64url-encoded bytes. Restore it from where you keep it: without it no enrolled authenticator works (removing it makes a new key, and every account must set up TOTP again).`);
  }
  return key;
}
