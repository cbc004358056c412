import { isIP } from 'node:net';

/** The parts of a Set-Cookie line a browser decides by (RFC 6265 section 5.2; the last of each attribute wins). */
interface SetCookie {
  readonly name: string;
  readonly value: string;
  readonly domain: string | undefined;
  readonly path: string | undefined;
  readonly isSecure: boolean;
}

export function parseSetCookie(line: string): SetCookie | undefined {
  const [pair = '', ...attributes] = line.split(';');
  const equals = pair.indexOf('=');
  if (equals <= 0) return undefined;
  let domain: string | undefined;
  let path: string | undefined;
  let isSecure = false;
  for (const attribute of attributes) {
    const at = attribute.indexOf('=');
    const name = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
    const value = at < 0 ? '' : attribute.slice(at + 1).trim();
    if (name === 'secure') isSecure = true;
    else if (name === 'domain' && value !== '') domain = value.replace(/^\./, '').toLowerCase();
    else if (name === 'path') path = value.startsWith('/') ? value : undefined;
  }
  return { name: pair.slice(0, equals).trim(), value: pair.slice(equals + 1).trim(), domain, path, isSecure };
}

/** http://localhost and loopback addresses are secure contexts: browsers keep Secure cookies there. */
function isTrustworthy(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return (
    url.protocol === 'https:' ||
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    /^127\./.test(host)
  );
}

/** RFC 6265 section 5.1.3. */
function domainMatches(host: string, domain: string): boolean {
  if (host === domain) return true;
  return isIP(host.replace(/^\[|\]$/g, '')) === 0 && host.endsWith(`.${domain}`);
}

/** RFC 6265 section 5.1.4. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/** The default-path of RFC 6265 section 5.1.4: the directory of the path the cookie was set on. */
function defaultPath(setPath: string): string {
  const slash = setPath.lastIndexOf('/');
  return slash <= 0 ? '/' : setPath.slice(0, slash);
}

/**
 * Why a browser would not keep the cookie set by the answer from `setAt`, or not send it to
 * `app`: one sentence with its fix, or undefined when it would.
 */
export function cookieProblem(cookie: SetCookie, setAt: URL, app: URL): string | undefined {
  const setHost = setAt.hostname.toLowerCase();
  const appHost = app.hostname.toLowerCase();
  if (cookie.isSecure && !isTrustworthy(setAt)) {
    return `the session cookie is Secure but ${setAt.origin} is plain http, so a browser drops it and the sign-in page comes back empty. Fix: serve the site over https, or remove --secure-cookie (GATEHOUSE_SECURE_COOKIE) and check that the proxy does not send X-Forwarded-Proto: https for http`;
  }
  if (cookie.isSecure && !isTrustworthy(app)) {
    return `the session cookie is Secure but the app at ${app.origin} is plain http, so a browser never sends it there. Fix: serve the app over https, or remove --secure-cookie (GATEHOUSE_SECURE_COOKIE)`;
  }
  if (cookie.domain !== undefined && !domainMatches(setHost, cookie.domain)) {
    return `the session cookie says Domain=${cookie.domain}, which does not cover ${setHost} where it is set, so a browser drops it. Fix: set --cookie-domain (GATEHOUSE_COOKIE_DOMAIN) to ${setHost} or a parent domain of it, or leave it unset`;
  }
  if (cookie.domain !== undefined && !domainMatches(appHost, cookie.domain)) {
    return `the session cookie says Domain=${cookie.domain}, which does not cover the app's host ${appHost}, so a browser never sends it there. Fix: set --cookie-domain (GATEHOUSE_COOKIE_DOMAIN) to a parent domain of both ${setHost} and ${appHost}`;
  }
  if (cookie.domain === undefined && setHost !== appHost) {
    return `the session cookie is set by ${setHost} without a Domain, so a browser never sends it to ${appHost}. Fix: set --cookie-domain (GATEHOUSE_COOKIE_DOMAIN) to a parent domain of both, or serve the sign-in page on ${appHost}`;
  }
  const path = cookie.path ?? defaultPath(setAt.pathname);
  if (!pathMatches(app.pathname, path)) {
    return `the session cookie says Path=${path}, which does not cover ${app.pathname}, so a browser never sends it to the app. Fix: Gatehouse sets the cookie's Path to its --base-uri; for a gate in front of apps leave --base-uri at / (the default)`;
  }
  return undefined;
}
