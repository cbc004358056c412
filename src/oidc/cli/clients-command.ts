import { configFrom, settingsHelp, type CliIo, type Command } from '../../command-line/flags.js';
import { parseOffline, valid, withDataDir } from '../../command-line/offline.js';
import type { FeatureFieldChecks } from '../../store/stored-fields.js';
import { EXIT_OK, UsageError } from '../../command-line/usage-error.js';
import { SETTINGS } from '../../config.js';
import { openUserStore } from '../../store/users.js';
import { escapeUnsafeCharacters } from '../../log/terminal-safe.js';
import { changesWhoMaySignIn, checkClientChanges, editClient, endTokensNoLongerLetIn, type ClientChanges } from '../client-edit.js';
import {
  addClient, checkNewClientBody, clientSummaryOf, newClientSecret, removeClient, replaceClientSecret, type StoredClient,
} from '../clients.js';
import { openClientStore } from '../client-store.js';
import { signOutUrls } from '../sign-out-url.js';
import { openGrantStore } from '../grant-store.js';
import { MAX_REDIRECT_URIS } from '../limits.js';
import { epochSeconds } from '../../time.js';

// `gatehouse clients`: the sign-in apps, offline like `gatehouse users` (the service must be
// stopped), through the same validators and rules as POST /api/auth/clients.

const CLIENT_SETTINGS = SETTINGS.filter((spec) => spec.flag === 'data-dir' || spec.flag === 'public-url');

export const CLIENTS_HELP = `Usage: gatehouse clients COMMAND [options]

The apps that sign users in through Gatehouse (OpenID Connect), while the service is stopped.

Commands:
  add NAME --redirect-uri URI [--redirect-uri URI ...] [--public] [--group G ...] [--mfa]
      [--alg ES256] [--post-logout-redirect-uri URI ...] [--json]
                                register an app; its client id and (unless --public) its secret
                                are printed once, only the secret's digest is stored. Up to
                                ${MAX_REDIRECT_URIS} redirect URIs, compared exactly. --public: a phone or browser
                                app without a secret, which must use PKCE. --group: only members
                                of one of these groups may sign in. --mfa: two factors needed.
                                --post-logout-redirect-uri (or --post-logout-uri): where the app
                                may return after signing out; the ready sign-out URL is printed
  edit NAME|ID [--name NEW] [--redirect-uri URI ...] [--post-logout-redirect-uri URI ...]
      [--group G ...] [--mfa | --no-mfa] [--alg RS256|ES256] [--no-groups]
      [--no-post-logout-redirect-uri] [--json]
                                change an app; its client id and secret stay. A list flag replaces
                                the whole list (give every URI or group it should hold); --no-groups
                                lets every account in, --no-post-logout-redirect-uri removes them.
                                New groups or --mfa end the refresh tokens of accounts no longer let in
  list [--json]                 print every app (never a secret)
  remove NAME|ID                remove an app: its refresh tokens stop working
  secret NAME|ID [--json]       give an app a new secret (the old one stops working)

--json prints {"clientId":...,"clientSecret":...} (add, secret), the app as the API shows it (edit)
or the list as JSON.

Options:
${settingsHelp(CLIENT_SETTINGS)}
  --help                         show this help
`;

const list = (value: string | boolean | string[] | undefined): string[] =>
  (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []);

/** `gatehouse clients`, reading accounts with the features' checks (`fields`). */
export const clientsCommand = (fields: FeatureFieldChecks): Command => async (args, io) => {
  const call = parseOffline(args, io, {
    name: 'clients',
    help: CLIENTS_HELP,
    settings: CLIENT_SETTINGS,
    commands: {
      add: {
        arity: 1,
        flags: {
          'redirect-uri': 'strings', public: 'boolean', group: 'strings', mfa: 'boolean', alg: 'string',
          'post-logout-uri': 'strings', 'post-logout-redirect-uri': 'strings', json: 'boolean',
        },
      },
      edit: { arity: 1, flags: EDIT_FLAGS },
      list: { arity: 0, flags: { json: 'boolean' } },
      remove: { arity: 1 },
      secret: { arity: 1, flags: { json: 'boolean' } },
    },
  });
  if (call === undefined) return EXIT_OK;
  const { command, values, positionals } = call;
  const config = configFrom(values, Object.fromEntries(CLIENT_SETTINGS.map((spec) => [spec.env, io.env[spec.env]])));
  const isJson = values['json'] === true;
  const target = positionals[0] ?? '';
  const newClient = command === 'add'
    ? valid(checkNewClientBody, {
        name: target,
        redirectUris: list(values['redirect-uri']),
        public: values['public'] === true,
        groups: list(values['group']),
        mfa: values['mfa'] === true,
        ...(typeof values['alg'] === 'string' ? { alg: values['alg'] } : {}),
        postLogoutRedirectUris: [...list(values['post-logout-uri']), ...list(values['post-logout-redirect-uri'])],
      }, 'client')
    : undefined;
  const changes = command === 'edit' ? valid(checkClientChanges, changesOf(values), 'client') : undefined;
  if (command === 'add' && list(values['redirect-uri']).length === 0) throw new UsageError('clients add needs at least one --redirect-uri');
  if (config.publicUrl === undefined && command !== 'list') {
    io.stderr.write('gatehouse: note: --public-url (GATEHOUSE_PUBLIC_URL) is not set here; the service answers 404 on every OpenID Connect path until it is set there (it is the issuer apps are given)\n');
  }
  const nowSeconds = epochSeconds(Date.now());

  return withDataDir(config.dataDir, `clients ${command}`, io, async (fileSystem) => {
    const clients = await openClientStore(fileSystem, config.dataDir);
    if (command === 'list') {
      const summaries = clients.current.clients.map(clientSummaryOf);
      if (isJson) io.stdout.write(`${JSON.stringify(summaries)}\n`);
      else for (const client of clients.current.clients) io.stdout.write(`${listLine(client)}\n`);
      return EXIT_OK;
    }
    if (newClient !== undefined) {
      const secret = newClient.public === true ? undefined : newClientSecret();
      const client = await clients.change((document) => {
        const added = addClient(document, newClient, secret?.digest, nowSeconds);
        return { next: added.next, result: added.client };
      });
      printCredentials(io, isJson, client, secret?.secret, config.publicUrl);
      return EXIT_OK;
    }
    if (changes !== undefined) {
      const { client, before } = await clients.change((document) => {
        const edited = editClient(document, target, changes);
        return { next: edited.next, result: edited };
      });
      let ended = 0;
      if (changesWhoMaySignIn(before, client)) {
        const users = await openUserStore(config.dataDir, fileSystem, fields);
        const grants = await openGrantStore(fileSystem, config.dataDir);
        ended = await endTokensNoLongerLetIn(client, { findUser: (name) => users.find(name), grants });
      }
      if (isJson) {
        io.stdout.write(`${JSON.stringify({ ...clientSummaryOf(client), endedRefreshTokens: ended })}\n`);
        return EXIT_OK;
      }
      io.stdout.write(`changed ${escapeUnsafeCharacters(client.name)}; its client id and secret stay\n`);
      printCredentials(io, false, client, undefined, config.publicUrl);
      if (ended > 0) io.stdout.write(`ended ${ended} refresh token${ended === 1 ? '' : 's'} of accounts it no longer lets in\n`);
      return EXIT_OK;
    }
    if (command === 'secret') {
      const secret = newClientSecret();
      const client = await clients.change((document) => {
        const replaced = replaceClientSecret(document, target, secret.digest);
        return { next: replaced.next, result: replaced.client };
      });
      printCredentials(io, isJson, client, secret.secret, config.publicUrl);
      return EXIT_OK;
    }
    const removed = await clients.change((document) => {
      const { next, client } = removeClient(document, target);
      return { next, result: client };
    });
    const grants = await openGrantStore(fileSystem, config.dataDir);
    await grants.endClient(removed.clientId);
    io.stdout.write(`removed ${escapeUnsafeCharacters(removed.name)} (${removed.clientId}); its refresh tokens no longer work\n`);
    return EXIT_OK;
  });
};

function listLine(client: StoredClient): string {
  const kind = client.public === true ? 'public' : 'confidential';
  const groups = client.groups === undefined ? '-' : client.groups.join(',');
  return [client.clientId, escapeUnsafeCharacters(client.name), kind, client.alg, `groups=${groups}`,
    `mfa=${client.mfa === true ? 'yes' : 'no'}`, client.redirectUris.join(' ')].join('\t');
}

function printCredentials(io: CliIo, isJson: boolean, client: StoredClient, secret: string | undefined, issuer: string | undefined): void {
  if (isJson) {
    io.stdout.write(`${JSON.stringify({ clientId: client.clientId, ...(secret === undefined ? {} : { clientSecret: secret }) })}\n`);
    return;
  }
  io.stdout.write(`client id:     ${client.clientId}\n`);
  if (secret !== undefined) io.stdout.write(`client secret: ${secret}\n`);
  if (issuer !== undefined) {
    io.stdout.write(`issuer:        ${issuer}\ndiscovery:     ${issuer}/.well-known/openid-configuration\n`);
  }
  for (const url of signOutUrls(issuer ?? 'ISSUER', client)) io.stdout.write(`sign-out URL:  ${url}\n`);
  if (secret !== undefined) io.stderr.write('gatehouse: the secret is shown only now; only its digest is stored\n');
}

const EDIT_FLAGS = {
  name: 'string', 'redirect-uri': 'strings', 'post-logout-redirect-uri': 'strings', group: 'strings', mfa: 'boolean',
  'no-mfa': 'boolean', alg: 'string', 'no-groups': 'boolean', 'no-post-logout-redirect-uri': 'boolean', json: 'boolean',
} as const;

/** What `clients edit`'s flags ask to change, as the API's body: a list flag replaces, a --no-… flag clears. */
function changesOf(values: Readonly<Record<string, string | boolean | string[] | undefined>>): Record<string, unknown> {
  const either = (list: string[], clear: boolean, what: string): { value: string[] } | undefined => {
    if (list.length > 0 && clear) throw new UsageError(`give either --${what} or --no-${what}${what === 'group' ? 's' : ''}`);
    return list.length > 0 || clear ? { value: list } : undefined;
  };
  if (values['mfa'] === true && values['no-mfa'] === true) throw new UsageError('give either --mfa or --no-mfa');
  const redirects = list(values['redirect-uri']);
  const logouts = either(list(values['post-logout-redirect-uri']), values['no-post-logout-redirect-uri'] === true, 'post-logout-redirect-uri');
  const groups = either(list(values['group']), values['no-groups'] === true, 'group');
  const mfa = values['mfa'] === true ? true : values['no-mfa'] === true ? false : undefined;
  const changes: Partial<Record<keyof ClientChanges, unknown>> = {
    ...(typeof values['name'] === 'string' ? { name: values['name'] } : {}),
    ...(redirects.length > 0 ? { redirectUris: redirects } : {}),
    ...(logouts === undefined ? {} : { postLogoutRedirectUris: logouts.value }),
    ...(groups === undefined ? {} : { groups: groups.value }),
    ...(mfa === undefined ? {} : { mfa }),
    ...(typeof values['alg'] === 'string' ? { alg: values['alg'] } : {}),
  };
  if (Object.keys(changes).length === 0) throw new UsageError('clients edit needs something to change: see gatehouse clients --help');
  return changes;
}
