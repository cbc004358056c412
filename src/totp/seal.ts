import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { StoreFileSystem } from '../store/file-system.js';
import { readKeyFile } from '../store/key-file.js';
import { decodeKeyText, loadOrCreateKey, MAKE_KEY_COMMAND } from '../auth/secret.js';

// TOTP seeds are sealed (AES-256-GCM) with a key kept apart from users.json, so that a copy of
// users.json alone yields no second factor. The key is its own file, not derived from the token
// secret: `gatehouse secret rotate` must not make every enrolled authenticator useless.

export const SEAL_KEY_FILE = 'seal.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'v1.';
// The seal says what it holds: a sealed seed cannot be passed off as some other sealed value.
const PURPOSE = Buffer.from('gatehouse totp seed v1');
/** A sealed 20-byte seed is 67 characters; anything much longer is not one of ours. */
export const SEALED_FORMAT = /^v1\.[A-Za-z0-9_-]{40,250}$/;

export class SealKeyInvalid extends Error {}

export type Sealer = ReturnType<typeof createSealer>;

/** Seals and opens TOTP seeds under `key` (32 bytes; else TypeError). */
export function createSealer(key: Buffer) {
  if (key.length !== KEY_BYTES) throw new TypeError(`the seal key must be ${KEY_BYTES} bytes`);
  return {
    seal(plain: Uint8Array): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(PURPOSE);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    /** The plain bytes, or undefined when the text is not ours, was changed, or was sealed with another key. */
    open(sealed: string): Buffer | undefined {
      // The format's 40 characters at least are 30 bytes: more than an IV and a tag.
      if (!SEALED_FORMAT.test(sealed)) return undefined;
      const bytes = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
      try {
        const decipher = createDecipheriv(
          'aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES },
        );
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
export function loadOrCreateSealKey(fs: StoreFileSystem, dataDir: string): Promise<Buffer> {
  const path = join(dataDir, SEAL_KEY_FILE);
  return loadOrCreateKey(fs, path, (key) => checkSealKey(path, key));
}

/**
 * The seal key from `--seal-key-file` (a file outside the data directory, so that a backup of
 * the whole directory holds no usable seed either), after readKeyFile's owner and mode checks.
 * Throws SealKeyInvalid.
 */
export async function readSealKeyFile(
  path: string, warn: (message: string) => void, uid: number | undefined = process.getuid?.(),
): Promise<Buffer> {
  const bytes = await readKeyFile(path, {
    label: `--seal-key-file ${path}`,
    maxBytes: 4096,
    swapHarm: 'replace the seal key',
    readHarm: 'open the TOTP seeds sealed in users.json',
    whenMissing: `does not exist; make one with: ${MAKE_KEY_COMMAND} > ${path}`,
    uid,
    warn,
    refuse: (message) => new SealKeyInvalid(message),
  });
  return checkSealKey(path, decodeKeyText(bytes.toString('utf8')));
}

function checkSealKey(path: string, key: Buffer | undefined): Buffer {
  if (key?.length !== KEY_BYTES) {
    throw new SealKeyInvalid(`The seal key file ${path} does not hold ${KEY_BYTES} base64url-encoded bytes. Restore it from where you keep it: without it no enrolled authenticator works (removing it makes a new key, and every account must set up TOTP again).`);
  }
  return key;
}
