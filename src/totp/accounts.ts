import { randomBytes } from 'node:crypto';
import { encodeBase32 } from './base32.js';
import type { Sealer } from './seal.js';
import {
  findRecoveryDigest, matchTotpStep, newRecoveryCodes, otpauthUri, recoveryDigest, isTotpCodeShape,
} from './codes.js';
import { TotpNotPending, WrongCode } from '../errors.js';
import type { StoredTotp } from '../store/stored-fields.js';
import type { StoredUser } from '../store/users.js';
import type { EpochMs } from '../time.js';

/** What a code that signs in changes: the step it used, or the recovery code it spends. */
type TotpUse = { readonly step: number } | { readonly recoveryDigest: string };

export type TotpAccounts = ReturnType<typeof createTotpAccounts>;

const PENDING_MS = 10 * 60 * 1000;
// One pending set-up per account; the map is swept of expired ones when it grows past this.
const SWEEP_AT = 1000;
// Else a stolen session could guess the pending seed's code (3 in 10^6) a thousand times a second.
const MAX_WRONG_CONFIRMS = 5;

interface Pending {
  readonly seed: Buffer;
  readonly sessionKey: string;
  readonly expiresAtMs: EpochMs;
  wrongCodes: number;
}

/**
 * TOTP for accounts (docs/contract/accounts.md "Two-step sign-in", "The caller's own account"). Pending set-ups
 * live in memory only: a restart just means starting the set-up again, and nothing unconfirmed
 * ever reaches the users file. `onUnreadableSeed` hears of a sealed seed the key cannot open.
 */
export function createTotpAccounts(sealer: Sealer, onUnreadableSeed: () => void) {
  const pending = new Map<string, Pending>();
  /** Forgets a pending set-up (it was confirmed, or the account changed). */
  const forget = (username: string): void => {
    pending.get(username)?.seed.fill(0);
    pending.delete(username);
  };

  return {
    /** What `code` would use of this account's TOTP at `nowMs`, or undefined when it does not sign in. */
    judge(totp: StoredTotp, code: string, nowMs: EpochMs): TotpUse | undefined {
      if (isTotpCodeShape(code)) {
        const seed = sealer.open(totp.sealedSeed);
        if (seed === undefined) {
          onUnreadableSeed();
          return undefined;
        }
        const step = matchTotpStep(seed, code, nowMs, totp.lastUsedStep);
        seed.fill(0);
        return step === undefined ? undefined : { step };
      }
      const digest = recoveryDigest(code);
      if (digest === undefined || findRecoveryDigest(totp.recoveryDigests, digest) < 0) return undefined;
      return { recoveryDigest: digest };
    },
    /** `totp` with `use` spent, or undefined when it was spent meanwhile (a replay that raced). Run inside a store change. */
    spend(totp: StoredTotp, use: TotpUse): StoredTotp | undefined {
      if ('step' in use) return use.step > totp.lastUsedStep ? { ...totp, lastUsedStep: use.step } : undefined;
      const index = findRecoveryDigest(totp.recoveryDigests, use.recoveryDigest);
      if (index < 0) return undefined;
      return { ...totp, recoveryDigests: totp.recoveryDigests.filter((_, i) => i !== index) };
    },
    /** Starts (or restarts) a set-up for `user`, held in memory for 10 minutes: its seed as base32 and as a Key URI. */
    begin(user: StoredUser, nowMs: EpochMs): { readonly secret: string; readonly uri: string } {
      if (pending.size >= SWEEP_AT) {
        for (const [name, entry] of pending) if (entry.expiresAtMs <= nowMs) pending.delete(name);
      }
      // RFC 4226 section 4 asks for at least 128 bits; 160, the HMAC-SHA-1 key size, is what apps expect.
      const seed = randomBytes(20);
      pending.set(user.username, { seed, sessionKey: user.sessionKey, expiresAtMs: nowMs + PENDING_MS, wrongCodes: 0 });
      return { secret: encodeBase32(seed), uri: otpauthUri('Gatehouse', user.username, seed) };
    },
    /**
     * The TOTP to store once `code` proves the app holds the pending seed, and the recovery codes to
     * show once. Throws TotpNotPending (none, expired, dropped after 5 wrong codes, or the account's
     * credentials changed since) or WrongCode.
     */
    confirm(
      user: StoredUser, code: string, nowMs: EpochMs,
    ): { readonly totp: StoredTotp; readonly recoveryCodes: readonly string[] } {
      const entry = pending.get(user.username);
      if (entry === undefined || entry.expiresAtMs <= nowMs || entry.sessionKey !== user.sessionKey) {
        forget(user.username);
        throw new TotpNotPending();
      }
      const step = matchTotpStep(entry.seed, code, nowMs, -1);
      if (step === undefined) {
        entry.wrongCodes += 1;
        if (entry.wrongCodes >= MAX_WRONG_CONFIRMS) forget(user.username);
        throw new WrongCode();
      }
      const { codes, digests } = newRecoveryCodes();
      return {
        totp: { sealedSeed: sealer.seal(entry.seed), lastUsedStep: step, recoveryDigests: digests },
        recoveryCodes: codes,
      };
    },
    forget,
  };
}
