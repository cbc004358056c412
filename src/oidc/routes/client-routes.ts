import type { SessionRecords } from '../../auth/session-records.js';
import { accountStillSignedIn } from '../../auth/session.js';
import type { RevocationList } from '../../auth/revocations.js';
import { ClientNotFound } from '../../errors.js';
import { sendJson } from '../../http/respond.js';
import type { Logger } from '../../log/logger.js';
import { assertStillAdministrator, callerOf, readCheckedBody, type Route } from '../../routes/context.js';
import { changeUser } from '../../store/account-rules.js';
import type { UserStore } from '../../store/users.js';
import { objectOf, optional, pass, type Checker } from '../../validate/check.js';
import { checkDisplayName, checkEmail } from '../../validate/profile.js';
import type { AccessTokenStore } from '../access-tokens.js';
import { changesWhoMaySignIn, checkClientChanges, editClient, endTokensNoLongerLetIn } from '../client-edit.js';
import { addClient, checkNewClientBody, clientSummaryOf, CLIENT_ID_FORMAT, newClientSecret, removeClient } from '../clients.js';
import type { ClientStore } from '../client-store.js';
import type { GrantStore } from '../grant-store.js';
import { epochSeconds, type EpochMs, type EpochSeconds } from '../../time.js';

interface ClientRouteDeps {
  readonly users: UserStore;
  readonly revocations: RevocationList | undefined;
  readonly sessions: SessionRecords;
  readonly clients: ClientStore;
  readonly grants: GrantStore;
  readonly accessTokens: AccessTokenStore;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  readonly now: () => EpochMs;
}

const orNull = <T>(check: Checker<T>): Checker<T | null> => (input, path) => (input === null ? pass(null) : check(input, path));
/** PATCH /api/auth/account: the owner's own e-mail address (not verified) and display name; null removes. */
const checkProfileBody = objectOf({ email: optional(orNull(checkEmail)), name: optional(orNull(checkDisplayName)) });

/**
 * The administrators' client API (docs/contract/oidc.md "Clients") and the owner's
 * e-mail address and display name; who may call them is their rows' (auth/access.ts).
 */
export function clientRoutes(deps: ClientRouteDeps): Route[] {
  const { clients } = deps;
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());

  return [
    {
      method: 'GET', path: '/api/auth/clients', access: 'listClients', body: 'none',
      handler(ctx) {
        sendJson(ctx.res, 200, clients.current.clients.map(clientSummaryOf));
      },
    },
    {
      method: 'POST', path: '/api/auth/clients', access: 'addClient', body: 'json',
      async handler(ctx) {
        const caller = callerOf(ctx);
        const fields = await readCheckedBody(ctx, checkNewClientBody, deps.maxBodyBytes);
        const secret = fields.public === true ? undefined : newClientSecret();
        const client = await clients.change((document) => {
          assertStillAdministrator(deps, deps.users, caller);
          const added = addClient(document, fields, secret?.digest, nowSeconds());
          return { next: added.next, result: added.client };
        });
        deps.logger.info('sign-in app added', { event: 'oidc_client_added', address: ctx.address, clientId: client.clientId, username: caller.user.username });
        // no-store: the answer holds the secret, shown only here.
        sendJson(ctx.res, 200, { clientId: client.clientId, ...(secret === undefined ? {} : { clientSecret: secret.secret }) });
      },
    },
    {
      method: 'PATCH', path: '/api/auth/clients/:clientId', access: 'updateClient', body: 'json',
      async handler(ctx) {
        const caller = callerOf(ctx);
        const clientId = ctx.params['clientId'] ?? '';
        if (!CLIENT_ID_FORMAT.test(clientId)) throw new ClientNotFound();
        const changes = await readCheckedBody(ctx, checkClientChanges, deps.maxBodyBytes);
        const { client, before } = await clients.change((document) => {
          assertStillAdministrator(deps, deps.users, caller);
          // By id only: the command line may name an app, the API names it by what cannot change.
          if (document.clients.every((other) => other.clientId !== clientId)) throw new ClientNotFound();
          const edited = editClient(document, clientId, changes);
          return { next: edited.next, result: edited };
        });
        const endedRefreshTokens = changesWhoMaySignIn(before, client)
          ? await endTokensNoLongerLetIn(client, { findUser: (name) => deps.users.find(name), grants: deps.grants, accessTokens: deps.accessTokens })
          : 0;
        deps.logger.info('sign-in app changed', {
          event: 'oidc_client_changed', address: ctx.address, clientId, username: caller.user.username, fields: Object.keys(changes).join(','),
        });
        sendJson(ctx.res, 200, { ...clientSummaryOf(client), endedRefreshTokens });
      },
    },
    {
      method: 'DELETE', path: '/api/auth/clients/:clientId', access: 'removeClient', body: 'none',
      async handler(ctx) {
        const caller = callerOf(ctx);
        // A malformed id names no client: the same 404 as an unknown one.
        const clientId = ctx.params['clientId'] ?? '';
        if (!CLIENT_ID_FORMAT.test(clientId)) throw new ClientNotFound();
        await clients.change((document) => {
          assertStillAdministrator(deps, deps.users, caller);
          if (document.clients.every((client) => client.clientId !== clientId)) throw new ClientNotFound();
          return { next: removeClient(document, clientId).next, result: undefined };
        });
        // The client's tokens end with it: userinfo and refresh look the client up, and these go too.
        deps.accessTokens.revokeClient(clientId);
        await deps.grants.endClient(clientId);
        deps.logger.info('sign-in app removed', { event: 'oidc_client_removed', address: ctx.address, clientId, username: caller.user.username });
        sendJson(ctx.res, 200, {});
      },
    },
    {
      method: 'PATCH', path: '/api/auth/account', access: 'updateProfile', body: 'json',
      async handler(ctx) {
        const caller = callerOf(ctx);
        const { email, name } = await readCheckedBody(ctx, checkProfileBody, deps.maxBodyBytes);
        await deps.users.change((view) => {
          const user = accountStillSignedIn((username) => view.get(username), caller, deps);
          changeUser(view, user.username, {
            // An address its owner sets is not verified (docs/contract/oidc.md "Accounts").
            ...(email === undefined ? {} : { email: email === null ? null : { address: email, isVerified: false } }),
            ...(name === undefined ? {} : { name }),
          }, nowSeconds());
        });
        sendJson(ctx.res, 200, {});
      },
    },
  ];
}
