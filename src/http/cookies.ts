function cookieValue(raw: string): string {
  let value = raw.trim();
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
 * echoes a whole Set-Cookie line back still yields its cookie. `wanted` must be a cookie name
 * such as `jwt`: attribute names (RFC 6265 section 5.2: Path, Expires, ...) are not special-cased.
 */
export function readCookie(header: string | undefined, wanted: string): string | undefined {
  if (header === undefined) return undefined;
  const length = header.length;
  let start = 0;
  // The first "=" at or after `start` (`length` when there is none). It is searched for again
  // only once the scan has passed it, so each character is looked at a bounded number of times:
  // searching from every segment start to the end of the header made 16 KB of ";" cost 134
  // million steps.
  let equals = -1;
  while (start < length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = length;
    if (equals < start) {
      equals = header.indexOf('=', start);
      if (equals < 0) equals = length;
    }
    if (equals < end && header.slice(start, equals).trim() === wanted) return cookieValue(header.slice(equals + 1, end));
    start = end + 1;
  }
  return undefined;
}

export interface CookieOptions {
  readonly path: string;
  readonly isSecure: boolean;
  /** `Domain=` (a checked DNS name, --cookie-domain): the cookie then reaches sub-domains too. Absent: host-only. */
  readonly domain?: string | undefined;
}

const EPOCH = 'Thu, 01 Jan 1970 00:00:00 GMT';

/** The session cookie (INTERFACE.md, "Tokens and cookies"). */
export function sessionCookie(token: string, maxAgeSeconds: number, nowMs: number, options: CookieOptions): string {
  const expires = new Date(nowMs + maxAgeSeconds * 1000).toUTCString();
  return `jwt=${token}; Path=${options.path}${domainOf(options)}; Max-Age=${maxAgeSeconds}; Expires=${expires}; HttpOnly; SameSite=Strict${options.isSecure ? '; Secure' : ''}`;
}

/** The cookie that clears the session on logout. */
export function clearedSessionCookie(options: CookieOptions): string {
  return `jwt=; Path=${options.path}${domainOf(options)}; Max-Age=0; Expires=${EPOCH}; HttpOnly; SameSite=Strict${options.isSecure ? '; Secure' : ''}`;
}

// A cookie set with Domain is only replaced by one with the same Domain: logout must carry it too.
function domainOf(options: CookieOptions): string {
  return options.domain === undefined ? '' : `; Domain=${options.domain}`;
}
