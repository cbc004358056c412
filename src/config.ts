import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { checkScryptCost, DEFAULT_SCRYPT_COST, type ScryptCost } from './auth/password.js';
import type { ThrottleSettings } from './auth/login-throttle.js';
import { createProxyTrust } from './http/client-address.js';
import { comparableHost } from './http/request-origin.js';
import { LOG_FORMATS, LOG_LEVELS } from './log/logger.js';
import { isDnsName, normalizeHostName } from './validate/host-name.js';

/** A bad setting given by the operator: the CLI prints it and exits 2. */
export class SettingInvalid extends Error {}

/** Reads a setting's text (flag, else env, else fallback); `name` names the setting in a refusal. */
type Parse<T> = (text: string, name: string) => T;

export interface SettingSpec {
  readonly flag: string;
  readonly env: string;
  readonly help: string;
  readonly fallback: string;
  readonly parse: Parse<unknown>;
  /** The flag may be given more than once: its values are read as one comma-separated list. */
  readonly isRepeatable?: boolean;
}

const integer = (min: number, max: number): Parse<number> => (text, name) => {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new SettingInvalid(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`);
  }
  return Number(text);
};

const boolean: Parse<boolean> = (text, name) => {
  const value = text.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(value)) return false;
  throw new SettingInvalid(`${name} must be true or false (got ${JSON.stringify(value)})`);
};

// An empty host would listen on every interface, an empty directory be the working one.
const nonEmpty: Parse<string> = (text, name) => {
  if (text.trim() === '') throw new SettingInvalid(`${name} must not be empty`);
  return text;
};

const choice = <T extends string>(allowed: readonly T[]): Parse<T> => (text, name) => {
  const found = allowed.find((candidate) => candidate === text);
  if (found === undefined) throw new SettingInvalid(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(text)})`);
  return found;
};

/** An empty value means the setting is not set. */
const optional = <T>(parse: Parse<T>): Parse<T | undefined> => (text, name) =>
  text === '' ? undefined : parse(text, name);

const list = (text: string): string[] => text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');

const listOf = <T>(parse: Parse<T>): Parse<T[]> => (text, name) => list(text).map((entry) => parse(entry, name));

/** A DNS name, lower-cased; `refusal` words the error for the refused name. */
const dnsName = (refusal: (host: string, name: string) => string): Parse<string> => (text, name) => {
  const host = text.toLowerCase();
  if (!isDnsName(host)) throw new SettingInvalid(refusal(host, name));
  return host;
};

const allowedHost = dnsName((host, name) => `${name}: ${JSON.stringify(host)} is not a DNS name (no port, scheme or path)`);

// RFC 6265 section 5.2.3: a host name; an IP address cannot have sub-domains.
const cookieDomain = dnsName((domain) => `--cookie-domain must be a DNS name such as example.org, without a leading dot (got ${JSON.stringify(domain)})`);

const redirectHost: Parse<string> = (text) => {
  const host = normalizeHostName(text);
  if (host === undefined) throw new SettingInvalid(`--allowed-redirect-hosts takes host names or IP addresses, without scheme, port or path (got ${JSON.stringify(text)})`);
  return host;
};

const trustedProxies: Parse<string[]> = (text) => {
  try {
    createProxyTrust(list(text));
  } catch (error) {
    throw new SettingInvalid(error instanceof Error ? error.message : String(error));
  }
  return list(text);
};

const scryptCost: Parse<ScryptCost> = (text) => {
  const [N, r, p] = /^\d+,\d+,\d+$/.test(text) ? text.split(',').map(Number) : [];
  try {
    return checkScryptCost({ N: N ?? NaN, r: r ?? NaN, p: p ?? NaN });
  } catch (error) {
    throw new SettingInvalid(`--scrypt: ${error instanceof Error ? error.message : String(error)} (format N,r,p)`);
  }
};

/** "/" or "" -> "", "flood/" -> "/flood"; refuses anything that is not a plain path. */
const baseUri: Parse<string> = (text) => {
  const trimmed = text.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  if (
    !/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(trimmed) ||
    trimmed.split('/').some((s) => s === '.' || s === '..')
  ) {
    throw new SettingInvalid(`--base-uri must be a plain path such as /flood (got ${JSON.stringify(text)})`);
  }
  return `/${trimmed}`;
};

const absolutePath: Parse<string> = (text) => resolve(text);

const MAX_SITE_NAME_LENGTH = 64;

/** A name for people to read on the sign-in page: trimmed, 1 to 64 characters, no control or line-breaking characters. */
const siteName: Parse<string> = (text, name) => {
  const trimmed = text.trim();
  if (trimmed === '' || [...trimmed].length > MAX_SITE_NAME_LENGTH || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(trimmed)) {
    throw new SettingInvalid(`${name} must be 1 to ${MAX_SITE_NAME_LENGTH} characters without control characters (got ${JSON.stringify(text)})`);
  }
  return trimmed;
};

/**
 * The shortest password Gatehouse's own routes, pages and commands take unless --min-password-length
 * says otherwise (NIST SP 800-63B asks at least 8 of a password chosen alone; a household's accounts
 * open every app behind the gate). Flood's endpoints keep Flood's contract (1), docs/contract/flood-api.md.
 */
const DEFAULT_MIN_PASSWORD_LENGTH = 12;
const FLOOD_MIN_PASSWORD_LENGTH = 1;

/** The shortest password taken where one is set: on Gatehouse's own routes, and on Flood's two. */
interface PasswordMinimums {
  /** Join, reset, the account's password, POST /api/auth/users, the users page and the command line. */
  readonly gatehouse: number;
  /** POST /api/auth/register and PATCH /api/auth/users/{name}. */
  readonly flood: number;
}

const LOCAL_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** An https origin, or an http one on localhost, 127.0.0.1 or [::1] (a browser's secure contexts over plain HTTP). */
function isSecureOrigin(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOCAL_HOSTS.includes(url.hostname));
}

function parsedUrlOrNull(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * The external URL of Gatehouse's pages, its base included (docs/contract/oidc.md "Issuer"):
 * https, or http on a loopback name; no credentials, query or fragment; written without a trailing slash.
 */
const publicUrl: Parse<string> = (text) => {
  const url = parsedUrlOrNull(text);
  if (
    url === null ||
    !isSecureOrigin(url) ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    text.includes('?') ||
    text.includes('#') ||
    comparableHost(url.host) === undefined
  ) {
    throw new SettingInvalid(`--public-url must be an https URL such as https://auth.example.org (http only on localhost or 127.0.0.1), without query or fragment (got ${JSON.stringify(text)})`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
};

/**
 * Where a Flood web client is served with Gatehouse's API (docs/contract/own-origin.md): an http or
 * https origin, nothing after it but `/`. Plain http is allowed: it names where the Flood endpoints
 * answer, and Flood is often served so on a home network.
 */
const floodUrl: Parse<string> = (text, name) => {
  const url = parsedUrlOrNull(text);
  if (
    url === null ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    normalizeHostName(url.hostname) === undefined ||
    /[?#]/.test(text) ||
    !/^https?:\/\/[^/]+\/?$/i.test(text)
  ) {
    throw new SettingInvalid(`${name} takes origins such as https://flood.example.org (http or https, a host and port, no path) (got ${JSON.stringify(text)})`);
  }
  return url.origin;
};

/** An origin a browser sends: scheme, host and port only, as URL.origin writes it. */
const passkeyOrigin: Parse<string> = (text) => {
  const url = parsedUrlOrNull(text);
  if (url === null || !isSecureOrigin(url) || url.origin !== text.replace(/\/$/, '').toLowerCase()) {
    throw new SettingInvalid(`--passkey-origins takes origins such as https://app.example.org (https, or http on localhost; no path) (got ${JSON.stringify(text)})`);
  }
  return url.origin;
};

/**
 * Every setting, keyed by its Config field: a flag and a GATEHOUSE_* variable (the flag wins), except the
 * secret, which never goes on argv. The order is that of `gatehouse serve --help` and of --print-config.
 */
const TABLE = {
  host: { flag: 'host', env: 'GATEHOUSE_HOST', parse: nonEmpty, help: 'address to listen on', fallback: '127.0.0.1' },
  port: { flag: 'port', env: 'GATEHOUSE_PORT',
    parse: integer(0, 65535), fallback: '3000',
    help: 'port to listen on (0 picks a free one)' },
  dataDir: { flag: 'data-dir', env: 'GATEHOUSE_DATA_DIR',
    parse: (text: string, name: string) => resolve(nonEmpty(text, name)), fallback: './data',
    help: 'directory for users, secret and lock (created 0700)' },
  secret: { flag: '', env: 'GATEHOUSE_SECRET',
    parse: optional((text) => text), fallback: '',
    help: 'token signing secret, at least 32 characters (default: a secret file in the data directory)' },
  secretFile: { flag: 'secret-file', env: 'GATEHOUSE_SECRET_FILE',
    parse: optional(absolutePath), fallback: '',
    help: 'a file holding the signing secret (kept out of docker inspect); not with GATEHOUSE_SECRET' },
  authMethod: { flag: 'auth', env: 'GATEHOUSE_AUTH',
    parse: choice(['default', 'none'] as const), fallback: 'default',
    help: 'default, or none when a proxy authenticates' },
  baseUri: { flag: 'base-uri', env: 'GATEHOUSE_BASE_URI',
    parse: baseUri, fallback: '/',
    help: 'serve the API under this path prefix, e.g. /flood' },
  trustProxy: { flag: 'trust-proxy', env: 'GATEHOUSE_TRUST_PROXY',
    parse: trustedProxies, fallback: '',
    help: 'comma-separated proxy addresses or CIDRs whose X-Forwarded-* headers are believed' },
  allowedHosts: { flag: 'allowed-hosts', env: 'GATEHOUSE_ALLOWED_HOSTS',
    parse: listOf(allowedHost), fallback: '',
    help: 'comma-separated host names through which the first user may register (IP addresses and localhost always may)' },
  secureCookie: { flag: 'secure-cookie', env: 'GATEHOUSE_SECURE_COOKIE',
    parse: boolean, fallback: 'false',
    help: 'always add Secure to the session cookie' },
  /** Lower case, IPv6 in brackets, as url.hostname is written. */
  allowedRedirectHosts: { flag: 'allowed-redirect-hosts', env: 'GATEHOUSE_ALLOWED_REDIRECT_HOSTS',
    parse: listOf(redirectHost), fallback: '',
    help: 'comma-separated host names the login page may return to besides its own origin' },
  cookieDomain: { flag: 'cookie-domain', env: 'GATEHOUSE_COOKIE_DOMAIN',
    parse: optional(cookieDomain), fallback: '',
    help: 'Domain of the session cookie, to share one session with sub-domains (default: host-only)' },
  siteName: { flag: 'site-name', env: 'GATEHOUSE_SITE_NAME',
    parse: optional(siteName), fallback: '',
    help: 'the name the sign-in page says it signs in to, e.g. "The Smiths" (default: the host in the address bar)' },
  publicUrl: { flag: 'public-url', env: 'GATEHOUSE_PUBLIC_URL',
    parse: optional(publicUrl), fallback: '',
    help: "the external URL of Gatehouse's pages, base included (e.g. https://auth.example.org): the OpenID Connect issuer, and the passkey origin with --cookie-domain" },
  floodUrls: { flag: 'flood-url', env: 'GATEHOUSE_FLOOD_URL',
    parse: listOf(floodUrl), fallback: '', isRepeatable: true,
    help: "an origin where a Flood web client is served with Gatehouse's API (e.g. https://flood.example.org): the seven Flood endpoints answer there in full; repeatable, or comma-separated" },
  passkeyOrigins: { flag: 'passkey-origins', env: 'GATEHOUSE_PASSKEY_ORIGINS',
    parse: listOf(passkeyOrigin), fallback: '',
    help: 'comma-separated origins besides --public-url where passkeys may be used (with --cookie-domain)' },
  revokeOnLogout: { flag: 'revoke-on-logout', env: 'GATEHOUSE_REVOKE_ON_LOGOUT',
    parse: boolean, fallback: 'false',
    help: 'logout also refuses the token it cleared until it expires' },
  requireMfa: { flag: 'require-mfa', env: 'GATEHOUSE_REQUIRE_MFA',
    parse: boolean, fallback: 'false',
    help: 'every forward check needs two factors (password and code, or a verified passkey), as if its URL said mfa=1' },
  requireMfaForAdmins: { flag: 'require-mfa-for-admins', env: 'GATEHOUSE_REQUIRE_MFA_FOR_ADMINS',
    parse: boolean, fallback: 'false',
    help: "administrators' sessions need two factors everywhere but their own account page" },
  sealKeyFile: { flag: 'seal-key-file', env: 'GATEHOUSE_SEAL_KEY_FILE',
    parse: optional(absolutePath), fallback: '',
    help: 'the key TOTP seeds are sealed with (default: seal.key in the data directory)' },
  maxRevokedTokens: { flag: 'max-revoked-tokens', env: 'GATEHOUSE_MAX_REVOKED_TOKENS',
    parse: integer(1, 10_000_000), fallback: '10000',
    help: 'cap on remembered revoked tokens' },
  pollIntervalMs: { flag: 'poll-interval', env: 'GATEHOUSE_POLL_INTERVAL',
    parse: integer(100, 86_400_000), fallback: '2000',
    help: 'configs.pollInterval sent to clients, in milliseconds' },
  // Real bodies are under 16 KiB; parsing is unauthenticated, so the cap stays small.
  maxBodyBytes: { flag: 'max-body-bytes', env: 'GATEHOUSE_MAX_BODY_BYTES',
    parse: integer(1024, 1024 * 1024), fallback: '65536',
    help: 'largest accepted request body' },
  minPasswordLength: { flag: 'min-password-length', env: 'GATEHOUSE_MIN_PASSWORD_LENGTH',
    parse: optional(integer(1, 1024)), fallback: '',
    help: `shortest password accepted everywhere (default: ${DEFAULT_MIN_PASSWORD_LENGTH} on Gatehouse's own pages, routes and commands; ${FLOOD_MIN_PASSWORD_LENGTH} on Flood's register and PATCH /api/auth/users)` },
  scryptCost: { flag: 'scrypt', env: 'GATEHOUSE_SCRYPT',
    parse: scryptCost, fallback: `${DEFAULT_SCRYPT_COST.N},${DEFAULT_SCRYPT_COST.r},${DEFAULT_SCRYPT_COST.p}`,
    help: 'scrypt cost as N,r,p' },
  hashConcurrency: { flag: 'hash-concurrency', env: 'GATEHOUSE_HASH_CONCURRENCY',
    parse: integer(1, 64), fallback: String(Math.min(4, Math.max(1, availableParallelism() - 1))),
    help: 'password hashes run at once, 32 MiB each at the default cost (default: cores - 1, from 1 to 4)' },
  hashQueueLength: { flag: 'hash-queue', env: 'GATEHOUSE_HASH_QUEUE',
    parse: integer(0, 100_000), fallback: '256',
    help: 'password hashes that may wait before logins get 503' },
  hashQueuePerClient: { flag: 'hash-queue-per-client', env: 'GATEHOUSE_HASH_QUEUE_PER_CLIENT',
    parse: integer(1, 1_000_000), fallback: '4',
    help: 'password hashes one client address (IPv6: /64) may have waiting before its logins get 503' },
  hashQueuePerNetwork: { flag: 'hash-queue-per-network', env: 'GATEHOUSE_HASH_QUEUE_PER_NETWORK',
    parse: integer(1, 1_000_000), fallback: '16',
    help: 'password hashes one IPv4 /24 or IPv6 /48 may have waiting before its logins get 503' },
  maxFailuresPerUsername: { flag: 'throttle-user', env: 'GATEHOUSE_THROTTLE_USER',
    parse: integer(1, 1_000_000), fallback: '10',
    help: 'failed logins per username per window before 429' },
  maxFailuresPerAddress: { flag: 'throttle-address', env: 'GATEHOUSE_THROTTLE_ADDRESS',
    parse: integer(1, 1_000_000), fallback: '50',
    help: 'failed logins per client address per window before 429' },
  windowSeconds: { flag: 'throttle-window', env: 'GATEHOUSE_THROTTLE_WINDOW',
    parse: integer(1, 86_400), fallback: '900',
    help: 'throttle window in seconds' },
  logLevel: { flag: 'log-level', env: 'GATEHOUSE_LOG_LEVEL',
    parse: choice(LOG_LEVELS), fallback: 'info',
    help: 'debug, info, warn, error or silent' },
  logFormat: { flag: 'log-format', env: 'GATEHOUSE_LOG_FORMAT',
    parse: choice(LOG_FORMATS), fallback: 'json',
    help: 'json or pretty' },
  headersTimeoutMs: { flag: 'headers-timeout', env: 'GATEHOUSE_HEADERS_TIMEOUT',
    parse: integer(500, 600_000), fallback: '10000',
    help: 'milliseconds a client has to send all request headers (slowloris)' },
  requestTimeoutMs: { flag: 'request-timeout', env: 'GATEHOUSE_REQUEST_TIMEOUT',
    parse: integer(500, 3_600_000), fallback: '30000',
    help: 'milliseconds a client has to send a whole request' },
  shutdownTimeoutMs: { flag: 'shutdown-timeout', env: 'GATEHOUSE_SHUTDOWN_TIMEOUT',
    parse: integer(0, 600_000), fallback: '5000',
    help: 'milliseconds to let requests finish on SIGTERM (then 2 s for the last writes)' },
} satisfies Record<string, SettingSpec>;

export const SETTINGS: readonly SettingSpec[] = Object.values(TABLE);

/** Whether a setting is an on/off switch (a flag without a value). */
export const isSwitch = (spec: SettingSpec): boolean => spec.parse === boolean;

const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

type Parsed = { readonly [K in keyof typeof TABLE]: ReturnType<(typeof TABLE)[K]['parse']> };

/** Each setting's parsed value, with the three throttle settings as one ThrottleSettings. */
export type Config = Readonly<
  Omit<Parsed, keyof ThrottleSettings> & { tokenTtlSeconds: number; throttle: ThrottleSettings; passwordMinimums: PasswordMinimums }
>;

/** Builds the frozen configuration from raw values (flag value, else env value, else fallback). Throws SettingInvalid. */
export function buildConfig(raw: (spec: SettingSpec) => string | undefined): Config {
  const parsed: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(TABLE)) {
    parsed[key] = spec.parse(raw(spec) ?? spec.fallback, spec.flag === '' ? spec.env : `--${spec.flag} (${spec.env})`);
  }
  // Sound: the loop set every key of TABLE to what that key's parse returned.
  const { maxFailuresPerUsername, maxFailuresPerAddress, windowSeconds, ...settings } = parsed as Parsed;
  if (settings.secret !== undefined && settings.secretFile !== undefined) {
    throw new SettingInvalid('GATEHOUSE_SECRET and --secret-file (GATEHOUSE_SECRET_FILE) are both set: keep one (the file keeps the secret out of docker inspect)');
  }
  const throttle = { maxFailuresPerUsername, maxFailuresPerAddress, windowSeconds, maxEntries: 10_000 };
  // --min-password-length, when set, is one rule for every route: an operator who sets 20 means 20 on
  // Flood's register too, and one who sets 8 for a household's old passwords means 8 on the pages.
  const passwordMinimums: PasswordMinimums = Object.freeze({
    gatehouse: settings.minPasswordLength ?? DEFAULT_MIN_PASSWORD_LENGTH,
    flood: settings.minPasswordLength ?? FLOOD_MIN_PASSWORD_LENGTH,
  });
  return Object.freeze({ ...settings, tokenTtlSeconds: TOKEN_TTL_SECONDS, throttle, passwordMinimums });
}

/** The configuration as an operator may see it: the secret redacted. */
export function printableConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    secret: config.secret !== undefined
      ? '(set, redacted)'
      : config.secretFile !== undefined
        ? `(read from ${config.secretFile})`
        : '(secret file in the data directory)',
  };
}
