import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { TokenInvalid } from '../errors.js';
import { readAmr, type Amr } from './amr.js';
import {
  decodeJsonSegment, encodeJsonSegment, headerRefusal, joinCompact, splitCompact, timeRefusal, type CompactRefusal,
  type JsonObject, type TimeRefusal,
} from './jose.js';
import type { EpochSeconds } from '../time.js';

export interface SessionClaims {
  readonly username: string;
  readonly iat: EpochSeconds;
  readonly exp: EpochSeconds;
  /** The user's session key when we issued the token; absent in tokens minted elsewhere (content tokens). */
  readonly sid?: string;
  /** How the session was made (RFC 8176); absent in tokens minted elsewhere and in older ones: one factor. */
  readonly amr?: Amr;
  /** The session record's id (store/session-file.ts); absent in tokens minted elsewhere and in older ones. */
  readonly ses?: string;
}

/** Why the claims of a correctly signed token are not a session's: the claim named is missing or malformed. */
type SessionClaimRefusal = 'username' | 'sid' | 'ses' | 'amr';
/** Why a session token is refused; session.ts turns every one into the same 401. */
export type SessionTokenRefusal = CompactRefusal | TimeRefusal | SessionClaimRefusal;

type TokenInspection =
  | { readonly ok: true; readonly claims: SessionClaims }
  | { readonly ok: false; readonly reason: SessionTokenRefusal };

export type TokenCodec = ReturnType<typeof createTokenCodec>;

// Far above any token we issue; stops a 100 KB cookie from costing an HMAC over 100 KB.
export const MAX_TOKEN_LENGTH = 4096;
// Tolerance for `iat` ahead of our clock (a token from a peer with a fast clock).
export const IAT_SKEW_SECONDS = 60;

export const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** HMAC-SHA256 keys shorter than the hash output are weaker than the MAC (RFC 2104 section 3). */
export const MIN_SECRET_BYTES = 32;
// An HMAC-SHA256 is 32 bytes: 43 base64url characters without padding.
const SIGNATURE_LENGTH = 43;
const ALLOWED_ALGS: readonly string[] = ['HS256'];
const OUR_HEADER = encodeJsonSegment({ alg: 'HS256', typ: 'JWT' });

const refuse = (reason: SessionTokenRefusal): TokenInspection => ({ ok: false, reason });

// Checked claims of tokens whose MAC has just passed, so a session's repeat requests skip the
// base64, JSON and shape work; the MAC, exp and iat checks still run each time.
const MAX_CACHED_CLAIMS = 10_000;

/** Creates a signer/verifier bound to one secret (at least 32 bytes). */
export function createTokenCodec(secret: Buffer) {
  if (secret.length < MIN_SECRET_BYTES) throw new TypeError(`the token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  const key = createSecretKey(secret);
  const mac = (signingInput: string): string => createHmac('sha256', key).update(signingInput).digest('base64url');
  // Buffers kept for the comparison, not made per request.
  const expected = Buffer.alloc(SIGNATURE_LENGTH);
  const received = Buffer.alloc(SIGNATURE_LENGTH);
  // Keyed by the signature, read only after the MAC matched: equal keys mean equal payloads.
  const accepted = new Map<string, Extract<TokenInspection, { ok: true }>>();

  /**
   * The claims of a token this secret signed and that is live at `nowSeconds`, or why not. Never
   * throws. The steps in order: length and three segments, the header's alg exactly HS256, the MAC
   * over the received bytes in constant time, then the payload, then exp and iat against the clock.
   */
  const inspect = (token: string, nowSeconds: number): TokenInspection => {
    const segments = splitCompact(token, MAX_TOKEN_LENGTH);
    if (typeof segments === 'string') return refuse(segments);

    // Our own spelling of the header skips the decoding; any other is read and checked.
    if (segments.header !== OUR_HEADER) {
      const header = decodeJsonSegment(segments.header);
      if (header === undefined) return refuse('header');
      const problem = headerRefusal(header, ALLOWED_ALGS);
      if (problem !== undefined) return refuse(problem);
    }

    // Comparing canonical base64url encodings also refuses other spellings of the same bytes; the
    // received one must be base64url first: as latin1, U+0141 would equal "A" (0x41), giving a
    // revoked token (remembered by its spelling) a way back in.
    const { signature } = segments;
    if (signature.length !== SIGNATURE_LENGTH || !BASE64URL.test(signature)) return refuse('signature');
    expected.write(mac(segments.signingInput), 'latin1');
    received.write(signature, 'latin1');
    if (!timingSafeEqual(received, expected)) return refuse('signature');

    const known = accepted.get(signature);
    if (known !== undefined) {
      const late = timeRefusal(known.claims.exp, known.claims.iat, nowSeconds, IAT_SKEW_SECONDS);
      return late === undefined ? known : refuse(late);
    }
    const payload = decodeJsonSegment(segments.payload);
    if (payload === undefined) return refuse('payload');
    const result = checkClaims(payload, nowSeconds);
    if (result.ok) {
      if (accepted.size >= MAX_CACHED_CLAIMS) accepted.clear();
      accepted.set(signature, result);
    }
    return result;
  };

  return {
    /** Signs `claims` (plus any extra claims) as an HS256 JWS compact token. */
    sign(claims: SessionClaims & Readonly<Record<string, unknown>>): string {
      return joinCompact(OUR_HEADER, claims, mac);
    },
    inspect,
    /** Like inspect, but throws TokenInvalid (its `reason` and `cause` the refusal) for a refused token. */
    verify(token: string, nowSeconds: number): SessionClaims {
      const result = inspect(token, nowSeconds);
      if (!result.ok) throw new TokenInvalid(result.reason);
      return result.claims;
    },
  };
}

/** The session claims of a decoded payload live at `nowSeconds`, or why not; a success is frozen, for reuse. */
function checkClaims(payload: JsonObject, nowSeconds: number): TokenInspection {
  const late = timeRefusal(payload['exp'], payload['iat'], nowSeconds, IAT_SKEW_SECONDS);
  if (late !== undefined) return refuse(late);
  // timeRefusal passed both as finite numbers.
  const iat = payload['iat'] as number;
  const exp = payload['exp'] as number;
  const username = payload['username'];
  if (typeof username !== 'string') return refuse('username');
  const sid = payload['sid'];
  if (sid === undefined) return Object.freeze({ ok: true, claims: Object.freeze({ username, iat, exp }) });
  if (typeof sid !== 'string') return refuse('sid');
  const ses = payload['ses'];
  if (ses !== undefined && typeof ses !== 'string') return refuse('ses');
  const withSession = ses === undefined ? {} : { ses };
  if (payload['amr'] === undefined) {
    return Object.freeze({ ok: true, claims: Object.freeze({ username, iat, exp, sid, ...withSession }) });
  }
  const amr = readAmr(payload['amr']);
  if (amr === undefined) return refuse('amr');
  return Object.freeze({ ok: true, claims: Object.freeze({ username, iat, exp, sid, amr, ...withSession }) });
}
