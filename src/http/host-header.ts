import { isIP } from 'node:net';

/**
 * `host[:port]` as in a `Host` header or an `X-Forwarded-For` hop (RFC 3986 authority): an IPv6
 * literal only in brackets, returned without them; a port of up to 5 digits (`''` after a bare
 * colon, undefined without one). Undefined when malformed, a bare IPv6 literal included (RFC 7230
 * section 5.4 wants brackets).
 */
export function splitHostPort(
  text: string,
): { readonly host: string; readonly port: string | undefined; readonly isBracketed: boolean } | undefined {
  const isBracketed = text.startsWith('[');
  const close = isBracketed ? text.indexOf(']') : -1;
  const host = isBracketed ? text.slice(1, close) : text.replace(/:[^:]*$/, '');
  const rest = isBracketed ? text.slice(close + 1) : text.slice(host.length);
  if (isBracketed ? close < 0 || isIP(host) !== 6 : host.includes(':')) return undefined;
  if (rest !== '' && !/^:\d{0,5}$/.test(rest)) return undefined;
  return { host, port: rest === '' ? undefined : rest.slice(1), isBracketed };
}

/**
 * The host of a `Host` header without its port, lower-cased, or undefined when the header is
 * missing or malformed. An IPv6 literal keeps its brackets off: `[::1]:3000` gives `::1`.
 */
export function hostOfHeader(header: string | undefined): string | undefined {
  const host = header === undefined ? undefined : splitHostPort(header)?.host;
  return host === undefined || host === '' ? undefined : host.toLowerCase();
}

/**
 * Whether a request with this `Host` may make the first registration (docs/security-notes.md "DNS
 * rebinding"): an IP literal, exactly `localhost`, or a name the operator listed. A page that
 * re-points its own name at 127.0.0.1 still sends its own name, so it is refused.
 */
export function createFirstRegistrationHostCheck(
  allowedHosts: readonly string[],
): (hostHeader: string | undefined) => boolean {
  const allowed = new Set(allowedHosts.map((name) => name.toLowerCase()));
  return (hostHeader) => {
    const host = hostOfHeader(hostHeader);
    if (host === undefined) return false;
    return isIP(host) !== 0 || host === 'localhost' || allowed.has(host);
  };
}
