import type { IncomingHttpHeaders } from 'node:http';
import { splitHostPort } from './host-header.js';

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
  return requestHost === undefined || originHost === undefined || originHost !== hostName(requestHost);
}

/** The host (and port) of an Origin header, lower-cased; undefined for `null` or anything malformed. */
function hostOfOrigin(origin: string): string | undefined {
  const schemeEnd = origin.indexOf('://');
  if (schemeEnd < 0) return undefined;
  return hostName(origin.slice(schemeEnd + 3));
}

// RFC 3986 reg-name without percent-encoding or sub-delims: what DNS names and IPv4 literals are made of.
const HOST_NAME = /^[A-Za-z0-9._~-]+$/;

/** A host header's name and port as one lower-cased text, the default ports dropped; undefined when malformed. */
function hostName(host: string): string | undefined {
  const split = splitHostPort(host);
  if (split === undefined || split.port === '' || (!split.isBracketed && !HOST_NAME.test(split.host))) return undefined;
  const name = split.host.toLowerCase();
  const port = split.port === undefined || split.port === '80' || split.port === '443' ? '' : `:${split.port}`;
  return `${split.isBracketed ? `[${name}]` : name}${port}`;
}
