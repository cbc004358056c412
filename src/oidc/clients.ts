import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ClientNameTaken, ClientNotFound, PublicClientSecret, TooManyClients } from '../errors.js';
import {
  fail, isPlainObject, matching, objectOf, oneOf, optional, pass, stringOf, unixSeconds, type Checker, type CheckedType,
} from '../validate/check.js';
import { checkGroups, checkStoredGroups } from '../validate/groups.js';
import { SIGNING_ALGS } from './jwk.js';
import { MAX_CLIENT_NAME_LENGTH, MAX_CLIENTS, MAX_REDIRECT_URIS } from './limits.js';
import { redirectUriList } from './redirect-uri.js';

// The apps that sign users in through Gatehouse (docs/contract/oidc.md "Clients"):
// made by administrators only, never by dynamic registration. A confidential client has a secret,
// shown once and stored as its SHA-256 digest; a public one (a phone or browser app) has none and
// must use PKCE. `groups` limits who may sign in to it; `mfa` asks for two factors.

export const CLIENTS_FILE = 'oidc-clients.json';
const FORMAT = 1;

/** 128 random bits in lower-case hex: safe to paste anywhere, never taken for a command-line flag. */
export const CLIENT_ID_FORMAT = /^[0-9a-f]{32}$/;
/** A secret's digest: SHA-256, base64url. */
const DIGEST_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export const checkClientName = stringOf({ minLength: 1, maxLength: MAX_CLIENT_NAME_LENGTH });
const isTrue: Checker<true> = (input, path) => (input === true ? pass(true as const) : fail(path, 'must be true when present'));
export const isBoolean: Checker<boolean> = (input, path) => (typeof input === 'boolean' ? pass(input) : fail(path, 'must be true or false'));

const checkStoredClientFields = objectOf(
  {
    clientId: matching(CLIENT_ID_FORMAT, 'a client id'),
    name: checkClientName,
    redirectUris: redirectUriList(MAX_REDIRECT_URIS, false),
    postLogoutRedirectUris: optional(redirectUriList(MAX_REDIRECT_URIS, false)),
    public: optional(isTrue),
    secretDigest: optional(matching(DIGEST_FORMAT, 'a secret digest')),
    groups: optional(checkStoredGroups),
    mfa: optional(isTrue),
    alg: oneOf(SIGNING_ALGS),
    createdAt: unixSeconds,
  },
  { rejectUnknownKeys: true },
);

/** A client as stored: a public one has no secret digest, a confidential one has one. */
const checkStoredClient: Checker<CheckedType<typeof checkStoredClientFields>> = (input, path) => {
  const result = checkStoredClientFields(input, path);
  if (result.ok && (result.value.public === true) === (result.value.secretDigest !== undefined)) {
    return fail(`${path}.secretDigest`, 'must be present exactly when the client is not public');
  }
  return result;
};

export type StoredClient = Readonly<CheckedType<typeof checkStoredClientFields>>;

export interface ClientsDocument {
  readonly format: typeof FORMAT;
  readonly clients: readonly StoredClient[];
}

export const EMPTY_CLIENTS: ClientsDocument = { format: FORMAT, clients: [] };

/** The clients file: at most MAX_CLIENTS, ids and names distinct. */
export const checkClientsDocument: Checker<ClientsDocument> = (input) => {
  if (!isPlainObject(input)) return fail('', 'must be a JSON object');
  if (input['format'] !== FORMAT) return fail('format', `must be ${FORMAT}`);
  const list = input['clients'];
  if (!Array.isArray(list) || list.length > MAX_CLIENTS) return fail('clients', `must be an array of at most ${MAX_CLIENTS} clients`);
  const clients: StoredClient[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const [index, item] of list.entries()) {
    const result = checkStoredClient(item, `clients[${index}]`);
    if (!result.ok) return result;
    if (ids.has(result.value.clientId)) return fail(`clients[${index}].clientId`, 'repeats a client id');
    if (names.has(result.value.name)) return fail(`clients[${index}].name`, 'repeats a client name');
    ids.add(result.value.clientId);
    names.add(result.value.name);
    clients.push(result.value);
  }
  return pass({ format: FORMAT, clients });
};

/** POST /api/auth/clients (and `gatehouse clients add`): what an administrator gives. */
export const checkNewClientBody = objectOf({
  name: checkClientName,
  redirectUris: redirectUriList(MAX_REDIRECT_URIS, false),
  public: optional(isBoolean),
  groups: optional(checkGroups),
  mfa: optional(isBoolean),
  alg: optional(oneOf(SIGNING_ALGS)),
  postLogoutRedirectUris: optional(redirectUriList(MAX_REDIRECT_URIS, true)),
});
type NewClient = CheckedType<typeof checkNewClientBody>;

/** A fresh client secret (256 random bits, shown once) and the digest that is stored of it. */
export function newClientSecret(): { readonly secret: string; readonly digest: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, digest: secretDigest(secret).toString('base64url') };
}

const secretDigest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** Whether `presented` is the confidential client's secret: a digest compared in constant time. */
export function isClientSecret(client: StoredClient, presented: string): boolean {
  if (client.secretDigest === undefined) return false;
  return timingSafeEqual(secretDigest(presented), Buffer.from(client.secretDigest, 'base64url'));
}

/**
 * The document with a new client made from `fields` under a fresh id (and, unless public, the
 * secret's digest). Throws TooManyClients or ClientNameTaken.
 */
export function addClient(
  document: ClientsDocument, fields: NewClient, secretDigestText: string | undefined, nowSeconds: number,
): { readonly next: ClientsDocument; readonly client: StoredClient } {
  if (document.clients.length >= MAX_CLIENTS) throw new TooManyClients();
  if (document.clients.some((client) => client.name === fields.name)) throw new ClientNameTaken();
  const isPublic = fields.public === true;
  const groups = fields.groups ?? [];
  const logoutUris = fields.postLogoutRedirectUris ?? [];
  const client: StoredClient = {
    clientId: randomBytes(16).toString('hex'),
    name: fields.name,
    redirectUris: fields.redirectUris,
    ...(logoutUris.length === 0 ? {} : { postLogoutRedirectUris: logoutUris }),
    ...(isPublic ? { public: true as const } : { secretDigest: secretDigestText ?? '' }),
    ...(groups.length === 0 ? {} : { groups }),
    ...(fields.mfa === true ? { mfa: true as const } : {}),
    alg: fields.alg ?? 'RS256',
    createdAt: nowSeconds,
  };
  return { next: { ...document, clients: [...document.clients, client] }, client };
}

/** The client named by its id, or (for the command line) by its name; throws ClientNotFound. */
export function findClient(document: ClientsDocument, idOrName: string): StoredClient {
  const found = document.clients.find((client) => client.clientId === idOrName) ??
    document.clients.find((client) => client.name === idOrName);
  if (found === undefined) throw new ClientNotFound();
  return found;
}

/** The document without that client; throws ClientNotFound. */
export function removeClient(document: ClientsDocument, idOrName: string): { next: ClientsDocument; client: StoredClient } {
  const client = findClient(document, idOrName);
  return { next: { ...document, clients: document.clients.filter((other) => other !== client) }, client };
}

/** The document with the client's secret replaced (the old one stops working); throws ClientNotFound, PublicClientSecret. */
export function replaceClientSecret(
  document: ClientsDocument, idOrName: string, digest: string,
): { next: ClientsDocument; client: StoredClient } {
  const client = findClient(document, idOrName);
  if (client.public === true) throw new PublicClientSecret();
  const replaced: StoredClient = { ...client, secretDigest: digest };
  return { next: { ...document, clients: document.clients.map((other) => (other === client ? replaced : other)) }, client: replaced };
}

/** What an administrator sees of a client: everything but the secret's digest. */
export function clientSummaryOf(client: StoredClient) {
  return {
    clientId: client.clientId,
    name: client.name,
    redirectUris: client.redirectUris,
    postLogoutRedirectUris: client.postLogoutRedirectUris ?? [],
    public: client.public === true,
    groups: client.groups ?? [],
    mfa: client.mfa === true,
    alg: client.alg,
    createdAt: client.createdAt * 1000,
  };
}
