import type { IncomingHttpHeaders } from 'node:http';

/** The proxy in front of the app, as its answers name it; undefined when they do not (Traefik sends no Server). */
export type ProxyKind = 'nginx' | 'Caddy' | undefined;

export function proxyKindOf(headers: IncomingHttpHeaders): ProxyKind {
  const server = headers['server'];
  if (typeof server !== 'string') return undefined;
  if (/^nginx\b/i.test(server)) return 'nginx';
  if (/^caddy\b/i.test(server)) return 'Caddy';
  return undefined;
}

/** The fix in each proxy's terms: nginx and Caddy (run by the tests), Traefik (from its documentation) where one applies. */
interface Fixes {
  readonly nginx: string;
  readonly Caddy: string;
  readonly Traefik?: string;
}

/**
 * The fix for the proxy in front: only its own when its answers named it (a Caddy site must never
 * be told about nginx's buffers), else each in turn.
 */
export function fixFor(proxy: ProxyKind, fixes: Fixes): string {
  if (proxy !== undefined) return `${proxy}: ${fixes[proxy]}`;
  const all: Array<[string, string | undefined]> = [['nginx', fixes.nginx], ['Caddy', fixes.Caddy], ['Traefik', fixes.Traefik]];
  return all.filter(([, fix]) => fix !== undefined).map(([name, fix]) => `${name}: ${fix}`).join('; ');
}
