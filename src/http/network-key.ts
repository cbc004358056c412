import { isIP } from 'node:net';

const IPV6_SLASH_64 = /^([0-9a-f]{1,4}):([0-9a-f]{1,4}):([0-9a-f]{1,4}):([0-9a-f]{1,4})::\/64$/;

/**
 * The network a client key (throttleKeyOf) belongs to, for limits one network shares: an IPv4
 * address's /24, an IPv6 /64's /48 (a home or small site is commonly given a /48 or /56). Any
 * other key (raw text of a hop that is no address) is a network of its own.
 */
export function networkKeyOf(clientKey: string): string {
  if (isIP(clientKey) === 4) return `${clientKey.slice(0, clientKey.lastIndexOf('.'))}.0/24`;
  const match = IPV6_SLASH_64.exec(clientKey);
  return match === null ? clientKey : `${match[1]}:${match[2]}:${match[3]}::/48`;
}

/**
 * The network one home or subscriber holds, for limits no single household may exceed: an IPv4
 * address as it is, an IPv6 /64's /56 (the prefix many ISPs delegate to a home, RFC 6177). Any
 * other key is a network of its own.
 */
export function homeNetworkKeyOf(clientKey: string): string {
  const match = IPV6_SLASH_64.exec(clientKey);
  if (match === null) return clientKey;
  const high = (Number.parseInt(match[4] ?? '0', 16) & 0xff00).toString(16);
  return `${match[1]}:${match[2]}:${match[3]}:${high}::/56`;
}
