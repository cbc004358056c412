import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import { touchMachineToken } from '../store/machine-token-rules.js';
import type { StoredUser, UserStore } from '../store/users.js';
import { MACHINE_TOKEN_FORMAT, MACHINE_TOKEN_LENGTH, type StoredMachineToken } from '../validate/machine-token.js';
import { decodeUtf8Strict } from '../validate/utf8.js';
import type { EpochSeconds } from '../time.js';

// Machine tokens (SECURITY.md "Machine tokens and groups"): 256 random bits shown once, stored only as their
// SHA-256 digest, looked up by that digest. No scrypt: the token has the entropy a password lacks,
// so a fast digest is as safe to store, and checking one costs about what a cookie check costs.

/** A fresh token and what is stored of it. The token itself goes to the caller once and nowhere else. */
export function newMachineToken(): { readonly token: string; readonly digest: string; readonly id: string } {
  const token = `gh_${randomBytes(32).toString('base64url')}`;
  return { token, digest: machineTokenDigest(token), id: randomBytes(12).toString('base64url') };
}

const machineTokenDigest = (token: string): string => createHash('sha256').update(token, 'latin1').digest('base64url');

type MachineTokenCaller = { readonly user: StoredUser; readonly tokenId: string };
export type MachineTokenVerifier = ReturnType<typeof createMachineTokenVerifier>;

// "Basic " and the base64 of a 256-character username (up to 1,024 bytes of UTF-8), a colon and a token.
const MAX_BASIC_LENGTH = 6 + Math.ceil((1024 + 1 + MACHINE_TOKEN_LENGTH) / 3) * 4;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Last-used times are written at most this often per token. */
const LAST_USED_RESOLUTION_SECONDS = 3600;

type IndexEntry = { readonly user: StoredUser; readonly token: StoredMachineToken };

export function createMachineTokenVerifier(deps: { store: UserStore; logger: Logger; nowSeconds: () => EpochSeconds }) {
  const { store, logger } = deps;
  // Digest -> token, rebuilt when the store has changed since: a deleted token, a deleted user or
  // a password change is gone from the next request on.
  let index = new Map<string, IndexEntry>();
  let indexVersion = -1;
  // Tokens whose last-used write is queued: one write at a time per token.
  const touching = new Set<string>();

  const lookup = (token: string): IndexEntry | undefined => {
    if (indexVersion !== store.version) {
      index = new Map();
      for (const user of store.list()) {
        for (const stored of user.tokens ?? []) index.set(stored.digest, { user, token: stored });
      }
      indexVersion = store.version;
    }
    return index.get(machineTokenDigest(token));
  };

  const noteUse = (entry: IndexEntry, now: number): void => {
    const { user, token } = entry;
    if (token.lastUsedAt !== undefined && now - token.lastUsedAt < LAST_USED_RESOLUTION_SECONDS) return;
    if (touching.has(token.id)) return;
    touching.add(token.id);
    store
      .change((view) => touchMachineToken(view, user.username, token.id, now))
      .catch((error: unknown) => {
        // Only a convenience for the owner: a failed write (or a stopping service) is not the caller's problem.
        logger.warn('could not record when a machine token was last used', {
          tokenId: token.id,
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => touching.delete(token.id));
  };

  const open = (
    token: string, basicUsername: string | undefined,
  ): MachineTokenCaller | { readonly refused: string } => {
    if (token.length !== MACHINE_TOKEN_LENGTH || !MACHINE_TOKEN_FORMAT.test(token)) {
      return { refused: 'malformed machine token' };
    }
    const entry = lookup(token);
    if (entry === undefined) return { refused: 'unknown machine token' };
    const now = deps.nowSeconds();
    if (entry.token.expiresAt !== undefined && entry.token.expiresAt <= now) {
      return { refused: 'expired machine token' };
    }
    if (basicUsername !== undefined && basicUsername !== entry.user.username) {
      return { refused: 'machine token of another account' };
    }
    noteUse(entry, now);
    return { user: entry.user, tokenId: entry.token.id };
  };

  return {
    /**
     * The account behind an Authorization header carrying a machine token (`Bearer gh_…`, or Basic
     * with a username and a `gh_…` password); `{ refused }` when it carries one that does not open
     * (unknown, revoked, expired, another account's name, malformed); undefined when the header
     * carries no machine token at all, so the request's other credentials are judged. Never throws.
     */
    check(authorization: string | undefined): MachineTokenCaller | { readonly refused: string } | undefined {
      if (authorization === undefined || authorization.length < 7) return undefined;
      const scheme = authorization.slice(0, 7).toLowerCase();
      if (scheme === 'bearer ') {
        const token = authorization.slice(7).trim();
        return token.startsWith('gh_') ? open(token, undefined) : undefined;
      }
      if (scheme.startsWith('basic ')) {
        const encoded = authorization.slice(6).trim();
        if (encoded.length > MAX_BASIC_LENGTH || encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
        const text = decodeUtf8Strict(Buffer.from(encoded, 'base64'));
        if (text === undefined) return undefined;
        // RFC 7617: the user-id ends at the first colon; a token holds none, so a username may.
        const colon = text.lastIndexOf(':');
        if (colon < 0) return undefined;
        const password = text.slice(colon + 1);
        return password.startsWith('gh_') ? open(password, text.slice(0, colon)) : undefined;
      }
      return undefined;
    },
  };
}
