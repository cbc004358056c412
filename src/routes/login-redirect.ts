import type { IncomingHttpHeaders } from 'node:http';
import { isVisibleAscii } from '../http/header-value.js';

// Where the gate sends a browser it refuses (docs/contract/gate.md "Login redirect", "The 403 page"):
// the `login=` target, checked, with the original URL as `rd`, built only from safe header values.

// Far above any URL of the apps behind the gate; a token is at most 4,096 characters.
export const MAX_URL_LENGTH = 8192;
// nginx's default proxy_buffer_size (4 KiB) turns a longer Location into a 502: a longer `rd` is left out.
export const MAX_RD_LENGTH = 2048;

/** Where to send a browser without a session (`login`, the hint, `rd`); undefined keeps the 401. */
export function loginLocation(
  login: string, headers: IncomingHttpHeaders, allowedHosts: readonly string[], mfaHint: string | undefined,
): string | undefined {
  if (headers.accept?.includes('text/html') !== true || !isLoginTarget(login, allowedHosts)) return undefined;
  return withOriginalUrl(mfaHint === undefined ? login : withParameter(login, 'mfa', mfaHint), headers);
}

/** "Sign in as someone else" on the 403 page: the `logout` page beside a `login` target whose path ends in `login`. */
export function switchAccountUrlOf(
  login: string | undefined, headers: IncomingHttpHeaders, allowedHosts: readonly string[],
): string | undefined {
  if (login === undefined || !isLoginTarget(login, allowedHosts)) return undefined;
  const path = pathOf(login);
  if (!/(?:^|\/)login$/.test(path)) return undefined;
  return withOriginalUrl(`${path.slice(0, -'login'.length)}logout`, headers);
}

/** `target` with `rd`, the original URL percent-encoded, unless there is none or it is too long. */
function withOriginalUrl(target: string, headers: IncomingHttpHeaders): string {
  const original = originalUrlOf(headers);
  const rd = original === undefined ? '' : encodeURIComponent(original);
  return rd === '' || rd.length > MAX_RD_LENGTH ? target : withParameter(target, 'rd', rd);
}

function withParameter(target: string, name: string, value: string): string {
  return `${target}${target.includes('?') ? '&' : '?'}${name}=${value}`;
}

/**
 * True when the request being checked is for the login page itself. A path `login` is on the
 * original request's own site; an absolute one must name its host (an unknown host is not judged
 * a loop). Paths are compared as sent and decoded.
 */
export function isLoginPageRequest(login: string, headers: IncomingHttpHeaders): boolean {
  const uri = forwardedUriOf(headers);
  if (uri === undefined) return false;
  const requestedPath = pathOf(uri);
  let loginPath = pathOf(login);
  if (!login.startsWith('/')) {
    const host = forwardedHostOf(headers);
    const url = host === undefined ? undefined : parsedUrl(login);
    if (url === undefined || parsedUrl(`${url.protocol}//${host}/`)?.host !== url.host) return false;
    loginPath = url.pathname;
  }
  if (requestedPath === loginPath) return true;
  const decoded = decodedPath(requestedPath);
  return decoded !== undefined && decoded === decodedPath(loginPath);
}

function pathOf(uri: string): string {
  const end = uri.search(/[?#]/);
  return end < 0 ? uri : uri.slice(0, end);
}

function decodedPath(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

function isLoginTarget(login: string, allowedHosts: readonly string[]): boolean {
  if (login.length > MAX_URL_LENGTH || !isVisibleAscii(login)) return false;
  // A single slash: `//host` and `/\host` are other sites to a browser.
  if (login.startsWith('/')) return login[1] !== '/' && login[1] !== '\\';
  if (!login.startsWith('https://') && !login.startsWith('http://')) return false;
  const url = parsedUrl(login);
  // Anyone can put a link to this endpoint on a page: only the operator's hosts are redirected to.
  return url !== undefined && url.username === '' && url.password === '' && allowedHosts.includes(url.hostname);
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * The URL the user asked for, from the X-Forwarded-* headers (else Host and X-Original-URI); only
 * the path when the scheme or host is unknown, which the login page resolves against its origin.
 */
function originalUrlOf(headers: IncomingHttpHeaders): string | undefined {
  const uri = forwardedUriOf(headers);
  if (
    uri === undefined ||
    !uri.startsWith('/') ||
    uri.length > MAX_URL_LENGTH ||
    !isVisibleAscii(uri)
  ) {
    return undefined;
  }
  const proto = headers['x-forwarded-proto'];
  const host = forwardedHostOf(headers);
  if ((proto !== 'https' && proto !== 'http') || host === undefined || !isPlainHost(host)) return uri;
  return `${proto}://${host}${uri}`;
}

// X-Forwarded-Uri first, while the gate looks for a token in X-Original-URI first (gate-service.ts): the shipped
// snippets set exactly one of the two and remove the other, so the orders never disagree there.
function forwardedUriOf(headers: IncomingHttpHeaders): string | undefined {
  return headerText(headers['x-forwarded-uri']) ?? headerText(headers['x-original-uri']);
}

function forwardedHostOf(headers: IncomingHttpHeaders): string | undefined {
  return headerText(headers['x-forwarded-host']) ?? headers.host;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A host and optional port, nothing that would change where a URL points. */
function isPlainHost(host: string): boolean {
  if (host === '' || host.length > 300 || !isVisibleAscii(host)) return false;
  return (
    !host.includes('/') &&
    !host.includes('\\') &&
    !host.includes('@') &&
    !host.includes('?') &&
    !host.includes('#')
  );
}
