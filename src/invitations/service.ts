import { hashKeyOf } from '../auth/throttled-password.js';
import type { Caller } from '../auth/session.js';
import { InvitationNotFound, ResetLinkInvalid, TooManyAttempts, UsernameTaken, UserNotFound, ValidationFailed } from '../errors.js';
import { throttleKeyOf } from '../http/client-address.js';
import { addUser, changeUser, newAccount, withSubjectIn } from '../store/account-rules.js';
import type { StoredUser } from '../store/users.js';
import { assertStillAdministrator, type RouteDeps } from '../routes/context.js';
import type { CheckedType } from '../validate/check.js';
import { DEFAULT_INVITATION_DAYS, type checkNewInvitationBody, type joinBodyChecker, type resetBodyChecker } from './bodies.js';
import { LINK_ID_FORMAT, linkView, type Invitation, type Link } from './link-file.js';
import type { LinkStore, MakingAdministrator } from './links.js';
import { epochSeconds, type EpochSeconds } from '../time.js';

interface LinkServiceDeps extends RouteDeps {
  readonly links: LinkStore;
}

type NewInvitation = CheckedType<typeof checkNewInvitationBody>;
type JoinBody = CheckedType<ReturnType<typeof joinBodyChecker>>;
type ResetBody = CheckedType<ReturnType<typeof resetBodyChecker>>;

export type LinkService = ReturnType<typeof createLinkService>;

/**
 * Invitations and reset links (docs/contract/links-and-sessions.md "Invitations", "Reset links"), apart
 * from HTTP: administrators make, list and withdraw them; whoever holds a link's secret uses it once.
 * Every use of a secret, right or wrong, goes through the login throttle first, so secrets are guessed
 * no faster than passwords. `address` is the client's, for the throttle and the log.
 */
export function createLinkService(deps: LinkServiceDeps) {
  const { store, links, throttle, hasher, logger } = deps;
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());

  /**
   * The open link `secret` opens, judged under the login throttle: counted as a failed sign-in of the
   * client unless it opens one (429 once the client has failed too often). A link whose maker is no
   * longer the administrator it was, or whose account changed since, opens nothing (link-standing.ts).
   * Throws InvitationInvalid or ResetLinkInvalid.
   */
  const guarded = <K extends Link['kind']>(address: string, kind: K, secret: string): Extract<Link, { kind: K }> => {
    const client = throttleKeyOf(address);
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
        address,
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

  return {
    /** Makes an invitation (the caller may grant its level: the judge's requireToGrant); its secret is in what it returns, once. */
    async makeInvitation(caller: Caller, body: NewInvitation, address: string) {
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
      logger.info('invitation made', { event: 'invitation_made', invitationId: made.id, by: caller.user.username, address });
      return made;
    },

    /** Open invitations and reset links, beside each other, as the API lists them. */
    openLinks: () => links.openLinks().map(linkView),

    /** Withdraws the open invitation or reset link `id` (the path's); throws InvitationNotFound. */
    async withdraw(caller: Caller, id: string, address: string): Promise<void> {
      if (!LINK_ID_FORMAT.test(id) || !(await links.withdraw(id))) throw new InvitationNotFound();
      logger.info('link withdrawn', { event: 'invitation_withdrawn', invitationId: id, by: caller.user.username, address });
    },

    /** The open link of `kind` that `secret` opens, under the throttle (`guarded`). */
    check: <K extends Link['kind']>(kind: K, secret: string, address: string): Extract<Link, { kind: K }> => guarded(address, kind, secret),

    /** Makes the account an invitation offers, once: the account as made. */
    async join(body: JoinBody, address: string): Promise<StoredUser> {
      const link = guarded(address, 'invitation', body.secret);
      const username = nameOf(link, body.username);
      if (store.find(username) !== undefined) throw new UsernameTaken();
      const passwordHash = await hasher.hash(body.password, hashKeyOf(address, undefined));
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
      logger.info('account made from an invitation', { event: 'invitation_used', invitationId: link.id, username, address });
      return user;
    },

    /** Makes a reset link for the account `username`; its secret is in what it returns, once. Throws UserNotFound. */
    async makeResetLink(caller: Caller, username: string, address: string) {
      const user = store.find(username);
      if (user === undefined) throw new UserNotFound();
      const made = await links.makeResetLink({ username, sessionKey: user.sessionKey, createdBy: await makerOf(caller) });
      logger.info('reset link made', { event: 'reset_link_made', linkId: made.id, username, by: caller.user.username, address });
      return made;
    },

    /** Sets the password a reset link offers, once: the account's name. */
    async reset(body: ResetBody, address: string): Promise<string> {
      const link = guarded(address, 'reset', body.secret);
      const passwordHash = await hasher.hash(body.password, hashKeyOf(address, undefined));
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
      logger.info('password reset through a link', { event: 'password_reset', username: link.username, address });
      return link.username;
    },
  };
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
