import { fail, integerIn, isPlainObject, joinPath, pass, stringOf, type Checked, type Checker } from './check.js';

// docs/contract/flood-api.md "Client settings": exactly one of these; unknown keys inside are rejected.
// Stored, never returned: they hold a torrent client's password.
const nonEmpty = stringOf({ minLength: 1, maxLength: 4096 });
const credential = stringOf({ minLength: 0, maxLength: 1024 });
const port = integerIn(1, 65535);

const urlText = stringOf({ minLength: 1, maxLength: 2048 });
const httpUrl: Checker<string> = (input, path) => {
  const asString = urlText(input, path);
  if (!asString.ok) return asString;
  const protocol = URL.canParse(asString.value) ? new URL(asString.value).protocol : undefined;
  return protocol === 'http:' || protocol === 'https:' ? asString : fail(path, 'must be an http or https URL');
};

const VARIANTS = {
  rTorrent: { socket: { socket: nonEmpty }, tcp: { host: nonEmpty, port } },
  qBittorrent: { web: { url: httpUrl, username: credential, password: credential } },
  Transmission: { rpc: { url: httpUrl, username: credential, password: credential } },
  Deluge: { rpc: { host: nonEmpty, port, username: credential, password: credential } },
} as const satisfies Record<string, Record<string, Record<string, Checker<unknown>>>>;

const HEADER_KEYS = ['client', 'type', 'version'];

type ClientKind = keyof typeof VARIANTS;
export const CLIENT_KINDS = Object.keys(VARIANTS) as readonly ClientKind[];

export interface ClientSettings {
  readonly client: ClientKind;
  readonly type: string;
  readonly version: 1;
  readonly [field: string]: string | number;
}

export const checkClientSettings: Checker<ClientSettings> = (input, path): Checked<ClientSettings> => {
  if (!isPlainObject(input)) return fail(path, 'must be a JSON object');
  const kind = input['client'];
  if (typeof kind !== 'string' || !Object.hasOwn(VARIANTS, kind)) {
    return fail(joinPath(path, 'client'), `must be one of ${CLIENT_KINDS.join(', ')}`);
  }
  const types: Readonly<Record<string, Readonly<Record<string, Checker<unknown>>>>> = VARIANTS[kind as ClientKind];
  const type = input['type'];
  if (typeof type !== 'string' || !Object.hasOwn(types, type)) {
    return fail(joinPath(path, 'type'), `must be one of ${Object.keys(types).join(', ')} for ${kind}`);
  }
  if (input['version'] !== 1) return fail(joinPath(path, 'version'), 'must be 1');
  const fields = types[type] ?? {};
  const output: Record<string, string | number> = { client: kind, type, version: 1 };
  const unknown = Object.keys(input).find((key) => !HEADER_KEYS.includes(key) && !Object.hasOwn(fields, key));
  if (unknown !== undefined) return fail(joinPath(path, unknown), 'is not an allowed field');
  for (const [key, check] of Object.entries(fields)) {
    if (!Object.hasOwn(input, key)) return fail(joinPath(path, key), 'is required');
    const result = check(input[key], joinPath(path, key));
    if (!result.ok) return result;
    output[key] = result.value as string | number;
  }
  return pass(output as unknown as ClientSettings);
};
