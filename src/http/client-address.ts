import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { splitHostPort } from './host-header.js';

/** Removes the IPv4-mapped prefix so one client has one spelling (throttle keys, logs, fail2ban). */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The key a client address is throttled under: IPv4 as is, IPv6 by its /64 (one host commonly holds
 * a whole /64 to rotate through). Anything else (an unparseable X-Forwarded-For hop) is its own bucket.
 */
export function throttleKeyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  const groups = address.includes('::') ? [...headGroups, ...zeros, ...tailGroups] : headGroups;
  return `${groups.slice(0, 4).map((group) => group.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * One trimmed, non-empty X-Forwarded-For hop as a client address (`203.0.113.9:4711`, `[2001:db8::5]:4711`
 * and `[2001:db8::5]` lose port and brackets). Anything else (`unknown`, RFC 7239's `_hidden`) is keyed on
 * its own text, at most 64 characters, each outside printable ASCII as `?`: safe in a log line, never the proxy.
 */
function parseHop(text: string): string {
  if (isIP(text) !== 0) return normalizeAddress(text);
  const split = splitHostPort(text);
  // A hop's port, when it has a colon, is not empty: `203.0.113.9:` is keyed on its text.
  if (split !== undefined && split.port !== '' && (split.isBracketed || isIP(split.host) === 4)) {
    return normalizeAddress(split.host);
  }
  return text.slice(0, 64).replace(/[^\x20-\x7e]/g, '?');
}

export type ProxyTrust = ReturnType<typeof createProxyTrust>;

/** Parses `--trust-proxy` entries (addresses or CIDRs); throws TypeError on a bad entry. */
export function createProxyTrust(entries: readonly string[]) {
  const trusted = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) {
      throw new TypeError(`--trust-proxy: ${JSON.stringify(entry)} is not an IP address or CIDR`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      trusted.addAddress(address, type);
    } else {
      const bits = Number(prefix);
      if (!/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) {
        throw new TypeError(`--trust-proxy: ${JSON.stringify(entry)} has a bad prefix length`);
      }
      trusted.addSubnet(address, bits, type);
    }
  }
  const socketAddress = (req: IncomingMessage): string => normalizeAddress(req.socket.remoteAddress ?? '');
  const isProxy = (address: string): boolean => entries.length > 0 && isListed(trusted, address);
  // In a list header the last value is the one our proxy wrote; earlier ones came from the client.
  const lastFromProxy = (req: IncomingMessage, name: 'x-forwarded-proto' | 'x-forwarded-host'): string => {
    const value = req.headers[name];
    if (typeof value !== 'string' || !isProxy(socketAddress(req))) return '';
    return value.slice(value.lastIndexOf(',') + 1).trim();
  };

  return {
    /** The socket's address, or the last untrusted hop of X-Forwarded-For when the socket is a trusted proxy. */
    clientAddress(req: IncomingMessage): string {
      let address = socketAddress(req);
      if (!isProxy(address)) return address;
      const forwarded = req.headers['x-forwarded-for'];
      if (typeof forwarded !== 'string') return address;
      // Walk from the nearest hop back; the first hop we do not trust is the client, whatever it is
      // (walking past an unparseable hop would reach hops the client wrote itself).
      const hops = forwarded.split(',');
      for (let i = hops.length - 1; i >= 0; i--) {
        const text = (hops[i] ?? '').trim();
        if (text === '') continue;
        address = parseHop(text);
        if (!isProxy(address)) return address;
      }
      return address;
    },
    /** True when the socket's peer is listed in --trust-proxy, so its X-Forwarded-For is read. */
    isFromTrustedProxy: (req: IncomingMessage): boolean => isProxy(socketAddress(req)),
    /** True when the socket's peer is loopback or a trusted proxy (the only callers `--auth none` serves). */
    isTrustedPeer(req: IncomingMessage): boolean {
      const address = socketAddress(req);
      return isLoopbackAddress(address) || isProxy(address);
    },
    /** True when a trusted proxy says the client used HTTPS. */
    isForwardedHttps: (req: IncomingMessage) => lastFromProxy(req, 'x-forwarded-proto').toLowerCase() === 'https',
    /** The host the browser used: a trusted proxy's last X-Forwarded-Host (an empty one names none), else `Host`. */
    browserHost(req: IncomingMessage): string | undefined {
      if (req.headers['x-forwarded-host'] === undefined || !isProxy(socketAddress(req))) return req.headers.host;
      const host = lastFromProxy(req, 'x-forwarded-host');
      return host === '' ? undefined : host;
    },
  };
}

function isListed(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for an IP literal in 127.0.0.0/8 or ::1, in any spelling Node parses; a host name never is. */
export function isLoopbackAddress(address: string): boolean {
  return isListed(LOOPBACK, address);
}

/** A `--host` only this machine can reach: a loopback literal, or exactly `localhost` (RFC 6761; not `localhost.`). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host);
}
