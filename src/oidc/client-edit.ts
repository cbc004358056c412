import { isTwoFactor, type Amr } from '../auth/amr.js';
import { ClientNameTaken } from '../errors.js';
import type { StoredUser } from '../store/users.js';
import { fail, objectOf, oneOf, optional, type Checker, type CheckedType } from '../validate/check.js';
import { checkGroups } from '../validate/groups.js';
import type { AccessTokenStore } from './access-tokens.js';
import { checkClientName, findClient, isBoolean, type ClientsDocument, type StoredClient } from './clients.js';
import type { GrantStore } from './grant-store.js';
import { SIGNING_ALGS } from './jwk.js';
import { MAX_REDIRECT_URIS } from './limits.js';
import { redirectUriList } from './redirect-uri.js';
import { isAllowedBy } from './token-service.js';

// Editing a registered app (docs/contract/oidc.md, clients): PATCH /api/auth/clients/{clientId},
// `gatehouse clients edit` and the users page. Its id and secret stay, so nothing is pasted into the
// app again; what changes counts from the next authorization (every request looks the client up).
// An account the new groups or `mfa` no longer let in keeps no refresh token for the app.

/**
 * What may change, each field checked as adding an app checks it; a list replaces the stored one
 * (`groups: []` lets every account in, `postLogoutRedirectUris: []` removes them). Anything else
 * (`public`, the id, the secret) is refused by name: those cannot change without breaking the app.
 */
const checkChangeFields = objectOf({
  name: optional(checkClientName),
  redirectUris: optional(redirectUriList(MAX_REDIRECT_URIS, false)),
  postLogoutRedirectUris: optional(redirectUriList(MAX_REDIRECT_URIS, true)),
  groups: optional(checkGroups),
  mfa: optional(isBoolean),
  alg: optional(oneOf(SIGNING_ALGS)),
}, { rejectUnknownKeys: true });
export type ClientChanges = CheckedType<typeof checkChangeFields>;

/** The changes of one request: at least one field. */
export const checkClientChanges: Checker<ClientChanges> = (input, path) => {
  const result = checkChangeFields(input, path);
  if (result.ok && Object.keys(result.value).length === 0) {
    return fail(path, 'must name at least one of name, redirectUris, postLogoutRedirectUris, groups, mfa, alg');
  }
  return result;
};

/** The client with `changes` applied: an empty list or false leaves its optional field out, as adding does. */
function changed(client: StoredClient, changes: ClientChanges): StoredClient {
  const { postLogoutRedirectUris, groups, mfa, ...rest } = client;
  const logoutUris = changes.postLogoutRedirectUris ?? postLogoutRedirectUris ?? [];
  const newGroups = changes.groups ?? groups ?? [];
  const isMfa = changes.mfa ?? mfa === true;
  return {
    ...rest,
    ...(changes.name === undefined ? {} : { name: changes.name }),
    ...(changes.redirectUris === undefined ? {} : { redirectUris: changes.redirectUris }),
    ...(changes.alg === undefined ? {} : { alg: changes.alg }),
    ...(logoutUris.length === 0 ? {} : { postLogoutRedirectUris: logoutUris }),
    ...(newGroups.length === 0 ? {} : { groups: newGroups }),
    ...(isMfa ? { mfa: true as const } : {}),
  };
}

/**
 * The document with the client named by `idOrName` changed; `before` is the client as it was. Throws
 * ClientNotFound, or ClientNameTaken when another client has the new name.
 */
export function editClient(
  document: ClientsDocument, idOrName: string, changes: ClientChanges,
): { readonly next: ClientsDocument; readonly client: StoredClient; readonly before: StoredClient } {
  const before = findClient(document, idOrName);
  if (changes.name !== undefined && document.clients.some((other) => other !== before && other.name === changes.name)) {
    throw new ClientNameTaken();
  }
  const client = changed(before, changes);
  return { next: { ...document, clients: document.clients.map((other) => (other === before ? client : other)) }, client, before };
}

/** Whether the edit changed who may sign in (groups, mfa): only then are tokens looked at. */
export function changesWhoMaySignIn(before: StoredClient, after: StoredClient): boolean {
  const groupsOf = (client: StoredClient): string => (client.groups ?? []).join(',');
  return groupsOf(before) !== groupsOf(after) || (before.mfa === true) !== (after.mfa === true);
}

/**
 * Whether a token of `client` for `user` (undefined: the account is gone), got through a sign-in
 * with `amr`, is one the client lets in now: the account in one of its groups, and two factors when
 * it has `mfa`. The account's own sessions are liveAccount's to judge, at the token's next use.
 */
function stillLetsIn(client: StoredClient, user: StoredUser | undefined, amr: Amr | undefined): boolean {
  return user !== undefined && isAllowedBy(client, user) && (client.mfa !== true || isTwoFactor(amr));
}

/**
 * After an edit that changed who may sign in: ends the refresh token families (and, when the service
 * holds them, the access tokens) of the client's accounts it no longer lets in. Returns how many
 * families ended.
 */
export async function endTokensNoLongerLetIn(
  client: StoredClient,
  deps: {
    readonly findUser: (username: string) => StoredUser | undefined;
    readonly grants: Pick<GrantStore, 'endWhere'>;
    readonly accessTokens?: Pick<AccessTokenStore, 'revokeWhere' | 'revokeGrant'>;
  },
): Promise<number> {
  const isOut = (holder: { clientId: string; username: string; amr: Amr }): boolean =>
    holder.clientId === client.clientId && !stillLetsIn(client, deps.findUser(holder.username), holder.amr);
  const ended = await deps.grants.endWhere(isOut);
  for (const grant of ended) deps.accessTokens?.revokeGrant(grant.id);
  deps.accessTokens?.revokeWhere(isOut);
  return ended.length;
}
