import type { IncomingHttpHeaders } from 'node:http';
import { comparableHost } from './request-origin.js';

/**
 * True when a browser says another site started the request (docs/contract/access.md "Cross-site rule":
 * every change under /api/auth/ refuses it). `Sec-Fetch-Site` decides when present: `cross-site`, and
 * `same-site` (a sibling app on the same registrable domain), are refused. A browser too old to send
 * it is judged by `Origin`: refused when present and its host is not `requestHost` (the host the
 * request was sent to; the scheme is not compared, so a proxy that ends TLS does not break it).
 * Requests with neither header (scripts, Flood's own tests) are not a browser's: judged as before.
 */
export function isCrossSiteRequest(headers: IncomingHttpHeaders, requestHost: string | undefined): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site === 'cross-site' || site === 'same-site';
  const origin = headers.origin;
  if (origin === undefined) return false;
  const originHost = hostOfOrigin(origin);
  return requestHost === undefined || originHost === undefined || originHost !== comparableHost(requestHost);
}

/** The host (and port) of an Origin header, lower-cased; undefined for `null` or anything malformed. */
function hostOfOrigin(origin: string): string | undefined {
  const schemeEnd = origin.indexOf('://');
  if (schemeEnd < 0) return undefined;
  return comparableHost(origin.slice(schemeEnd + 3));
}
