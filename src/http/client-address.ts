import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { splitHostPort } from './host-header.js';

export interface ProxyTrust {
  /** The client's address: the socket's, or the last untrusted hop of X-Forwarded-For when the socket is a trusted proxy. */
  clientAddress(req: IncomingMessage): string;
  /** True when a trusted proxy says the client used HTTPS. */
  isForwardedHttps(req: IncomingMessage): boolean;
  /** True when the socket's peer is loopback or a trusted proxy (the only callers `--auth none` serves). */
  isTrustedPeer(req: IncomingMessage): boolean;
  /** The host the browser used: the last X-Forwarded-Host value when a trusted proxy sent it, else `Host`. */
  browserHost(req: IncomingMessage): string | undefined;
}

/** Removes the IPv4-mapped prefix so one client has one spelling (throttle keys, logs, fail2ban). */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The key a client address is throttled under: IPv4 as is, IPv6 by its /64, since one host
 * commonly holds a whole /64 and could otherwise rotate through endless addresses. Anything
 * else (an unparseable X-Forwarded-For hop kept as text) is a bucket of its own.
 */
export function throttleKeyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups;
  return `${groups.slice(0, 4).map((group) => group.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** The longest unparseable X-Forwarded-For hop kept as a client key; longer ones are cut. */
export const MAX_RAW_HOP_LENGTH = 64;

/**
 * One trimmed, non-empty X-Forwarded-For hop as a client address: `203.0.113.9:4711` gives
 * 203.0.113.9, `[2001:db8::5]:4711` and `[2001:db8::5]` give 2001:db8::5, IPv4-mapped is
 * normalized. Anything else (`unknown`, RFC 7239's `_hidden`, garbage) is keyed on its own
 * text: at most MAX_RAW_HOP_LENGTH characters, each outside printable ASCII replaced by `?`,
 * so it is one bucket of its own, safe in a log line, and never the proxy's address.
 */
export function parseHop(text: string): string {
  if (isIP(text) !== 0) return normalizeAddress(text);
  const split = splitHostPort(text);
  // A hop's port, when it has a colon, is not empty: `203.0.113.9:` is keyed on its text.
  if (split !== undefined && split.port !== '' && (split.isBracketed || isIP(split.host) === 4)) return normalizeAddress(split.host);
  return text.slice(0, MAX_RAW_HOP_LENGTH).replace(/[^\x20-\x7e]/g, '?');
}

/** Parses `--trust-proxy` entries (addresses or CIDRs); throws TypeError on a bad entry. */
export function createProxyTrust(entries: readonly string[]): ProxyTrust {
  const trusted = new BlockList();
  for (const entry of entries) {
    const parts = entry.split('/');
    const [address = '', prefix] = parts;
    const family = isIP(address);
    if (family === 0 || parts.length > 2) throw new TypeError(`--trust-proxy: ${JSON.stringify(entry)} is not an IP address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      trusted.addAddress(address, type);
    } else {
      const bits = Number(prefix);
      if (!/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) throw new TypeError(`--trust-proxy: ${JSON.stringify(entry)} has a bad prefix length`);
      trusted.addSubnet(address, bits, type);
    }
  }
  const isTrusted = (address: string): boolean => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  const socketAddress = (req: IncomingMessage): string => normalizeAddress(req.socket.remoteAddress ?? '');

  return {
    clientAddress(req) {
      let address = socketAddress(req);
      if (entries.length === 0 || !isTrusted(address)) return address;
      const forwarded = req.headers['x-forwarded-for'];
      if (typeof forwarded !== 'string') return address;
      // Walk from the nearest hop back; the first hop we do not trust is the client, whatever
      // it is: an unparseable hop cannot be trusted, and walking past it would reach hops the
      // client wrote itself.
      const hops = forwarded.split(',');
      for (let i = hops.length - 1; i >= 0; i--) {
        const text = (hops[i] ?? '').trim();
        if (text === '') continue;
        const hop = parseHop(text);
        address = hop;
        if (!isTrusted(hop)) return hop;
      }
      return address;
    },
    isTrustedPeer(req) {
      const address = socketAddress(req);
      return isLoopbackAddress(address) || (entries.length > 0 && isTrusted(address));
    },
    isForwardedHttps(req) {
      if (entries.length === 0 || !isTrusted(socketAddress(req))) return false;
      const proto = req.headers['x-forwarded-proto'];
      // The last value is the one our proxy wrote; earlier ones came from the client.
      return typeof proto === 'string' && proto.split(',').pop()?.trim().toLowerCase() === 'https';
    },
    browserHost(req) {
      const forwarded = req.headers['x-forwarded-host'];
      if (entries.length === 0 || typeof forwarded !== 'string' || !isTrusted(socketAddress(req))) return req.headers.host;
      // As with X-Forwarded-Proto, the last value is our proxy's.
      const last = forwarded.split(',').pop()?.trim() ?? '';
      return last === '' ? req.headers.host : last;
    },
  };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True for an IP literal in 127.0.0.0/8 or ::1, in any spelling Node parses (`0:0:0:0:0:0:0:1`,
 * `::ffff:127.0.0.1`). A host name is never loopback here, even one starting with "127.".
 */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * A `--host` that only this machine can reach: a loopback literal, or exactly `localhost`
 * (RFC 6761 keeps that name on loopback; `LOCALHOST`, `localhost.` or `localhost.evil` are
 * other names and are refused).
 */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host);
}
