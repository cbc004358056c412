import type { EpochMs } from '../time.js';

// RFC 6265 section 5.2 trims only SP and HTAB; String.prototype.trim would read `\u00a0jwt=` as
// `jwt`, a name the proxies' cookie filters, browsers and this parser must all see the same way.
function isWsp(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function trimWsp(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isWsp(text.charCodeAt(start))) start += 1;
  while (end > start && isWsp(text.charCodeAt(end - 1))) end -= 1;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** True when header[start, end) is `wanted` with only SP and HTAB around it. */
function isNameAt(header: string, start: number, end: number, wanted: string): boolean {
  while (start < end && isWsp(header.charCodeAt(start))) start += 1;
  while (end > start && isWsp(header.charCodeAt(end - 1))) end -= 1;
  return end - start === wanted.length && header.startsWith(wanted, start);
}

function cookieValue(raw: string): string {
  let value = trimWsp(raw);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    // Keep the raw value: skipping it would let a later duplicate win instead of the first.
    return value;
  }
}

/**
 * The first value of the cookie `wanted` in a Cookie header, unquoted and percent-decoded (a bad
 * escape is kept raw), or undefined. Bare words and other pairs are passed over, so a client that
 * echoes a whole Set-Cookie line back still yields its cookie. Names and values are trimmed of SP
 * and HTAB only (RFC 6265 section 5.2), as the proxy recipes' filters match names. `wanted` must
 * be a cookie name such as `jwt`: attribute names (Path, Expires, ...) are not special-cased.
 */
export function readCookie(header: string | undefined, wanted: string): string | undefined {
  if (header === undefined) return undefined;
  const length = header.length;
  let start = 0;
  // The first "=" at or after `start` (`length` if none), searched for again only once passed:
  // searching from every segment start made 16 KB of ";" cost 134 million steps.
  let equals = -1;
  while (start < length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = length;
    if (equals < start) {
      equals = header.indexOf('=', start);
      if (equals < 0) equals = length;
    }
    if (equals < end && isNameAt(header, start, equals, wanted)) return cookieValue(header.slice(equals + 1, end));
    start = end + 1;
  }
  return undefined;
}

interface CookieOptions {
  readonly path: string;
  readonly isSecure: boolean;
  /** `Domain=` (a checked DNS name, --cookie-domain): the cookie then reaches sub-domains too. Absent: host-only. */
  readonly domain?: string | undefined;
}

/** The session cookie (docs/contract/flood-api.md "Tokens and cookies"). */
export function sessionCookie(token: string, maxAgeSeconds: number, nowMs: EpochMs, options: CookieOptions): string {
  return cookieLine(token, maxAgeSeconds, new Date(nowMs + maxAgeSeconds * 1000).toUTCString(), options);
}

/** The cookie that clears the session on logout. */
export function clearedSessionCookie(options: CookieOptions): string {
  return cookieLine('', 0, 'Thu, 01 Jan 1970 00:00:00 GMT', options);
}

function cookieLine(value: string, maxAgeSeconds: number, expires: string, options: CookieOptions): string {
  // A cookie set with Domain is only replaced by one with the same Domain: logout must carry it too.
  const domain = options.domain === undefined ? '' : `; Domain=${options.domain}`;
  const secure = options.isSecure ? '; Secure' : '';
  const lifetime = `Max-Age=${maxAgeSeconds}; Expires=${expires}`;
  return `jwt=${value}; Path=${options.path}${domain}; ${lifetime}; HttpOnly; SameSite=Strict${secure}`;
}
