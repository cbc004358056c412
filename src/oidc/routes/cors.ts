import { sendStatic } from '../../http/respond.js';
import type { RequestContext, Route } from '../../routes/context.js';
import type { StoredClient } from '../clients.js';
import type { ClientStore } from '../client-store.js';

// CORS for apps that run in a browser (docs/contract/oidc.md, endpoints): a single-page app, a
// public client with PKCE, calls the token, userinfo and revocation endpoints from its own origin.
// Those answer Access-Control-Allow-Origin with the request's Origin only when it is the origin of
// one of the app's registered redirect URIs: the origins the administrator named for that app. No
// answer ever allows credentials (these endpoints read no cookie). Discovery and the JWKS are public
// documents and allow any origin on their own (provider-routes.ts).

/** How long a browser may keep a preflight's answer: an app edited to drop an origin is refused by its next one. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The origins an app's redirect URIs name (https and loopback http ones; an app's own scheme has none). */
function originsOf(client: StoredClient): ReadonlySet<string> {
  const origins = new Set<string>();
  for (const uri of client.redirectUris) {
    const url = URL.canParse(uri) ? new URL(uri) : undefined;
    if (url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:')) origins.add(url.origin);
  }
  return origins;
}

export function createCors(clients: ClientStore) {
  // Stored clients are frozen values replaced on every change: cache by the value itself.
  const byClient = new WeakMap<StoredClient, ReadonlySet<string>>();
  const originsOfClient = (client: StoredClient): ReadonlySet<string> => {
    let origins = byClient.get(client);
    if (origins === undefined) byClient.set(client, (origins = originsOf(client)));
    return origins;
  };
  let everyOrigin: ReadonlySet<string> = new Set();
  let everyOriginVersion = -1;
  const isAnyClientsOrigin = (origin: string): boolean => {
    if (everyOriginVersion !== clients.version) {
      everyOrigin = new Set(clients.current.clients.flatMap((client) => [...originsOfClient(client)]));
      everyOriginVersion = clients.version;
    }
    return everyOrigin.has(origin);
  };
  const originOf = (ctx: RequestContext): string | undefined => {
    const origin = ctx.req.headers.origin;
    return typeof origin === 'string' && origin !== 'null' ? origin : undefined;
  };

  return {
    /**
     * Before an answer of the token, userinfo or revocation endpoint: `Vary: Origin` always, and the
     * request's Origin allowed when it is one of `client`'s redirect origins; `client` 'any' (a
     * userinfo request whose token names no live app) allows any registered app's origin.
     */
    allow(ctx: RequestContext, client: StoredClient | 'any' | undefined): void {
      ctx.res.setHeader('vary', 'Origin');
      const origin = originOf(ctx);
      if (origin === undefined || client === undefined) return;
      const isAllowed = client === 'any' ? isAnyClientsOrigin(origin) : originsOfClient(client).has(origin);
      if (isAllowed) ctx.res.setHeader('access-control-allow-origin', origin);
    },

    /**
     * The preflights (OPTIONS) of the three endpoints. A preflight carries neither the client_id
     * (it is in the body) nor the access token, so it answers the origin of any registered app;
     * the answer that follows is what is judged against the one app the request names.
     */
    preflightRoutes(): Route[] {
      const preflight = (methods: string) => (ctx: RequestContext): void => {
        const origin = originOf(ctx);
        const headers: Record<string, string | number> = { vary: 'Origin', 'cache-control': 'no-store', 'content-length': 0 };
        if (origin !== undefined && isAnyClientsOrigin(origin)) {
          Object.assign(headers, {
            'access-control-allow-origin': origin,
            'access-control-allow-methods': methods,
            'access-control-allow-headers': 'Authorization, Content-Type',
            'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
          });
        }
        sendStatic(ctx.res, 204, Buffer.alloc(0), headers);
      };
      return [
        { method: 'OPTIONS', path: '/oidc/token', access: 'oidcTokenPreflight', body: 'none', handler: preflight('POST') },
        { method: 'OPTIONS', path: '/oidc/userinfo', access: 'oidcUserinfoPreflight', body: 'none', handler: preflight('GET, POST') },
        { method: 'OPTIONS', path: '/oidc/revoke', access: 'oidcRevokePreflight', body: 'none', handler: preflight('POST') },
      ];
    },
  };
}
