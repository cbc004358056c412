import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isErrorCode, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { readKeyFile } from '../store/key-file.js';
import { BASE64URL, MIN_SECRET_BYTES } from './jwt.js';

export const SECRET_FILE = 'secret';
// Far above any secret; a path naming some large file by mistake is refused, not read whole.
const MAX_SECRET_FILE_BYTES = 4096;

export class SecretInvalid extends Error {}

/** The secret from GATEHOUSE_SECRET (at least 32 characters); throws SecretInvalid when it is shorter. */
export function secretFromEnvironment(value: string): Buffer {
  if (value.length < MIN_SECRET_BYTES) {
    throw new SecretInvalid(`GATEHOUSE_SECRET must be at least ${MIN_SECRET_BYTES} characters (it has ${value.length}). Generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))"`);
  }
  return Buffer.from(value, 'utf8');
}

/**
 * The secret from GATEHOUSE_SECRET_FILE: the file's text without its trailing newline, held to
 * GATEHOUSE_SECRET's rule, after readKeyFile's owner and mode checks. Throws SecretInvalid.
 */
export async function readSecretFile(path: string, warn: (message: string) => void, uid: number | undefined = process.getuid?.()): Promise<Buffer> {
  const bytes = await readKeyFile(path, {
    label: `GATEHOUSE_SECRET_FILE ${path}`,
    maxBytes: MAX_SECRET_FILE_BYTES,
    swapHarm: 'replace the secret',
    readHarm: 'sign tokens',
    whenMissing: 'cannot be read: it does not exist',
    uid,
    warn,
    refuse: (message) => new SecretInvalid(message),
  });
  const text = bytes.toString('utf8').replace(/\r?\n$/, '');
  if (text.length < MIN_SECRET_BYTES) {
    throw new SecretInvalid(`GATEHOUSE_SECRET_FILE ${path} must hold at least ${MIN_SECRET_BYTES} characters (it has ${text.length}). Generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))" > ${path}`);
  }
  return Buffer.from(text, 'utf8');
}

/** Reads the data directory's secret file, creating it (32 random bytes, mode 0600) when absent. */
export async function loadOrCreateSecretFile(fs: StoreFileSystem, dataDir: string): Promise<Buffer> {
  const path = join(dataDir, SECRET_FILE);
  try {
    return parseSecretFile(path, (await fs.readFile(path)).toString('utf8'));
  } catch (error) {
    if (!isErrorCode(error, 'ENOENT')) throw error;
  }
  return writeNewSecret(fs, dataDir);
}

/** Replaces the secret file with fresh random bytes: every token signed before stops verifying. */
export async function writeNewSecret(fs: StoreFileSystem, dataDir: string): Promise<Buffer> {
  const secret = randomBytes(32);
  await writeFileAtomic(fs, join(dataDir, SECRET_FILE), Buffer.from(`${secret.toString('base64url')}\n`));
  return secret;
}

function parseSecretFile(path: string, text: string): Buffer {
  const encoded = text.trim();
  const secret = Buffer.from(encoded, 'base64url');
  if (!BASE64URL.test(encoded) || secret.length < MIN_SECRET_BYTES) {
    throw new SecretInvalid(`The secret file ${path} does not hold at least ${MIN_SECRET_BYTES} base64url-encoded bytes. Remove it to have a new one made (every session ends).`);
  }
  return secret;
}
