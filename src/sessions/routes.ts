import type { SessionRecords } from '../auth/session-records.js';
import { SessionNotFound, UserNotFound } from '../errors.js';
import { sendJson } from '../http/respond.js';
import { SESSION_ID_FORMAT, type SessionRecord } from '../store/session-file.js';
import { usernameFromPath } from '../routes/path-username.js';
import { withNewSessions } from '../store/account-rules.js';
import { assertStillAdministrator, callerOf, type RequestContext, type Route, type RouteDeps } from '../routes/context.js';
import { epochSeconds } from '../time.js';

interface SessionRouteDeps extends RouteDeps {
  readonly sessions: SessionRecords;
}

/**
 * The sessions of an account (docs/contract/links-and-sessions.md "Sessions"): its owner lists
 * and ends them from any session of it, an administrator those of any account. Ending one resolves
 * once the sessions file no longer holds it: from the answer on, its cookie and every `?token=` copy
 * are refused everywhere, the gate included, and after a restart.
 */
export function sessionRoutes(deps: SessionRouteDeps): Route[] {
  const { sessions, store, logger } = deps;

  /** The account's live sessions, newest first; `current` marks the caller's own. */
  const listOf = (username: string, currentId: string | undefined) =>
    sessions.liveOf(username).reverse().map((record) => viewOf(record, record.id === currentId));

  /** Ends session `rawId` of `username`; a malformed or unknown id is the same 404. */
  const end = async (ctx: RequestContext, username: string, rawId: string | undefined, by: string): Promise<string> => {
    const id = rawId ?? '';
    if (!SESSION_ID_FORMAT.test(id) || !(await sessions.end(username, id))) throw new SessionNotFound();
    logger.info('session ended', { event: 'session_ended', username, sessionId: id, by, address: ctx.address });
    return id;
  };

  const accountOf = (ctx: RequestContext): string => {
    const username = usernameFromPath(ctx.params['username']);
    if (store.find(username) === undefined) throw new UserNotFound();
    return username;
  };

  return [
    { method: 'GET', path: '/api/auth/account/sessions', access: 'listOwnSessions', body: 'none', handler(ctx) {
      const { user, claims } = callerOf(ctx);
      sendJson(ctx.res, 200, listOf(user.username, claims.ses));
    } },
    { method: 'DELETE', path: '/api/auth/account/sessions/:id', access: 'endOwnSession', body: 'none', async handler(ctx) {
      const { user, claims } = callerOf(ctx);
      const id = await end(ctx, user.username, ctx.params['id'], user.username);
      // Ending the session this request came from signs it out here too.
      const headers = id === claims.ses ? { 'set-cookie': deps.cookies.cleared(ctx) } : undefined;
      sendJson(ctx.res, 200, {}, headers);
    } },
    { method: 'GET', path: '/api/auth/users/:username/sessions', access: 'listUserSessions', body: 'none', handler(ctx) {
      const caller = callerOf(ctx);
      const username = accountOf(ctx);
      sendJson(ctx.res, 200, listOf(username, username === caller.user.username ? caller.claims.ses : undefined));
    } },
    // Every session of the account at once, as its owner's "log out everywhere": a new session key.
    { method: 'DELETE', path: '/api/auth/users/:username/sessions', access: 'endUserSessions', body: 'none', async handler(ctx) {
      const caller = callerOf(ctx);
      const username = accountOf(ctx);
      await store.change((view) => {
        assertStillAdministrator(deps, view, caller);
        const user = view.get(username);
        if (user === undefined) throw new UserNotFound();
        view.set(withNewSessions(user, epochSeconds(deps.now())));
      });
      deps.credentialChanges.changed(username);
      logger.info('every session of an account ended by an administrator', {
        event: 'sessions_ended', username, by: caller.user.username, address: ctx.address,
      });
      sendJson(ctx.res, 200, {});
    } },
    { method: 'DELETE', path: '/api/auth/users/:username/sessions/:id', access: 'endUserSession', body: 'none', async handler(ctx) {
      const caller = callerOf(ctx);
      await end(ctx, accountOf(ctx), ctx.params['id'], caller.user.username);
      sendJson(ctx.res, 200, {});
    } },
  ];
}

/** A session as its owner and administrators see it: times in milliseconds, never its session key. */
function viewOf(record: SessionRecord, isCurrent: boolean) {
  return {
    id: record.id,
    current: isCurrent,
    createdAt: record.createdAt * 1000,
    lastSeenAt: record.lastSeenAt * 1000,
    address: record.address,
    browser: record.browser,
    amr: record.amr,
  };
}
