// RFC 6265 section 5.2 attribute names: a client that echoes a whole Set-Cookie line back
// must not have them read as cookies.
const ATTRIBUTE_NAMES = new Set(['path', 'expires', 'max-age', 'domain', 'httponly', 'secure', 'samesite', 'priority', 'partitioned']);

/**
 * Walks the pairs of a Cookie header in order, skipping bare words and attribute names (a
 * client may echo a whole Set-Cookie line). `visit` returns true to stop.
 */
function scanCookies(header: string, visit: (name: string, value: string) => boolean): void {
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = header.length;
    const equals = header.indexOf('=', start);
    if (equals >= 0 && equals < end) {
      const name = header.slice(start, equals).trim();
      if (name !== '' && !ATTRIBUTE_NAMES.has(name.toLowerCase()) && visit(name, cookieValue(header.slice(equals + 1, end)))) return;
    }
    start = end + 1;
  }
}

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
 * Parses a Cookie header into a null-prototype map. Lenient about what it skips (bare words,
 * attributes, bad escapes), strict about what it takes: the first value for a name wins.
 */
export function parseCookieHeader(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = Object.create(null) as Record<string, string>;
  if (header === undefined) return cookies;
  scanCookies(header, (name, value) => {
    if (!Object.hasOwn(cookies, name)) cookies[name] = value;
    return false;
  });
  return cookies;
}

/** The first value of one cookie (not an attribute name), as parseCookieHeader would give it, without building the map (hot path). */
export function readCookie(header: string | undefined, wanted: string): string | undefined {
  if (header === undefined) return undefined;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = header.length;
    const equals = header.indexOf('=', start);
    if (equals >= 0 && equals < end && header.slice(start, equals).trim() === wanted) return cookieValue(header.slice(equals + 1, end));
    start = end + 1;
  }
  return undefined;
}

export interface CookieOptions {
  readonly path: string;
  readonly isSecure: boolean;
}

const EPOCH = 'Thu, 01 Jan 1970 00:00:00 GMT';

/** The session cookie (INTERFACE.md, "Tokens and cookies"). */
export function sessionCookie(token: string, maxAgeSeconds: number, nowMs: number, options: CookieOptions): string {
  const expires = new Date(nowMs + maxAgeSeconds * 1000).toUTCString();
  return `jwt=${token}; Path=${options.path}; Max-Age=${maxAgeSeconds}; Expires=${expires}; HttpOnly; SameSite=Strict${options.isSecure ? '; Secure' : ''}`;
}

/** The cookie that clears the session on logout. */
export function clearedSessionCookie(options: CookieOptions): string {
  return `jwt=; Path=${options.path}; Max-Age=0; Expires=${EPOCH}; HttpOnly; SameSite=Strict${options.isSecure ? '; Secure' : ''}`;
}
