import { endOnLogout } from '../../auth/logout.js';
import type { RevocationList } from '../../auth/revocations.js';
import type { SessionRecords } from '../../auth/session-records.js';
import { OAuthRefused } from '../../errors.js';
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
import { readFormBody, strictQuery } from './wire.js';
import { epochSeconds, type EpochMs } from '../../time.js';

interface LogoutRouteDeps {
  readonly issuer: string;
  readonly clients: ClientStore;
  readonly keys: SigningKeySet;
  readonly revocations: RevocationList | undefined;
  readonly sessions: SessionRecords;
  readonly cookies: SessionCookies;
  readonly logger: Logger;
  readonly sha256Base64: Sha256Base64;
  readonly maxBodyBytes: number;
  readonly now: () => EpochMs;
}

/** What a logout request names: the app (from a valid hint, else client_id) and where to return. */
type LogoutRequest =
  | {
      readonly ok: true;
      /** The hint, when it is ours (signature, issuer) for an app that exists; its expiry is not checked. */
      readonly hint: { readonly client: StoredClient; readonly sub: string } | undefined;
      /** The app the request names, by its hint or its client_id. */
      readonly client: StoredClient | undefined;
      readonly back: string | undefined;
      readonly state: string | undefined;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * RP-Initiated Logout 1.0 at `{base}/oidc/logout`, GET and POST (a form), judged the same
 * (docs/contract/oidc.md "Logout", docs/contract/links-and-sessions.md "RP logout"): a hint naming
 * the account signed in here signs it out at once, cross-site as it comes, and returns to a
 * post_logout_redirect_uri registered for that app; any other request gets a page with a "Sign out"
 * button (a POST is sent to it at the GET address, without the hint). An unregistered
 * post_logout_redirect_uri gets a 400 page, never a redirect.
 */
export function logoutRoutes(deps: LogoutRouteDeps): Route[] {
  const confirmPage = buildLogoutConfirmPage(deps.sha256Base64);
  const signedOutPage = buildSignedOutPage(deps.sha256Base64);
  const badPages = new Map<string, BuiltPage>();
  const send = (ctx: RequestContext, status: number, page: BuiltPage, extra: Record<string, string> = {}): void =>
    sendStatic(ctx.res, status, page.body, { ...page.headers, ...extra });
  const redirect = (ctx: RequestContext, location: string, extra: Record<string, string> = {}): void =>
    sendStatic(ctx.res, 303, Buffer.alloc(0), {
      location, ...extra, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-length': 0,
    });

  /** The app and account a hint names, when the hint is ours (signature, issuer) for an app that still exists; expiry not checked. */
  const readHint = (hint: string): { client: StoredClient; sub: string } | undefined => {
    const nowSeconds = epochSeconds(deps.now());
    const inspected = inspectJws(hint, (kid) => deps.keys.find(kid, nowSeconds));
    if (!inspected.ok || inspected.payload['iss'] !== deps.issuer) return undefined;
    const { aud, sub } = inspected.payload;
    const client = typeof aud === 'string' ? deps.clients.find(aud) : undefined;
    return client === undefined || typeof sub !== 'string' ? undefined : { client, sub };
  };

  const read = (parameters: FormParameters | undefined): LogoutRequest => {
    if (parameters === undefined) return { ok: false, reason: 'The request is malformed (a parameter is repeated or badly encoded).' };
    const hintText = parameters.get('id_token_hint');
    const hint = hintText === undefined ? undefined : readHint(hintText);
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
    if (hint !== undefined && named !== undefined && hint.client !== named) {
      return { ok: false, reason: 'The id_token_hint was not issued to the app named by client_id.' };
    }
    const client = hint?.client ?? named;
    const back = parameters.get('post_logout_redirect_uri');
    if (back === undefined) return { ok: true, hint, client, back: undefined, state };
    if (client === undefined) return { ok: false, reason: 'The request names no app, so its post_logout_redirect_uri cannot be checked.' };
    if (!(client.postLogoutRedirectUris ?? []).includes(back)) {
      return { ok: false, reason: 'The post_logout_redirect_uri is not one registered for this app.' };
    }
    return { ok: true, hint, client, back, state };
  };

  /** Answers a read request; `isForm`: it came as a POST, whose page is shown at the GET address. */
  const answer = async (ctx: RequestContext, request: LogoutRequest, isForm: boolean): Promise<void> => {
    if (!request.ok) {
      let page = badPages.get(request.reason);
      if (page === undefined) badPages.set(request.reason, (page = buildNoRedirectPage(request.reason, deps.sha256Base64)));
      return send(ctx, 400, page);
    }
    const { caller } = ctx.admission;
    // The hint speaks for the account it names, and only that account's session is signed out
    // unasked. A cross-site navigation brings no SameSite=Strict cookie, so it gets the page.
    const isOwnHint = request.hint !== undefined && caller !== undefined && caller.user.sub === request.hint.sub;
    if (caller === undefined || !isOwnHint) {
      if (!isForm) return send(ctx, 200, confirmPage);
      // The page reads what it returns to from its address; the hint is left out (it signed nothing out).
      const query = new URLSearchParams({
        ...(request.client === undefined ? {} : { client_id: request.client.clientId }),
        ...(request.back === undefined ? {} : { post_logout_redirect_uri: request.back }),
        ...(request.state === undefined ? {} : { state: request.state }),
      }).toString();
      return redirect(ctx, query === '' ? 'logout' : `logout?${query}`);
    }
    await endOnLogout(deps, caller, 'browser');
    deps.logger.info('signed out by an app', { event: 'oidc_logout', address: ctx.address, clientId: request.hint?.client.clientId ?? '' });
    const cleared = deps.cookies.cleared(ctx);
    if (request.back === undefined) return send(ctx, 200, signedOutPage, { 'set-cookie': cleared });
    const location = request.state === undefined
      ? request.back
      : `${request.back}${request.back.includes('?') ? '&' : '?'}${new URLSearchParams({ state: request.state }).toString()}`;
    redirect(ctx, location, { 'set-cookie': cleared });
  };

  return [
    {
      method: 'GET', path: '/oidc/logout', access: 'oidcLogout', body: 'none',
      handler: (ctx) => answer(ctx, read(strictQuery(ctx)), false),
    },
    {
      method: 'POST', path: '/oidc/logout', access: 'oidcLogoutForm', body: 'form',
      async handler(ctx) {
        let parameters: FormParameters | undefined;
        try {
          parameters = await readFormBody(ctx, deps.maxBodyBytes);
        } catch (error) {
          if (!(error instanceof OAuthRefused)) throw error;
          parameters = undefined;
        }
        await answer(ctx, read(parameters), true);
      },
    },
  ];
}
