import { createHash, randomBytes } from 'node:crypto';
import type { Amr } from '../auth/amr.js';
import { CODE_TTL_SECONDS, MAX_PENDING_CODES } from './limits.js';
import type { Scope } from './parameters.js';

// Authorization codes (docs/contract/oidc.md "Codes"): 256 random bits, good once for
// 60 seconds, bound to the client, the redirect URI, the PKCE challenge, the nonce and the session
// that made them. Held in memory by their digest (a restart ends the few in flight: the app starts the
// sign-in again). A used code is remembered a while longer, with what it issued, so that a second
// use (RFC 6749 section 4.1.2: the code leaked) revokes those tokens.

/**
 * The session record (its `ses`) a code, access token or refresh token was got through, and until when
 * its cookie lasts: ending that session ends them; once the cookie has expired on its own, only the
 * account's session key still binds them (refresh tokens outlive a sign-in: offline_access).
 */
export interface SignedInSession {
  readonly id: string;
  readonly until: number;
}

/** What the authorize step bound the code to. */
export interface CodeBinding {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string | undefined;
  readonly nonce: string | undefined;
  readonly username: string;
  /** The account's session key when the code was made: a change that ends its sessions ends the code. */
  readonly sessionKey: string;
  /** The session record the code was made through (docs/contract/links-and-sessions.md "What ends with a session"). */
  readonly session: SignedInSession | undefined;
  readonly scopes: readonly Scope[];
  readonly amr: Amr;
  readonly authTime: number;
}

/** What a redeemed code issued, for its revocation on a second use. */
interface CodeIssued {
  accessTokenDigest?: string;
  grantId?: string;
  /** Set by a second use: the first use, still issuing, revokes what it issues. */
  isRevoked?: boolean;
}

interface CodeRecord {
  readonly binding: CodeBinding;
  readonly expiresAt: number;
  isUsed: boolean;
  readonly issued: CodeIssued;
}

type CodeRedemption =
  | { readonly ok: true; readonly binding: CodeBinding; readonly issued: CodeIssued }
  | { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'used'; readonly issued?: CodeIssued };

/** A used code's record stays this long after it expired, to catch a late second use. */
const USED_CODE_MEMORY_SECONDS = 600;

const digestOf = (code: string): string => createHash('sha256').update(code, 'latin1').digest('base64url');

export type CodeStore = ReturnType<typeof createCodeStore>;

export function createCodeStore() {
  // Insertion order is issue order: the oldest records are at the front, for the sweep and the cap.
  const records = new Map<string, CodeRecord>();

  const sweep = (nowSeconds: number): void => {
    for (const [digest, record] of records) {
      const forgetAt = record.expiresAt + (record.isUsed ? USED_CODE_MEMORY_SECONDS : 0);
      if (forgetAt > nowSeconds && records.size < MAX_PENDING_CODES) break;
      records.delete(digest);
    }
  };

  return {
    /** A new code bound to `binding`. */
    issue(binding: CodeBinding, nowSeconds: number): string {
      sweep(nowSeconds);
      const code = randomBytes(32).toString('base64url');
      records.set(digestOf(code), { binding, expiresAt: nowSeconds + CODE_TTL_SECONDS, isUsed: false, issued: {} });
      return code;
    },

    /** Forgets every code made through one of the sessions `sessionIds` (they are ending): each is then unknown. */
    endSessions(sessionIds: ReadonlySet<string>): void {
      for (const [digest, record] of records) {
        const { session } = record.binding;
        if (session !== undefined && sessionIds.has(session.id) && !record.isUsed) records.delete(digest);
      }
    },

    /**
     * Spends `code`: its binding the first time within 60 seconds; a second time, 'used' with what
     * the first use issued (to revoke). The caller fills `issued` once it has issued the tokens.
     */
    redeem(code: string, nowSeconds: number): CodeRedemption {
      const record = records.get(digestOf(code));
      if (record === undefined) return { ok: false, reason: 'unknown' };
      if (record.isUsed) return { ok: false, reason: 'used', issued: record.issued };
      record.isUsed = true;
      if (nowSeconds >= record.expiresAt) return { ok: false, reason: 'expired' };
      return { ok: true, binding: record.binding, issued: record.issued };
    },
  };
}
