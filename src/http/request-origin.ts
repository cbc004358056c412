import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { isLoopbackAddress, type ProxyTrust } from './client-address.js';
import { splitHostPort } from './host-header.js';

/**
 * Where a request was sent (docs/contract/own-origin.md): `home`, Gatehouse's own origin; `flood`, a
 * Flood web client's (--flood-url), where the seven Flood endpoints answer too; `app`, any other.
 */
export type OriginKind = 'home' | 'flood' | 'app';

// RFC 3986 reg-name without percent-encoding or sub-delims: what DNS names and IPv4 literals are made of.
const HOST_NAME = /^[A-Za-z0-9._~-]+$/;

/**
 * A `Host` (or `X-Forwarded-Host`, or an Origin's host) as one lower-cased text to compare, undefined
 * when malformed: the default ports dropped (the scheme is not compared, so a proxy that ends TLS does
 * not break it), an IPv6 literal in brackets in URL's one short spelling.
 */
export function comparableHost(host: string): string | undefined {
  const split = splitHostPort(host);
  if (split === undefined || split.port === '' || (!split.isBracketed && !HOST_NAME.test(split.host))) return undefined;
  const port = split.port === undefined || split.port === '80' || split.port === '443' ? '' : `:${split.port}`;
  const name = split.isBracketed ? ipv6Name(split.host) : split.host.toLowerCase();
  return name === undefined ? undefined : `${name}${port}`;
}

/**
 * An IPv6 literal in brackets, in URL's one short spelling; undefined for one URL refuses though
 * isIP takes it: a zone id (`fe80::1%25eth0`, RFC 6874), which no browser sends.
 */
function ipv6Name(literal: string): string | undefined {
  const url = `http://[${literal}]`;
  return URL.canParse(url) ? new URL(url).hostname : undefined;
}

/** Exactly `localhost`, or a loopback IP literal, on any port. */
function isLoopbackName(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return name === 'localhost' || (isIP(name) !== 0 && isLoopbackAddress(name));
}

export type OriginReader = ReturnType<typeof createOriginReader>;

/**
 * Reads a request's origin from the host the browser used (ProxyTrust.browserHost: `Host`, or a
 * trusted proxy's `X-Forwarded-Host`). Home is --public-url's origin and no other; without it,
 * `localhost` and loopback IP literals. A browser's script cannot choose `Host`; a tool can, and
 * gains nothing a stolen cookie does not already give it.
 */
export function createOriginReader(settings: {
  /** --public-url, base included; --flood-url's origins. */
  readonly publicUrl: string | undefined;
  readonly floodUrls: readonly string[];
  readonly proxyTrust: ProxyTrust;
}) {
  // config.ts accepts no URL whose host is not comparable; '' would match no request.
  const comparableOf = (url: string): string => comparableHost(new URL(url).host) ?? '';
  const home = settings.publicUrl === undefined ? undefined : comparableOf(settings.publicUrl);
  const floods = new Set(settings.floodUrls.map(comparableOf));
  return {
    /** --public-url: where the account pages are; undefined without it. */
    homeUrl: settings.publicUrl,
    kindOf(req: IncomingMessage): OriginKind {
      const raw = settings.proxyTrust.browserHost(req);
      const host = raw === undefined ? undefined : comparableHost(raw);
      if (host === undefined) return 'app';
      if (home === undefined ? isLoopbackName(host) : host === home) return 'home';
      return floods.has(host) ? 'flood' : 'app';
    },
  };
}
