import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeBase32 } from './base32.js';
import type { EpochMs } from '../time.js';

// RFC 6238 with the parameters every authenticator app assumes
// (docs/contract/accounts.md "Stored per account"): HMAC-SHA-1, 6 digits, 30-second steps from the
// Unix epoch, one step of skew.
const TOTP_DIGITS = 6;
const TOTP_STEP_SECONDS = 30;
export const RECOVERY_CODE_COUNT = 10;
const MAX_LABEL_CHARACTERS = 64;
/** The longest text judged as a recovery code: dashes and spaces a person may type included. */
const MAX_RECOVERY_INPUT_LENGTH = 64;
export const RECOVERY_DIGEST_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const CODE_FORMAT = /^\d{6}$/;
const RECOVERY_FORMAT = /^[a-z2-7]{16}$/;

/** RFC 4226 section 5.3: HOTP of `counter` with dynamic truncation, as `digits` decimal digits. */
export function hotp(seed: Uint8Array, counter: number, digits: number = TOTP_DIGITS): string {
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new TypeError('the HOTP counter must be a non-negative safe integer');
  }
  if (!Number.isInteger(digits) || digits < 6 || digits > 9) throw new TypeError('HOTP codes have 6 to 9 digits');
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', seed).update(message).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The RFC 6238 time step holding `nowMs` (T0 = 0). */
export function totpStep(nowMs: EpochMs): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/** The code an authenticator shows at `nowMs`. */
export function totpCode(seed: Uint8Array, nowMs: EpochMs, digits: number = TOTP_DIGITS): string {
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
export function matchTotpStep(seed: Uint8Array, code: string, nowMs: EpochMs, lastUsedStep: number): number | undefined {
  if (!isTotpCodeShape(code)) return undefined;
  const received = Buffer.from(code, 'latin1');
  const current = totpStep(nowMs);
  let matched: number | undefined;
  for (let step = current - 1; step <= current + 1; step++) {
    if (step < 0) continue;
    const isEqual = timingSafeEqual(received, Buffer.from(hotp(seed, step), 'latin1'));
    if (isEqual && step > lastUsedStep && matched === undefined) matched = step;
  }
  return matched;
}

/**
 * The Key URI an authenticator app reads (Google Authenticator's "Key Uri Format"); the account
 * label is only a name shown in the app, cut to 64 characters so the QR code stays small.
 */
export function otpauthUri(issuer: string, account: string, seed: Uint8Array): string {
  const label = [...account].length > MAX_LABEL_CHARACTERS
    ? `${[...account].slice(0, MAX_LABEL_CHARACTERS - 1).join('')}…`
    : account;
  const issuerPart = encodeURIComponent(issuer);
  return (
    `otpauth://totp/${issuerPart}:${encodeURIComponent(label)}` +
    `?secret=${encodeBase32(seed)}&issuer=${issuerPart}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_SECONDS}`
  );
}

/**
 * Ten fresh recovery codes, to be shown once, with their digests, to be stored. A code is 16
 * base32 characters (80 random bits, so a plain SHA-256 digest cannot be reversed by trying
 * codes) in four groups: `abcd-efgh-ijkl-mnop`.
 */
export function newRecoveryCodes(): { readonly codes: readonly string[]; readonly digests: readonly string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    encodeBase32(randomBytes(10)).toLowerCase().replace(/(.{4})(?!$)/g, '$1-'),
  );
  return { codes, digests: codes.map((code) => recoveryDigest(code) ?? '') };
}

/** The stored digest of a recovery code as a person may type it (either case, dashes or spaces), or undefined. */
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
