import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isErrorCode, writeFileAtomic } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { readSmallFile, SmallFileRefused } from '../store/small-file.js';
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
 * GATEHOUSE_SECRET's rule. Refuses a file that group or others may write, or that belongs to
 * another uid than root or `uid` (they could swap the secret), and warns when others may read it.
 * Root may own it: Docker and Kubernetes secrets belong to root.
 */
export async function readSecretFile(path: string, warn: (message: string) => void, uid: number | undefined = process.getuid?.()): Promise<Buffer> {
  let file: Awaited<ReturnType<typeof readSmallFile>>;
  try {
    file = await readSmallFile(path, MAX_SECRET_FILE_BYTES);
  } catch (error) {
    if (error instanceof SmallFileRefused) throw new SecretInvalid(`GATEHOUSE_SECRET_FILE ${path} ${error.code === 'ENOENT' ? 'cannot be read: it does not exist' : error.message}.`);
    throw error;
  }
  const { stats } = file;
  if (uid !== undefined && stats.uid !== 0 && stats.uid !== uid) {
    throw new SecretInvalid(`GATEHOUSE_SECRET_FILE ${path} belongs to uid ${stats.uid}, neither root nor the uid Gatehouse runs as (${uid}): its owner could replace the secret. Give it to Gatehouse's uid or to root (chown ${uid} ${path}, or chown root ${path}), or run Gatehouse as uid ${stats.uid}.`);
  }
  const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
  if ((stats.mode & 0o022) !== 0) throw new SecretInvalid(`GATEHOUSE_SECRET_FILE ${path} is writable by group or others (mode ${mode}), who could replace the secret: chmod 0600 ${path} (or 0400).`);
  if ((stats.mode & 0o044) !== 0) warn(`GATEHOUSE_SECRET_FILE ${path} is readable by group or others (mode ${mode}): anyone who reads it can sign tokens; chmod 0600 ${path} unless this is a container secret only Gatehouse sees`);
  const text = file.bytes.toString('utf8').replace(/\r?\n$/, '');
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
