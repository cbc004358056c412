import { newMachineToken } from '../auth/machine-tokens.js';
import type { RevocationList } from '../auth/revocations.js';
import { sessionProblem, type Caller, type SessionAuthenticator } from '../auth/session.js';
import { AuthRequired, MachineTokenNotFound, ValidationFailed } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import { sendJson } from '../http/respond.js';
import type { Logger } from '../log/logger.js';
import { addMachineToken, removeMachineToken } from '../store/machine-token-rules.js';
import type { StoredUser, UserStore, UserView } from '../store/users.js';
import { checkMachineTokenId, checkNewMachineTokenBody } from '../validate/machine-token.js';
import type { Route } from './context.js';

export interface MachineTokenRouteDeps {
  readonly store: UserStore;
  readonly session: SessionAuthenticator;
  readonly revocations: RevocationList | undefined;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/** How the caller's own account lists its tokens (GET /api/auth/account): times in milliseconds since the epoch, null when none. */
export interface MachineTokenListEntry {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly lastUsedAt: number | null;
}

export function machineTokensOf(user: StoredUser): MachineTokenListEntry[] {
  return (user.tokens ?? []).map((token) => ({
    id: token.id,
    name: token.name,
    createdAt: token.createdAt * 1000,
    expiresAt: token.expiresAt === undefined ? null : token.expiresAt * 1000,
    lastUsedAt: token.lastUsedAt === undefined ? null : token.lastUsedAt * 1000,
  }));
}

/** The caller's session still opens inside a store change (a change made meanwhile counts). */
function assertStillSignedIn(view: UserView, caller: Caller, revocations: RevocationList | undefined): void {
  const current = view.get(caller.user.username);
  if (current === undefined || sessionProblem(current, caller.token, caller.claims, revocations) !== undefined) throw new AuthRequired();
}

/**
 * The caller's own machine tokens (INTERFACE.md "The caller's own account"). Only a session
 * (the jwt cookie or ?token=) opens these routes: a machine token arrives in Authorization,
 * which nothing here reads, so no token can make or remove tokens.
 */
export function machineTokenRoutes(deps: MachineTokenRouteDeps): Route[] {
  const { store, session, logger } = deps;
  const nowSeconds = (): number => Math.floor(deps.now() / 1000);
  return [
    {
      method: 'POST',
      path: '/api/auth/account/tokens',
      body: 'json',
      async handler(ctx) {
        const caller = session.authenticate(ctx.credentials);
        const checked = checkNewMachineTokenBody(await readJsonBody(ctx.req, deps.maxBodyBytes), '');
        if (!checked.ok) throw new ValidationFailed(checked.problems);
        const { name, days } = checked.value;
        const { token, digest, id } = newMachineToken();
        const createdAt = nowSeconds();
        const expiresAt = days === undefined ? undefined : createdAt + days * 86_400;
        await store.change((view) => {
          assertStillSignedIn(view, caller, deps.revocations);
          addMachineToken(view, caller.user.username, { id, name, digest, createdAt, ...(expiresAt === undefined ? {} : { expiresAt }) });
        });
        // The id names the token in logs; the token itself is never logged.
        logger.info('machine token created', { event: 'machine_token_created', username: caller.user.username, tokenId: id, address: ctx.address });
        sendJson(ctx.res, 200, { id, name, token, expiresAt: expiresAt === undefined ? null : expiresAt * 1000 }, { 'cache-control': 'no-store' });
      },
    },
    {
      method: 'DELETE',
      path: '/api/auth/account/tokens/:id',
      body: 'none',
      async handler(ctx) {
        const caller = session.authenticate(ctx.credentials);
        const checked = checkMachineTokenId(ctx.param ?? '', 'id');
        if (!checked.ok) throw new MachineTokenNotFound();
        await store.change((view) => {
          assertStillSignedIn(view, caller, deps.revocations);
          removeMachineToken(view, caller.user.username, checked.value);
        });
        logger.info('machine token revoked', { event: 'machine_token_revoked', username: caller.user.username, tokenId: checked.value, address: ctx.address });
        sendJson(ctx.res, 200, {});
      },
    },
  ];
}
