import { endOnLogout } from '../../auth/logout.js';
import type { RevocationList } from '../../auth/revocations.js';
import type { SessionRecords } from '../../auth/session-records.js';
import { sendStatic } from '../../http/respond.js';
import type { Logger } from '../../log/logger.js';
import type { BuiltPage, Sha256Base64 } from '../../pages/shell.js';
import type { RequestContext, Route } from '../../routes/context.js';
import type { SessionCookies } from '../../routes/session-cookie.js';
import type { StoredClient } from '../clients.js';
import type { ClientStore } from '../client-store.js';
import type { FormParameters } from '../form.js';
import { inspectJws } from '../jws.js';
import { buildLogoutConfirmPage, buildNoRedirectPage, buildSignedOutPage } from '../pages/provider-pages.js';
import { readClientId, readState } from '../parameters.js';
import type { SigningKeySet } from '../signing-keys.js';
import { strictQuery } from './wire.js';

export interface LogoutRouteDeps {
  readonly issuer: string;
  readonly clients: ClientStore;
  readonly keys: SigningKeySet;
  readonly revocations: RevocationList | undefined;
  readonly sessions: SessionRecords;
  readonly cookies: SessionCookies;
  readonly logger: Logger;
  readonly sha256Base64: Sha256Base64;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/** What a logout request names: the app (from a valid hint, else client_id) and where to return. */
type LogoutRequest =
  | { readonly ok: true; readonly hintClient: StoredClient | undefined; readonly back: string | undefined; readonly state: string | undefined }
  | { readonly ok: false; readonly reason: string };

/**
 * RP-Initiated Logout 1.0 at `{base}/oidc/logout` (docs/contract/oidc.md "Logout"): with a
 * valid id_token_hint, sign out at once, cross-site as it comes, and return to a post_logout_redirect_uri
 * registered for that app; without one, a page with a "Sign out" button. An unregistered
 * post_logout_redirect_uri gets a 400 page, never a redirect.
 */
export function logoutRoutes(deps: LogoutRouteDeps): Route[] {
  const confirmPage = buildLogoutConfirmPage(deps.sha256Base64);
  const signedOutPage = buildSignedOutPage(deps.sha256Base64);
  const badPages = new Map<string, BuiltPage>();
  const send = (ctx: RequestContext, status: number, page: BuiltPage, extra: Record<string, string> = {}): void =>
    sendStatic(ctx.res, status, page.body, { ...page.headers, ...extra });

  /** The client a hint was issued to: ours (signature, issuer), for a client that still exists; expiry not checked. */
  const clientOfHint = (hint: string): StoredClient | undefined => {
    const nowSeconds = Math.floor(deps.now() / 1000);
    const inspected = inspectJws(hint, (kid) => deps.keys.find(kid, nowSeconds));
    if (!inspected.ok || inspected.payload['iss'] !== deps.issuer) return undefined;
    const aud = inspected.payload['aud'];
    return typeof aud === 'string' ? deps.clients.find(aud) : undefined;
  };

  const read = (parameters: FormParameters | undefined): LogoutRequest => {
    if (parameters === undefined) return { ok: false, reason: 'The request is malformed (a parameter is repeated or badly encoded).' };
    const hint = parameters.get('id_token_hint');
    const hintClient = hint === undefined ? undefined : clientOfHint(hint);
    let named: StoredClient | undefined;
    let state: string | undefined;
    try {
      const clientId = readClientId(parameters);
      named = clientId === undefined ? undefined : deps.clients.find(clientId);
      if (clientId !== undefined && named === undefined) return { ok: false, reason: 'No app with this client_id is registered with Gatehouse.' };
      state = readState(parameters);
    } catch {
      return { ok: false, reason: 'The client_id or state parameter is malformed.' };
    }
    if (hintClient !== undefined && named !== undefined && hintClient !== named) {
      return { ok: false, reason: 'The id_token_hint was not issued to the app named by client_id.' };
    }
    const back = parameters.get('post_logout_redirect_uri');
    if (back === undefined) return { ok: true, hintClient, back: undefined, state };
    const client = hintClient ?? named;
    if (client === undefined) return { ok: false, reason: 'The request names no app, so its post_logout_redirect_uri cannot be checked.' };
    if (!(client.postLogoutRedirectUris ?? []).includes(back)) {
      return { ok: false, reason: 'The post_logout_redirect_uri is not one registered for this app.' };
    }
    return { ok: true, hintClient, back, state };
  };

  return [
    {
      method: 'GET', path: '/oidc/logout', access: 'oidcLogout', body: 'none',
      async handler(ctx) {
        const request = read(strictQuery(ctx));
        if (!request.ok) {
          let page = badPages.get(request.reason);
          if (page === undefined) badPages.set(request.reason, (page = buildNoRedirectPage(request.reason, deps.sha256Base64)));
          return send(ctx, 400, page);
        }
        if (request.hintClient === undefined) return send(ctx, 200, confirmPage);
        // A cross-site navigation brings no SameSite=Strict cookie; a same-site one may, and with
        // --revoke-on-logout its token and session end, as GET {base}/logout ends them.
        const { caller } = ctx.admission;
        if (caller !== undefined) await endOnLogout(deps, caller);
        deps.logger.info('signed out by an app', { event: 'oidc_logout', address: ctx.address, clientId: request.hintClient.clientId });
        const cleared = deps.cookies.cleared(ctx);
        if (request.back === undefined) return send(ctx, 200, signedOutPage, { 'set-cookie': cleared });
        const location = request.state === undefined
          ? request.back
          : `${request.back}${request.back.includes('?') ? '&' : '?'}${new URLSearchParams({ state: request.state }).toString()}`;
        sendStatic(ctx.res, 303, Buffer.alloc(0), {
          location, 'set-cookie': cleared, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-length': 0,
        });
      },
    },
  ];
}
