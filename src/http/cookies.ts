// RFC 6265 section 5.2 attribute names: a client that echoes a whole Set-Cookie line back
// must not have them read as cookies.
const ATTRIBUTE_NAMES = new Set(['path', 'expires', 'max-age', 'domain', 'httponly', 'secure', 'samesite', 'priority', 'partitioned']);

/**
 * Parses a Cookie header into a null-prototype map. Lenient about what it skips (bare words,
 * attributes, bad escapes), strict about what it takes: the first value for a name wins.
 */
export function parseCookieHeader(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = Object.create(null) as Record<string, string>;
  if (header === undefined) return cookies;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0) continue;
    const name = pair.slice(0, equals).trim();
    if (name === '' || ATTRIBUTE_NAMES.has(name.toLowerCase()) || Object.hasOwn(cookies, name)) continue;
    let value = pair.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value.includes('%')) {
      try {
        value = decodeURIComponent(value);
      } catch {
        // Keep the raw value: skipping it would let a later duplicate win instead of the first.
      }
    }
    cookies[name] = value;
  }
  return cookies;
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
