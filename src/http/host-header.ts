import { isIP } from 'node:net';

/**
 * The host of a `Host` header without its port, lower-cased, or undefined when the header is
 * missing or malformed. An IPv6 literal keeps its brackets off: `[::1]:3000` gives `::1`.
 */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let host = header;
  let port = '';
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return undefined;
    port = host.slice(close + 1);
    host = host.slice(1, close);
    if (isIP(host) !== 6) return undefined;
    if (port !== '' && !port.startsWith(':')) return undefined;
    port = port.slice(1);
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) {
      // A bare IPv6 literal is not a Host (RFC 7230 section 5.4 wants brackets).
      if (host.includes(':', colon + 1)) return undefined;
      port = host.slice(colon + 1);
      host = host.slice(0, colon);
    }
  }
  if (port !== '' && !/^\d{1,5}$/.test(port)) return undefined;
  if (host === '') return undefined;
  return host.toLowerCase();
}

/**
 * Whether a request with this `Host` may make the first registration (SECURITY.md "DNS
 * rebinding"): an IP literal, exactly `localhost`, or a name the operator listed. A page that
 * re-points its own name at 127.0.0.1 still sends its own name, so it is refused.
 */
export function createFirstRegistrationHostCheck(allowedHosts: readonly string[]): (hostHeader: string | undefined) => boolean {
  const allowed = new Set(allowedHosts.map((name) => name.toLowerCase()));
  return (hostHeader) => {
    const host = hostOfHeader(hostHeader);
    if (host === undefined) return false;
    return isIP(host) !== 0 || host === 'localhost' || allowed.has(host);
  };
}
