import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isErrorCode, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { readKeyFile } from '../store/key-file.js';
import { BASE64URL, MIN_SECRET_BYTES } from './jwt.js';

export const SECRET_FILE = 'secret';
export const MAKE_KEY_COMMAND = `node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))"`;

export class SecretInvalid extends Error {}

/** The secret from GATEHOUSE_SECRET (at least 32 characters); throws SecretInvalid when it is shorter. */
export function secretFromEnvironment(value: string): Buffer {
  if (value.length < MIN_SECRET_BYTES) {
    throw new SecretInvalid(`GATEHOUSE_SECRET must be at least ${MIN_SECRET_BYTES} characters (it has ${value.length}). Generate one with: ${MAKE_KEY_COMMAND}`);
  }
  return Buffer.from(value, 'utf8');
}

/**
 * The secret from GATEHOUSE_SECRET_FILE: the file's text without its trailing newline, held to
 * GATEHOUSE_SECRET's rule, after readKeyFile's owner and mode checks. Throws SecretInvalid.
 */
export async function readSecretFile(
  path: string, warn: (message: string) => void, uid: number | undefined = process.getuid?.(),
): Promise<Buffer> {
  const bytes = await readKeyFile(path, {
    label: `GATEHOUSE_SECRET_FILE ${path}`,
    // Far above any secret; a path naming some large file by mistake is refused, not read whole.
    maxBytes: 4096,
    swapHarm: 'replace the secret',
    readHarm: 'sign tokens',
    whenMissing: 'cannot be read: it does not exist',
    uid,
    warn,
    refuse: (message) => new SecretInvalid(message),
  });
  const text = bytes.toString('utf8').replace(/\r?\n$/, '');
  if (text.length < MIN_SECRET_BYTES) {
    throw new SecretInvalid(`GATEHOUSE_SECRET_FILE ${path} must hold at least ${MIN_SECRET_BYTES} characters (it has ${text.length}). Generate one with: ${MAKE_KEY_COMMAND} > ${path}`);
  }
  return Buffer.from(text, 'utf8');
}

/** The bytes of a key file's base64url text (surrounding whitespace ignored), or undefined when it is not base64url. */
export function decodeKeyText(text: string): Buffer | undefined {
  const encoded = text.trim();
  return BASE64URL.test(encoded) ? Buffer.from(encoded, 'base64url') : undefined;
}

/**
 * A key file of the data directory (`secret`, `seal.key`): its key as `check` accepts it (or
 * throws), or, when absent, a new one of 32 random bytes (base64url, mode 0600).
 */
export async function loadOrCreateKey(
  fs: StoreFileSystem, path: string, check: (key?: Buffer) => Buffer,
): Promise<Buffer> {
  try {
    return check(decodeKeyText((await fs.readFile(path)).toString('utf8')));
  } catch (error) {
    if (!isErrorCode(error, 'ENOENT')) throw error;
  }
  return writeNewKey(fs, path);
}

/** Reads the data directory's secret file, creating it when absent. Throws SecretInvalid. */
export function loadOrCreateSecretFile(fs: StoreFileSystem, dataDir: string): Promise<Buffer> {
  const path = join(dataDir, SECRET_FILE);
  return loadOrCreateKey(fs, path, (secret) => {
    if (secret === undefined || secret.length < MIN_SECRET_BYTES) {
      throw new SecretInvalid(`The secret file ${path} does not hold at least ${MIN_SECRET_BYTES} base64url-encoded bytes. Remove it to have a new one made (every session ends).`);
    }
    return secret;
  });
}

/** Replaces the secret file with fresh random bytes: every token signed before stops verifying. */
export function writeNewSecret(fs: StoreFileSystem, dataDir: string): Promise<Buffer> {
  return writeNewKey(fs, join(dataDir, SECRET_FILE));
}

async function writeNewKey(fs: StoreFileSystem, path: string): Promise<Buffer> {
  const key = randomBytes(32);
  await writeFileAtomic(fs, path, Buffer.from(`${key.toString('base64url')}\n`));
  return key;
}
