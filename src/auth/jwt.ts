import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { TokenInvalid } from '../errors.js';
import { isPlainObject } from '../validate/check.js';
import { readAmr, type Amr } from './amr.js';

export interface SessionClaims {
  readonly username: string;
  readonly iat: number;
  readonly exp: number;
  /** The user's session key when we issued the token; absent in tokens minted elsewhere (content tokens). */
  readonly sid?: string;
  /** How the session was made (RFC 8176); absent in tokens minted elsewhere and in older ones: one factor. */
  readonly amr?: Amr;
  /** The session record's id (store/session-file.ts); absent in tokens minted elsewhere and in older ones. */
  readonly ses?: string;
}

export type TokenInspection =
  | { readonly ok: true; readonly claims: SessionClaims }
  | { readonly ok: false; readonly reason: string };

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
const OUR_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

// Refusals are plain values, not exceptions: the 401 path is the cheapest request an outsider
// can send, so it must not pay for building error objects and stack traces.
const refuse = (reason: string): TokenInspection => ({ ok: false, reason });

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

  /** The claims of a token this secret signed and that is live at `nowSeconds`, or why not. Never throws. */
  const inspect = (token: string, nowSeconds: number): TokenInspection => {
    // RFC 7515 section 7.1 (compact form): exactly three base64url segments.
    if (token.length > MAX_TOKEN_LENGTH) return refuse('too long');
    const firstDot = token.indexOf('.');
    const secondDot = token.indexOf('.', firstDot + 1);
    if (firstDot < 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) !== -1) return refuse('segments');
    const headerSegment = token.slice(0, firstDot);
    const payloadSegment = token.slice(firstDot + 1, secondDot);
    const signatureSegment = token.slice(secondDot + 1);

    // RFC 8725 section 3.1: the algorithm is ours to choose, never the token's.
    if (headerSegment !== OUR_HEADER) {
      const header = decodeJsonSegment(headerSegment, 'header');
      if (typeof header === 'string') return refuse(header);
      const problem = headerProblem(header);
      if (problem !== undefined) return refuse(problem);
    }

    // Comparing canonical base64url encodings also refuses other spellings of the same bytes; the
    // received one must be base64url first: as latin1, U+0141 would equal "A" (0x41), giving a
    // revoked token (remembered by its spelling) a way back in.
    if (signatureSegment.length !== SIGNATURE_LENGTH || !BASE64URL.test(signatureSegment)) return refuse('signature');
    expected.write(mac(token.slice(0, secondDot)), 'latin1');
    received.write(signatureSegment, 'latin1');
    if (!timingSafeEqual(received, expected)) return refuse('signature');

    const known = accepted.get(signatureSegment);
    if (known !== undefined) {
      if (nowSeconds >= known.claims.exp) return refuse('expired');
      if (known.claims.iat > nowSeconds + IAT_SKEW_SECONDS) return refuse('iat in the future');
      return known;
    }
    const payload = decodeJsonSegment(payloadSegment, 'payload');
    if (typeof payload === 'string') return refuse(payload);
    const result = checkClaims(payload, nowSeconds);
    if (result.ok) {
      if (accepted.size >= MAX_CACHED_CLAIMS) accepted.clear();
      accepted.set(signatureSegment, result);
    }
    return result;
  };

  return {
    /** Signs `claims` (plus any extra claims) as an HS256 JWS compact token. */
    sign(claims: SessionClaims & Readonly<Record<string, unknown>>): string {
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      const signingInput = `${OUR_HEADER}.${payload}`;
      return `${signingInput}.${mac(signingInput)}`;
    },
    inspect,
    /** Like inspect, but throws TokenInvalid (with `reason`) for a refused token. */
    verify(token: string, nowSeconds: number): SessionClaims {
      const result = inspect(token, nowSeconds);
      if (!result.ok) throw new TokenInvalid(result.reason);
      return result.claims;
    },
  };
}

/** The session claims of a decoded payload live at `nowSeconds`, or why not; a success is frozen, for reuse. */
function checkClaims(payload: Readonly<Record<string, unknown>>, nowSeconds: number): TokenInspection {
  const exp = payload['exp'];
  const iat = payload['iat'];
  const username = payload['username'];
  // RFC 7519 section 4.1.4: not accepted on or after exp.
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return refuse('exp missing');
  if (nowSeconds >= exp) return refuse('expired');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return refuse('iat missing');
  if (iat > nowSeconds + IAT_SKEW_SECONDS) return refuse('iat in the future');
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

function headerProblem(header: Record<string, unknown>): string | undefined {
  if (header['alg'] !== 'HS256') return 'alg';
  // RFC 7515 section 4.1.11: we understand no extensions, so any `crit` is refused.
  if (Object.hasOwn(header, 'crit')) return 'crit';
  if (Object.hasOwn(header, 'typ') && header['typ'] !== 'JWT') return 'typ';
  return undefined;
}

/** The segment's JSON object, or the reason it is not one. */
function decodeJsonSegment(segment: string, part: string): Record<string, unknown> | string {
  if (!BASE64URL.test(segment)) return `${part} encoding`;
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) return `${part} encoding`;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return `${part} json`;
  }
  return isPlainObject(value) ? value : `${part} not an object`;
}
