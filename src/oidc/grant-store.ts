import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readAmr, type Amr } from '../auth/amr.js';
import { SESSION_KEY_FORMAT } from '../auth/session-key.js';
import { openDocumentStore } from '../store/document-store.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { SESSION_ID_FORMAT } from '../store/session-file.js';
import { checkUsername } from '../validate/auth.js';
import { fail, isPlainObject, matching, objectOf, optional, pass, unixSeconds, type Checker, type CheckedType } from '../validate/check.js';
import type { Revocation } from './access-tokens.js';
import { CLIENT_ID_FORMAT } from './clients.js';
import { MAX_GRANTS, MAX_GRANTS_PER_ACCOUNT_AND_CLIENT, REFRESH_TOKEN_IDLE_SECONDS } from './limits.js';
import { SCOPES, type Scope } from './parameters.js';

// Refresh token families (RFC 9700 section 4.14.2): one grant per sign-in with offline_access,
// holding the digest of its one live refresh token. Each use replaces that token; presenting any
// other token of the family (a used one: it was stolen, or the app was) ends the whole family.
// A grant names the account's session key when it was made: any change that ends the account's
// sessions ends its grants too. A grant got through a session is removed when that session ends
// (provider.ts, through endWhere, before the session's record goes), so it cannot come back once the
// session's cookie would have expired. Durable: apps keep their refresh tokens across restarts.

export const GRANTS_FILE = 'oidc-grants.json';
const FORMAT = 1;
const GRANT_ID_FORMAT = /^[A-Za-z0-9_-]{22}$/;
const DIGEST_FORMAT = /^[A-Za-z0-9_-]{43}$/;

const checkScopeList: Checker<readonly Scope[]> = (input, path) => {
  if (!Array.isArray(input) || input.length > SCOPES.length) return fail(path, 'must be a list of scopes');
  const scopes = SCOPES.filter((scope) => input.includes(scope));
  return scopes.length === input.length ? pass(scopes) : fail(path, 'must hold only known scopes, each once');
};
const checkAmr: Checker<Amr> = (input, path) => {
  const amr = readAmr(input);
  return amr === undefined ? fail(path, 'must be an amr list') : pass(amr);
};

const checkStoredGrant = objectOf(
  {
    id: matching(GRANT_ID_FORMAT, 'a grant id'),
    clientId: matching(CLIENT_ID_FORMAT, 'a client id'),
    username: checkUsername,
    sessionKey: matching(SESSION_KEY_FORMAT, 'a session key'),
    /** The session it was got through; ending that session (before its cookie expired) ends the family. */
    session: optional(objectOf({ id: matching(SESSION_ID_FORMAT, 'a session id'), until: unixSeconds }, { rejectUnknownKeys: true })),
    scopes: checkScopeList,
    amr: checkAmr,
    authTime: unixSeconds,
    tokenDigest: matching(DIGEST_FORMAT, 'a token digest'),
    issuedAt: unixSeconds,
    createdAt: unixSeconds,
  },
  { rejectUnknownKeys: true },
);
export type StoredGrant = Readonly<CheckedType<typeof checkStoredGrant>>;
export type NewGrant = Omit<StoredGrant, 'id' | 'tokenDigest' | 'issuedAt' | 'createdAt'>;

interface GrantsDocument {
  readonly format: typeof FORMAT;
  readonly grants: readonly StoredGrant[];
}

const checkGrantsDocument: Checker<GrantsDocument> = (input) => {
  if (!isPlainObject(input) || input['format'] !== FORMAT) return fail('format', `must be ${FORMAT}`);
  const list = input['grants'];
  if (!Array.isArray(list) || list.length > MAX_GRANTS) return fail('grants', `must be an array of at most ${MAX_GRANTS} grants`);
  const grants: StoredGrant[] = [];
  const ids = new Set<string>();
  for (const [index, item] of list.entries()) {
    const result = checkStoredGrant(item, `grants[${index}]`);
    if (!result.ok) return result;
    if (ids.has(result.value.id)) return fail(`grants[${index}].id`, 'repeats a grant id');
    ids.add(result.value.id);
    grants.push(result.value);
  }
  return pass({ format: FORMAT, grants });
};

/** What presenting a refresh token came to. */
type RefreshOutcome =
  | { readonly ok: true; readonly grant: StoredGrant; readonly token: string }
  | { readonly ok: false; readonly reason: 'unknown' | 'reused' | 'expired' | 'ended'; readonly grant?: StoredGrant };

/** What revoking a refresh token came to, and the family it ended. */
interface GrantRevocation {
  readonly outcome: Revocation;
  readonly grant?: StoredGrant;
}

const digestOf = (token: string): string => createHash('sha256').update(token, 'latin1').digest('base64url');
const newToken = (grantId: string): string => `${grantId}.${randomBytes(32).toString('base64url')}`;
const grantIdOf = (token: string): string => token.slice(0, token.indexOf('.'));

function sameDigest(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(a, 'base64url'), Buffer.from(b, 'base64url'));
}

export type GrantStore = Awaited<ReturnType<typeof openGrantStore>>;

/** The data directory's refresh token families. Throws DocumentCorrupt for a file that cannot be used. */
export async function openGrantStore(fs: StoreFileSystem, dataDir: string) {
  const store = await openDocumentStore({
    fs, dataDir, fileName: GRANTS_FILE, description: 'OpenID Connect grants file', check: checkGrantsDocument,
    empty: { format: FORMAT, grants: [] },
  });
  const isLive = (grant: StoredGrant, nowSeconds: number): boolean => grant.issuedAt + REFRESH_TOKEN_IDLE_SECONDS > nowSeconds;
  const without = (document: GrantsDocument, drop: (grant: StoredGrant) => boolean): GrantsDocument => {
    const grants = document.grants.filter((grant) => !drop(grant));
    return grants.length === document.grants.length ? document : { format: FORMAT, grants };
  };

  return {
    /**
     * A new family and its first refresh token. Idle grants go; past the caps, the oldest of the
     * account's grants for this client (then the oldest of all) make room.
     */
    issue(fields: NewGrant, nowSeconds: number): Promise<{ grant: StoredGrant; token: string }> {
      return store.change((document) => {
        const id = randomBytes(16).toString('base64url');
        const token = newToken(id);
        const grant: StoredGrant = { ...fields, id, tokenDigest: digestOf(token), issuedAt: nowSeconds, createdAt: nowSeconds };
        const live = document.grants.filter((other) => isLive(other, nowSeconds));
        const sameHolder = live.filter((other) => other.username === fields.username && other.clientId === fields.clientId);
        const overflow = new Set(sameHolder.slice(0, Math.max(0, sameHolder.length - MAX_GRANTS_PER_ACCOUNT_AND_CLIENT + 1)));
        const kept = live.filter((other) => !overflow.has(other));
        const grants = [...kept.slice(Math.max(0, kept.length - MAX_GRANTS + 1)), grant];
        return { next: { format: FORMAT, grants }, result: { grant, token } };
      });
    },

    /**
     * Rotation (RFC 9700 section 4.14.2): the family's token is replaced and the new one returned
     * when `token` is its live one and `isValid(grant)` (the account's sessions, the client); any
     * other token of a known family ends that family ('reused').
     */
    refresh(token: string, nowSeconds: number, isValid: (grant: StoredGrant) => boolean): Promise<RefreshOutcome> {
      const id = grantIdOf(token);
      return store.change((document): { next: GrantsDocument; result: RefreshOutcome } => {
        const grant = document.grants.find((candidate) => candidate.id === id);
        if (grant === undefined) return { next: document, result: { ok: false, reason: 'unknown' } };
        const end = (reason: 'reused' | 'expired' | 'ended') => ({
          next: without(document, (other) => other === grant), result: { ok: false as const, reason, grant },
        });
        if (!sameDigest(digestOf(token), grant.tokenDigest)) return end('reused');
        if (!isLive(grant, nowSeconds)) return end('expired');
        if (!isValid(grant)) return end('ended');
        const next = newToken(grant.id);
        const rotated: StoredGrant = { ...grant, tokenDigest: digestOf(next), issuedAt: nowSeconds };
        const grants = document.grants.map((other) => (other === grant ? rotated : other));
        return { next: { format: FORMAT, grants }, result: { ok: true, grant: rotated, token: next } };
      });
    },

    /** The family `token` names (its id), without checking or changing anything: for reading its scopes first. */
    peek(token: string): StoredGrant | undefined {
      const id = grantIdOf(token);
      return store.current.grants.find((grant) => grant.id === id);
    },

    /**
     * RFC 7009 section 2.1: ends the family of `token` when `token` is its live token and the family
     * is `clientId`'s; another client's family is left alone ('another client': the request is
     * refused). A used or idle-expired token is 'unknown' (section 2.2: no error).
     */
    revoke(token: string, clientId: string, nowSeconds: number): Promise<GrantRevocation> {
      const id = grantIdOf(token);
      return store.change((document): { next: GrantsDocument; result: GrantRevocation } => {
        const grant = document.grants.find((candidate) => candidate.id === id);
        const isLiveToken = grant !== undefined && sameDigest(digestOf(token), grant.tokenDigest) && isLive(grant, nowSeconds);
        if (grant === undefined || !isLiveToken) return { next: document, result: { outcome: 'unknown' } };
        if (grant.clientId !== clientId) return { next: document, result: { outcome: 'another client' } };
        return { next: without(document, (other) => other === grant), result: { outcome: 'revoked', grant } };
      });
    },

    /** Ends one family by id (a code used twice revokes what it issued). */
    end(grantId: string): Promise<void> {
      return store.change((document) => ({ next: without(document, (grant) => grant.id === grantId), result: undefined }));
    },

    /** Ends every family `drop` picks (an edited client's accounts it no longer lets in); returns those ended. */
    endWhere(drop: (grant: StoredGrant) => boolean): Promise<readonly StoredGrant[]> {
      return store.change((document) => {
        const ended = document.grants.filter(drop);
        return { next: ended.length === 0 ? document : without(document, drop), result: ended };
      });
    },

    /** Ends every family of a removed client. */
    endClient(clientId: string): Promise<void> {
      return store.change((document) => ({ next: without(document, (grant) => grant.clientId === clientId), result: undefined }));
    },

    close: () => store.close(),
  };
}
