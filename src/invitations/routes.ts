import { PASSWORD_ONLY } from '../auth/amr.js';
import { hashKeyOf } from '../auth/throttled-password.js';
import { InvitationNotFound, ResetLinkInvalid, TooManyAttempts, UsernameTaken, UserNotFound, ValidationFailed } from '../errors.js';
import { throttleKeyOf } from '../http/client-address.js';
import { sendJson } from '../http/respond.js';
import type { Caller } from '../auth/session.js';
import { addUser, changeUser, newAccount, withSubjectIn } from '../store/account-rules.js';
import { usernameFromPath } from '../routes/path-username.js';
import { assertStillAdministrator, callerOf, readCheckedBody, type RequestContext, type Route, type RouteDeps } from '../routes/context.js';
import { checkNewInvitationBody, checkSecretBody, DEFAULT_INVITATION_DAYS, joinBodyChecker, resetBodyChecker } from './bodies.js';
import { LINK_ID_FORMAT, linkView, type Invitation, type Link } from './link-file.js';
import type { LinkStore, MakingAdministrator } from './links.js';
import { linkUrl, type LinkPage } from './link-url.js';
import { epochSeconds, type EpochSeconds } from '../time.js';

interface InvitationRouteDeps extends RouteDeps {
  readonly links: LinkStore;
}

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * Invitations and reset links (docs/contract/links-and-sessions.md "Invitations", "Reset links"). Administrators
 * make, list and withdraw them; whoever holds a link's secret uses it once. Every use of a secret,
 * right or wrong, goes through the login throttle first, so secrets are guessed no faster than passwords.
 */
export function invitationRoutes(deps: InvitationRouteDeps): Route[] {
  const { config, store, links, throttle, hasher, logger, cookies } = deps;
  const joinBody = joinBodyChecker(config.passwordMinimums.gatehouse);
  const resetBody = resetBodyChecker(config.passwordMinimums.gatehouse);
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());

  /** Where the pages are, for a link: --public-url, else the origin the administrator's request came to. */
  const pagesUrlOf = (ctx: RequestContext): string => {
    if (config.publicUrl !== undefined) return config.publicUrl;
    const host = deps.proxyTrust.browserHost(ctx.req);
    if (host === undefined || !HOST.test(host)) return config.baseUri;
    const scheme = config.secureCookie || deps.proxyTrust.isForwardedHttps(ctx.req) ? 'https' : 'http';
    return `${scheme}://${host}${config.baseUri}`;
  };
  const urlOf = (ctx: RequestContext, page: LinkPage, secret: string): string => linkUrl(pagesUrlOf(ctx), page, secret);

  /**
   * The open link `secret` opens, judged under the login throttle: counted as a failed sign-in of the
   * client unless it opens one (429 once the client has failed too often). A link whose maker is no
   * longer the administrator it was, or whose account changed since, opens nothing (link-standing.ts).
   * Throws InvitationInvalid or ResetLinkInvalid.
   */
  const guarded = <K extends Link['kind']>(ctx: RequestContext, kind: K, secret: string): Extract<Link, { kind: K }> => {
    const client = throttleKeyOf(ctx.address);
    // A key of the client's own in place of a username: a guesser must not lock everyone else out.
    const key = `,${kind}:${client}`;
    const wait = throttle.beginAttempt(key, client, deps.now());
    if (wait > 0) throw new TooManyAttempts(wait);
    try {
      const link = links.find(kind, secret);
      throttle.recordSuccess(key, client);
      return link;
    } catch (error) {
      logger.warn(`${kind === 'reset' ? 'reset link' : 'invitation'} refused`, {
        event: 'link_refused',
        address: ctx.address,
        reason: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  };

  /**
   * The caller as the maker of a link, while it is still an administrator: its name, its account's
   * stable id (`sub`, made now if it has none) and its session key, which the link is tied to.
   */
  const makerOf = async (caller: Caller): Promise<MakingAdministrator> => {
    const maker = await store.change((view) => {
      assertStillAdministrator(deps, view, caller);
      return withSubjectIn(view, caller.user.username);
    });
    return { username: maker.username, sub: maker.sub, sessionKey: maker.sessionKey };
  };

  return [
    { method: 'POST', path: '/api/auth/invites', access: 'makeInvitation', body: 'json', async handler(ctx) {
      const caller = callerOf(ctx);
      const body = await readCheckedBody(ctx, checkNewInvitationBody, config.maxBodyBytes);
      deps.judge.requireToGrant(body.level, caller);
      if (body.username !== undefined && store.find(body.username) !== undefined) throw new UsernameTaken();
      const days = body.days ?? DEFAULT_INVITATION_DAYS;
      const made = await links.makeInvitation({
        username: body.username,
        level: body.level,
        groups: body.groups,
        expiresAt: nowSeconds() + days * 86_400,
        createdBy: await makerOf(caller),
      });
      logger.info('invitation made', { event: 'invitation_made', invitationId: made.id, by: caller.user.username, address: ctx.address });
      sendJson(ctx.res, 200, { id: made.id, url: urlOf(ctx, 'join', made.secret), expiresAt: made.expiresAt * 1000 });
    } },
    // Open invitations and reset links, beside each other; either is withdrawn by its id.
    { method: 'GET', path: '/api/auth/invites', access: 'listInvitations', body: 'none', handler(ctx) {
      sendJson(ctx.res, 200, links.openLinks().map(linkView));
    } },
    { method: 'DELETE', path: '/api/auth/invites/:id', access: 'withdrawInvitation', body: 'none', async handler(ctx) {
      const caller = callerOf(ctx);
      const id = ctx.params['id'] ?? '';
      if (!LINK_ID_FORMAT.test(id) || !(await links.withdraw(id))) throw new InvitationNotFound();
      logger.info('link withdrawn', { event: 'invitation_withdrawn', invitationId: id, by: caller.user.username, address: ctx.address });
      sendJson(ctx.res, 200, {});
    } },
    { method: 'POST', path: '/api/auth/join/check', access: 'checkInvitation', body: 'json', async handler(ctx) {
      const { secret } = await readCheckedBody(ctx, checkSecretBody, config.maxBodyBytes);
      const link = guarded(ctx, 'invitation', secret);
      sendJson(ctx.res, 200, { username: link.username ?? null, level: link.level, expiresAt: link.expiresAt * 1000 });
    } },
    { method: 'POST', path: '/api/auth/join', access: 'join', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, joinBody, config.maxBodyBytes);
      const link = guarded(ctx, 'invitation', body.secret);
      const username = nameOf(link, body.username);
      if (store.find(username) !== undefined) throw new UsernameTaken();
      const passwordHash = await hasher.hash(body.password, hashKeyOf(ctx.address, undefined));
      // Spent first, durably: of parallel joins one wins, and a crash before the account is made
      // leaves the link spent (fail closed) rather than good for a second account.
      await links.claim(link, () => {
        if (store.find(username) !== undefined) throw new UsernameTaken();
      });
      const fields = { username, level: link.level, passwordHash, ...(link.groups === undefined ? {} : { groups: link.groups }) };
      const user = newAccount(fields, nowSeconds());
      try {
        await store.change((view) => addUser(view, user));
      } catch (error) {
        await links.release(link).catch(() => undefined);
        throw error;
      }
      logger.info('account made from an invitation', { event: 'invitation_used', invitationId: link.id, username, address: ctx.address });
      const cookie = await cookies.begin(ctx, user, PASSWORD_ONLY);
      sendJson(ctx.res, 200, { success: true, username, level: user.level }, { 'set-cookie': cookie });
    } },
    { method: 'POST', path: '/api/auth/users/:username/reset-link', access: 'makeResetLink', body: 'json', async handler(ctx) {
      const caller = callerOf(ctx);
      const username = usernameFromPath(ctx.params['username']);
      const user = store.find(username);
      if (user === undefined) throw new UserNotFound();
      const made = await links.makeResetLink({ username, sessionKey: user.sessionKey, createdBy: await makerOf(caller) });
      logger.info('reset link made', { event: 'reset_link_made', linkId: made.id, username, by: caller.user.username, address: ctx.address });
      sendJson(ctx.res, 200, { id: made.id, url: urlOf(ctx, 'reset', made.secret), expiresAt: made.expiresAt * 1000 });
    } },
    { method: 'POST', path: '/api/auth/reset/check', access: 'checkResetLink', body: 'json', async handler(ctx) {
      const { secret } = await readCheckedBody(ctx, checkSecretBody, config.maxBodyBytes);
      const link = guarded(ctx, 'reset', secret);
      sendJson(ctx.res, 200, { username: link.username, expiresAt: link.expiresAt * 1000 });
    } },
    { method: 'POST', path: '/api/auth/reset', access: 'reset', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, resetBody, config.maxBodyBytes);
      const link = guarded(ctx, 'reset', body.secret);
      const passwordHash = await hasher.hash(body.password, hashKeyOf(ctx.address, undefined));
      await links.claim(link);
      try {
        // A new password is a credential change: the account's session key is replaced, so every
        // session (and refresh token bound to it) ends; its second factors stay.
        await store.change((view) => {
          if (view.get(link.username)?.sessionKey !== link.sessionKey) throw new ResetLinkInvalid('withdrawn');
          changeUser(view, link.username, { passwordHash }, nowSeconds());
        });
      } catch (error) {
        await links.release(link).catch(() => undefined);
        throw error;
      }
      deps.credentialChanges.changed(link.username);
      logger.info('password reset through a link', { event: 'password_reset', username: link.username, address: ctx.address });
      sendJson(ctx.res, 200, { username: link.username });
    } },
  ];
}

/** The new account's name: the one the invitation fixes, else the one the invitee chose. */
function nameOf(link: Invitation, chosen: string | undefined): string {
  if (link.username !== undefined) {
    if (chosen !== undefined && chosen !== link.username) {
      throw new ValidationFailed([{ path: 'username', message: 'must be the name the invitation gives, or left out' }]);
    }
    return link.username;
  }
  if (chosen === undefined) throw new ValidationFailed([{ path: 'username', message: 'is required: this invitation leaves the name to you' }]);
  return chosen;
}
