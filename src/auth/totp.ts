import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeBase32 } from './base32.js';

// RFC 6238 with the parameters every authenticator app assumes (INTERFACE.md "Stored per
// account"): HMAC-SHA-1, 6 digits, 30-second steps from the Unix epoch, one step of skew.
export const TOTP_SEED_BYTES = 20;
export const TOTP_DIGITS = 6;
export const TOTP_STEP_SECONDS = 30;
export const TOTP_SKEW_STEPS = 1;
export const RECOVERY_CODE_COUNT = 10;

const CODE_FORMAT = /^\d{6}$/;

/** A fresh 20-byte seed (RFC 4226 section 4 asks for at least 128 bits; 160 is the HMAC-SHA-1 block key size apps expect). */
export function newTotpSeed(): Buffer {
  return randomBytes(TOTP_SEED_BYTES);
}

/** RFC 4226 section 5.3: HOTP of `counter` with dynamic truncation, as `digits` decimal digits. */
export function hotp(seed: Uint8Array, counter: number, digits: number = TOTP_DIGITS): string {
  if (!Number.isSafeInteger(counter) || counter < 0) throw new TypeError('the HOTP counter must be a non-negative safe integer');
  if (!Number.isInteger(digits) || digits < 6 || digits > 9) throw new TypeError('HOTP codes have 6 to 9 digits');
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', seed).update(message).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The RFC 6238 time step holding `nowMs` (T0 = 0). */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/** The code an authenticator shows at `nowMs`. */
export function totpCode(seed: Uint8Array, nowMs: number, digits: number = TOTP_DIGITS): string {
  return hotp(seed, totpStep(nowMs), digits);
}

/** True for what could be a TOTP code (6 ASCII digits); anything else is tried as a recovery code. */
export function isTotpCodeShape(code: string): boolean {
  return CODE_FORMAT.test(code);
}

/**
 * The step whose code `code` is, within one step either side of `nowMs` and later than
 * `lastUsedStep` (a step signs in once: RFC 6238 section 5.2), or undefined. Every candidate
 * is compared in constant time, so the answer's timing says nothing about which one matched.
 */
export function matchTotpStep(seed: Uint8Array, code: string, nowMs: number, lastUsedStep: number): number | undefined {
  if (!isTotpCodeShape(code)) return undefined;
  const received = Buffer.from(code, 'latin1');
  const current = totpStep(nowMs);
  let matched: number | undefined;
  for (let step = current - TOTP_SKEW_STEPS; step <= current + TOTP_SKEW_STEPS; step++) {
    if (step < 0) continue;
    const isEqual = timingSafeEqual(received, Buffer.from(hotp(seed, step), 'latin1'));
    if (isEqual && step > lastUsedStep && matched === undefined) matched = step;
  }
  return matched;
}

/**
 * The Key URI an authenticator app reads (Google Authenticator's "Key Uri Format", which the
 * other apps follow): `otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=ISSUER&…`. The account
 * label is shortened to 64 characters: it is only a name shown in the app, and this keeps the
 * QR code small however long the username.
 */
export function otpauthUri(issuer: string, account: string, seed: Uint8Array): string {
  const label = [...account].length > MAX_LABEL_CHARACTERS ? `${[...account].slice(0, MAX_LABEL_CHARACTERS - 1).join('')}…` : account;
  const issuerPart = encodeURIComponent(issuer);
  return (
    `otpauth://totp/${issuerPart}:${encodeURIComponent(label)}` +
    `?secret=${encodeBase32(seed)}&issuer=${issuerPart}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_SECONDS}`
  );
}
const MAX_LABEL_CHARACTERS = 64;

// Recovery codes: 16 base32 characters (80 random bits) in four groups, `abcd-efgh-ijkl-mnop`.
// 80 bits make a plain SHA-256 digest safe to store: no one reverses it by trying codes.
const RECOVERY_GROUPS = 4;
const RECOVERY_GROUP_LENGTH = 4;
const RECOVERY_CODE_CHARACTERS = RECOVERY_GROUPS * RECOVERY_GROUP_LENGTH;
/** The longest text judged as a recovery code: dashes and spaces a person may type included. */
export const MAX_RECOVERY_INPUT_LENGTH = 64;
const RECOVERY_FORMAT = /^[a-z2-7]{16}$/;
export const RECOVERY_DIGEST_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** Ten fresh recovery codes, to be shown once, with their digests, to be stored. */
export function newRecoveryCodes(): { readonly codes: readonly string[]; readonly digests: readonly string[] } {
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODE_COUNT; i++) {
    const text = encodeBase32(randomBytes(10)).toLowerCase().slice(0, RECOVERY_CODE_CHARACTERS);
    const groups: string[] = [];
    for (let g = 0; g < RECOVERY_GROUPS; g++) groups.push(text.slice(g * RECOVERY_GROUP_LENGTH, (g + 1) * RECOVERY_GROUP_LENGTH));
    codes.push(groups.join('-'));
  }
  const digests = codes.map((code) => recoveryDigest(code) ?? '');
  return { codes, digests };
}

/**
 * The stored digest of a recovery code as a person may type it (either case, with or without
 * the dashes, spaces around groups), or undefined when it cannot be one.
 */
export function recoveryDigest(input: string): string | undefined {
  if (input.length > MAX_RECOVERY_INPUT_LENGTH) return undefined;
  const normalized = input.toLowerCase().replace(/[-\s]/g, '');
  if (!RECOVERY_FORMAT.test(normalized)) return undefined;
  return createHash('sha256').update(`gatehouse recovery code\0${normalized}`).digest('base64url');
}

/** The index of `digest` in `digests`, compared in constant time, or -1. */
export function findRecoveryDigest(digests: readonly string[], digest: string): number {
  const received = Buffer.from(digest, 'latin1');
  let found = -1;
  digests.forEach((stored, index) => {
    const candidate = Buffer.from(stored, 'latin1');
    if (candidate.length === received.length && timingSafeEqual(candidate, received) && found < 0) found = index;
  });
  return found;
}
