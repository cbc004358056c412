import { PASSWORD_ONLY } from '../auth/amr.js';
import { sendJson } from '../http/respond.js';
import { usernameFromPath } from '../routes/path-username.js';
import { callerOf, readCheckedBody, type RequestContext, type Route, type RouteDeps } from '../routes/context.js';
import { checkNewInvitationBody, checkSecretBody, joinBodyChecker, resetBodyChecker } from './bodies.js';
import { linkUrl, type LinkPage } from './link-url.js';
import type { LinkService } from './service.js';

interface InvitationRouteDeps extends RouteDeps {
  readonly linkService: LinkService;
}

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * Invitations and reset links over HTTP (docs/contract/links-and-sessions.md "Invitations", "Reset
 * links"): each route reads its body and answers with what the service (invitations/service.ts) does;
 * a made link's URL is on the origin the administrator asked on, and joining sets the cookie.
 */
export function invitationRoutes(deps: InvitationRouteDeps): Route[] {
  const { config, cookies, linkService: service } = deps;
  const joinBody = joinBodyChecker(config.passwordMinimums.gatehouse);
  const resetBody = resetBodyChecker(config.passwordMinimums.gatehouse);

  /** Where the pages are, for a link: --public-url, else the origin the administrator's request came to. */
  const pagesUrlOf = (ctx: RequestContext): string => {
    if (config.publicUrl !== undefined) return config.publicUrl;
    const host = deps.proxyTrust.browserHost(ctx.req);
    if (host === undefined || !HOST.test(host)) return config.baseUri;
    const scheme = config.secureCookie || deps.proxyTrust.isForwardedHttps(ctx.req) ? 'https' : 'http';
    return `${scheme}://${host}${config.baseUri}`;
  };
  const urlOf = (ctx: RequestContext, page: LinkPage, secret: string): string => linkUrl(pagesUrlOf(ctx), page, secret);

  return [
    { method: 'POST', path: '/api/auth/invites', access: 'makeInvitation', body: 'json', async handler(ctx) {
      const caller = callerOf(ctx);
      const body = await readCheckedBody(ctx, checkNewInvitationBody, config.maxBodyBytes);
      const made = await service.makeInvitation(caller, body, ctx.address);
      sendJson(ctx.res, 200, { id: made.id, url: urlOf(ctx, 'join', made.secret), expiresAt: made.expiresAt * 1000 });
    } },
    // Open invitations and reset links, beside each other; either is withdrawn by its id.
    { method: 'GET', path: '/api/auth/invites', access: 'listInvitations', body: 'none', handler(ctx) {
      sendJson(ctx.res, 200, service.openLinks());
    } },
    { method: 'DELETE', path: '/api/auth/invites/:id', access: 'withdrawInvitation', body: 'none', async handler(ctx) {
      await service.withdraw(callerOf(ctx), ctx.params['id'] ?? '', ctx.address);
      sendJson(ctx.res, 200, {});
    } },
    { method: 'POST', path: '/api/auth/join/check', access: 'checkInvitation', body: 'json', async handler(ctx) {
      const { secret } = await readCheckedBody(ctx, checkSecretBody, config.maxBodyBytes);
      const link = service.check('invitation', secret, ctx.address);
      sendJson(ctx.res, 200, { username: link.username ?? null, level: link.level, expiresAt: link.expiresAt * 1000 });
    } },
    { method: 'POST', path: '/api/auth/join', access: 'join', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, joinBody, config.maxBodyBytes);
      const user = await service.join(body, ctx.address);
      const cookie = await cookies.begin(ctx, user, PASSWORD_ONLY);
      sendJson(ctx.res, 200, { success: true, username: user.username, level: user.level }, { 'set-cookie': cookie });
    } },
    { method: 'POST', path: '/api/auth/users/:username/reset-link', access: 'makeResetLink', body: 'json', async handler(ctx) {
      const caller = callerOf(ctx);
      const made = await service.makeResetLink(caller, usernameFromPath(ctx.params['username']), ctx.address);
      sendJson(ctx.res, 200, { id: made.id, url: urlOf(ctx, 'reset', made.secret), expiresAt: made.expiresAt * 1000 });
    } },
    { method: 'POST', path: '/api/auth/reset/check', access: 'checkResetLink', body: 'json', async handler(ctx) {
      const { secret } = await readCheckedBody(ctx, checkSecretBody, config.maxBodyBytes);
      const link = service.check('reset', secret, ctx.address);
      sendJson(ctx.res, 200, { username: link.username, expiresAt: link.expiresAt * 1000 });
    } },
    { method: 'POST', path: '/api/auth/reset', access: 'reset', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, resetBody, config.maxBodyBytes);
      sendJson(ctx.res, 200, { username: await service.reset(body, ctx.address) });
    } },
  ];
}
