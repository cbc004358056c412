import { createHash, randomBytes } from 'node:crypto';
import type { Amr } from '../auth/amr.js';
import { ACCESS_TOKEN_TTL_SECONDS, MAX_ACCESS_TOKENS } from './limits.js';
import type { SignedInSession } from './codes.js';
import type { Scope } from './parameters.js';

// Access tokens (docs/contract/oidc.md "Access tokens"): 256 random bits, opaque, good
// only at userinfo for at most an hour, held in memory by their digest. Opaque rather than signed, so
// that ending an account's sessions, removing the client or revoking the grant ends them at once; a
// restart ends them too (apps refresh, or sign in again). Nothing else in Gatehouse looks them up:
// the gate and the account routes never accept one.

interface AccessTokenRecord {
  readonly clientId: string;
  readonly username: string;
  /** The account's session key when issued: a change that ends its sessions ends the token. */
  readonly sessionKey: string;
  /** The session it was got through: ending that session ends it. */
  readonly session: SignedInSession | undefined;
  readonly scopes: readonly Scope[];
  /** How the person signed in (an edited client that now asks for two factors ends one-factor tokens). */
  readonly amr: Amr;
  /** The refresh token family it came with, if any: revoking that family revokes it. */
  readonly grantId: string | undefined;
  readonly expiresAt: number;
}

const digestOf = (token: string): string => createHash('sha256').update(token, 'latin1').digest('base64url');
/** 43 base64url characters: what every token we issue here looks like. */
const ACCESS_TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export type AccessTokenStore = ReturnType<typeof createAccessTokenStore>;

/** What a revocation request came to (RFC 7009 section 2.1). */
export type Revocation = 'revoked' | 'another client' | 'unknown';

export function createAccessTokenStore() {
  const records = new Map<string, AccessTokenRecord>();

  const sweep = (nowSeconds: number): void => {
    for (const [digest, record] of records) {
      if (record.expiresAt > nowSeconds && records.size < MAX_ACCESS_TOKENS) break;
      records.delete(digest);
    }
  };

  const find = (token: string, nowSeconds: number): AccessTokenRecord | undefined => {
    if (!ACCESS_TOKEN_FORMAT.test(token)) return undefined;
    const record = records.get(digestOf(token));
    return record !== undefined && record.expiresAt > nowSeconds ? record : undefined;
  };

  return {
    /** A new token for `record`; returns it, its digest (to revoke it by) and its lifetime in seconds. */
    issue(record: Omit<AccessTokenRecord, 'expiresAt'>, nowSeconds: number) {
      sweep(nowSeconds);
      const token = randomBytes(32).toString('base64url');
      const digest = digestOf(token);
      records.set(digest, { ...record, expiresAt: nowSeconds + ACCESS_TOKEN_TTL_SECONDS });
      return { token, digest, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
    },

    /** The live record of `token`, or undefined (unknown, malformed, expired). */
    find,

    /**
     * RFC 7009 section 2.1: revokes `token` when it is `clientId`'s live token. 'another client' when
     * it is another client's (left alone: the request is refused), 'unknown' when there is no such token.
     */
    revoke(token: string, clientId: string, nowSeconds: number): Revocation {
      const record = find(token, nowSeconds);
      if (record === undefined) return 'unknown';
      if (record.clientId !== clientId) return 'another client';
      records.delete(digestOf(token));
      return 'revoked';
    },

    revokeDigest(digest: string): void {
      records.delete(digest);
    },

    /** Revokes every token issued with the refresh token family `grantId`. */
    revokeGrant(grantId: string): void {
      for (const [digest, record] of records) if (record.grantId === grantId) records.delete(digest);
    },

    /** Revokes every token `drop` picks (an edited client's accounts it no longer lets in). */
    revokeWhere(drop: (record: AccessTokenRecord) => boolean): void {
      for (const [digest, record] of records) if (drop(record)) records.delete(digest);
    },

    /** Revokes every token of a removed client. */
    revokeClient(clientId: string): void {
      for (const [digest, record] of records) if (record.clientId === clientId) records.delete(digest);
    },
  };
}
