import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { checkScryptCost, DEFAULT_SCRYPT_COST, type ScryptCost } from './auth/password.js';
import type { ThrottleSettings } from './auth/login-throttle.js';
import { createProxyTrust } from './http/client-address.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './log/logger.js';
import { isDnsName, normalizeHostName } from './validate/host-name.js';

export type AuthMethod = 'default' | 'none';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** From GATEHOUSE_SECRET; when absent the data directory's secret file is used. */
  readonly secret: string | undefined;
  /** From GATEHOUSE_SECRET_FILE: a file holding the secret (never both it and GATEHOUSE_SECRET). */
  readonly secretFile: string | undefined;
  readonly authMethod: AuthMethod;
  readonly baseUri: string;
  readonly trustProxy: readonly string[];
  /** Host names (lower-cased) through which the first user may be registered, besides IP literals and localhost. */
  readonly allowedHosts: readonly string[];
  readonly secureCookie: boolean;
  /** The login page returns to its own origin and to these hosts only (lower case, IPv6 in brackets). */
  readonly allowedRedirectHosts: readonly string[];
  /** The session cookie's Domain attribute; undefined means a host-only cookie. */
  readonly cookieDomain: string | undefined;
  readonly revokeOnLogout: boolean;
  /** `--require-mfa`: every forward check needs a two-factor session, as if its URL said `mfa=1`. */
  readonly requireMfa: boolean;
  /** `--require-mfa-for-admins`: an administrator's session without two factors counts as none, except on the caller's own account API. */
  readonly requireMfaForAdmins: boolean;
  /** The key TOTP seeds are sealed with: this file, else `seal.key` in the data directory. */
  readonly sealKeyFile: string | undefined;
  readonly maxRevokedTokens: number;
  readonly tokenTtlSeconds: number;
  readonly pollIntervalMs: number;
  readonly maxBodyBytes: number;
  readonly minPasswordLength: number;
  readonly scryptCost: ScryptCost;
  readonly hashConcurrency: number;
  readonly hashQueueLength: number;
  /** Hashes one client key (one fair-queue lane) may have waiting. */
  readonly hashQueuePerClient: number;
  /** Hashes one network (IPv4 /24, IPv6 /48) may have waiting. */
  readonly hashQueuePerNetwork: number;
  readonly throttle: ThrottleSettings;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
}

/** A bad setting given by the operator: the CLI prints it and exits 2. */
export class SettingInvalid extends Error {}

type Kind = 'string' | 'integer' | 'boolean' | 'list' | 'secret';

export interface SettingSpec {
  readonly flag: string;
  readonly env: string;
  readonly kind: Kind;
  readonly help: string;
  readonly fallback: string;
}

/** Every setting: a flag and a GATEHOUSE_* variable (the flag wins), except the secret, which never goes on argv. */
export const SETTINGS: readonly SettingSpec[] = [
  { flag: 'host', env: 'GATEHOUSE_HOST', kind: 'string', help: 'address to listen on', fallback: '127.0.0.1' },
  { flag: 'port', env: 'GATEHOUSE_PORT', kind: 'integer', help: 'port to listen on (0 picks a free one)', fallback: '3000' },
  { flag: 'data-dir', env: 'GATEHOUSE_DATA_DIR', kind: 'string', help: 'directory for users, secret and lock (created 0700)', fallback: './data' },
  { flag: '', env: 'GATEHOUSE_SECRET', kind: 'secret', help: 'token signing secret, at least 32 characters (default: a secret file in the data directory)', fallback: '' },
  { flag: 'secret-file', env: 'GATEHOUSE_SECRET_FILE', kind: 'string', help: 'a file holding the signing secret (kept out of docker inspect); not with GATEHOUSE_SECRET', fallback: '' },
  { flag: 'auth', env: 'GATEHOUSE_AUTH', kind: 'string', help: 'default, or none when a proxy authenticates', fallback: 'default' },
  { flag: 'base-uri', env: 'GATEHOUSE_BASE_URI', kind: 'string', help: 'serve the API under this path prefix, e.g. /flood', fallback: '/' },
  { flag: 'trust-proxy', env: 'GATEHOUSE_TRUST_PROXY', kind: 'list', help: 'comma-separated proxy addresses or CIDRs whose X-Forwarded-* headers are believed', fallback: '' },
  { flag: 'allowed-hosts', env: 'GATEHOUSE_ALLOWED_HOSTS', kind: 'list', help: 'comma-separated host names through which the first user may register (IP addresses and localhost always may)', fallback: '' },
  { flag: 'secure-cookie', env: 'GATEHOUSE_SECURE_COOKIE', kind: 'boolean', help: 'always add Secure to the session cookie', fallback: 'false' },
  { flag: 'allowed-redirect-hosts', env: 'GATEHOUSE_ALLOWED_REDIRECT_HOSTS', kind: 'list', help: 'comma-separated host names the login page may return to besides its own origin', fallback: '' },
  { flag: 'cookie-domain', env: 'GATEHOUSE_COOKIE_DOMAIN', kind: 'string', help: 'Domain of the session cookie, to share one session with sub-domains (default: host-only)', fallback: '' },
  { flag: 'revoke-on-logout', env: 'GATEHOUSE_REVOKE_ON_LOGOUT', kind: 'boolean', help: 'logout also refuses the token it cleared until it expires', fallback: 'false' },
  { flag: 'require-mfa', env: 'GATEHOUSE_REQUIRE_MFA', kind: 'boolean', help: 'every forward check needs two factors (password and code, or a verified passkey), as if its URL said mfa=1', fallback: 'false' },
  { flag: 'require-mfa-for-admins', env: 'GATEHOUSE_REQUIRE_MFA_FOR_ADMINS', kind: 'boolean', help: "administrators' sessions need two factors everywhere but their own account page", fallback: 'false' },
  { flag: 'seal-key-file', env: 'GATEHOUSE_SEAL_KEY_FILE', kind: 'string', help: 'the key TOTP seeds are sealed with (default: seal.key in the data directory)', fallback: '' },
  { flag: 'max-revoked-tokens', env: 'GATEHOUSE_MAX_REVOKED_TOKENS', kind: 'integer', help: 'cap on remembered revoked tokens', fallback: '10000' },
  { flag: 'poll-interval', env: 'GATEHOUSE_POLL_INTERVAL', kind: 'integer', help: 'configs.pollInterval sent to clients, in milliseconds', fallback: '2000' },
  { flag: 'max-body-bytes', env: 'GATEHOUSE_MAX_BODY_BYTES', kind: 'integer', help: 'largest accepted request body', fallback: '65536' },
  { flag: 'min-password-length', env: 'GATEHOUSE_MIN_PASSWORD_LENGTH', kind: 'integer', help: 'shortest password accepted on register and update', fallback: '1' },
  { flag: 'scrypt', env: 'GATEHOUSE_SCRYPT', kind: 'string', help: 'scrypt cost as N,r,p', fallback: `${DEFAULT_SCRYPT_COST.N},${DEFAULT_SCRYPT_COST.r},${DEFAULT_SCRYPT_COST.p}` },
  { flag: 'hash-concurrency', env: 'GATEHOUSE_HASH_CONCURRENCY', kind: 'integer', help: 'password hashes run at once, 32 MiB each at the default cost (default: cores - 1, from 1 to 4)', fallback: String(Math.min(4, Math.max(1, availableParallelism() - 1))) },
  { flag: 'hash-queue', env: 'GATEHOUSE_HASH_QUEUE', kind: 'integer', help: 'password hashes that may wait before logins get 503', fallback: '256' },
  { flag: 'hash-queue-per-client', env: 'GATEHOUSE_HASH_QUEUE_PER_CLIENT', kind: 'integer', help: 'password hashes one client address (IPv6: /64) may have waiting before its logins get 503', fallback: '4' },
  { flag: 'hash-queue-per-network', env: 'GATEHOUSE_HASH_QUEUE_PER_NETWORK', kind: 'integer', help: 'password hashes one IPv4 /24 or IPv6 /48 may have waiting before its logins get 503', fallback: '16' },
  { flag: 'throttle-user', env: 'GATEHOUSE_THROTTLE_USER', kind: 'integer', help: 'failed logins per username per window before 429', fallback: '10' },
  { flag: 'throttle-address', env: 'GATEHOUSE_THROTTLE_ADDRESS', kind: 'integer', help: 'failed logins per client address per window before 429', fallback: '50' },
  { flag: 'throttle-window', env: 'GATEHOUSE_THROTTLE_WINDOW', kind: 'integer', help: 'throttle window in seconds', fallback: '900' },
  { flag: 'log-level', env: 'GATEHOUSE_LOG_LEVEL', kind: 'string', help: 'debug, info, warn, error or silent', fallback: 'info' },
  { flag: 'log-format', env: 'GATEHOUSE_LOG_FORMAT', kind: 'string', help: 'json or pretty', fallback: 'json' },
  { flag: 'headers-timeout', env: 'GATEHOUSE_HEADERS_TIMEOUT', kind: 'integer', help: 'milliseconds a client has to send all request headers (slowloris)', fallback: '10000' },
  { flag: 'request-timeout', env: 'GATEHOUSE_REQUEST_TIMEOUT', kind: 'integer', help: 'milliseconds a client has to send a whole request', fallback: '30000' },
  { flag: 'shutdown-timeout', env: 'GATEHOUSE_SHUTDOWN_TIMEOUT', kind: 'integer', help: 'milliseconds to let requests finish on SIGTERM (then 2 s for the last writes)', fallback: '5000' },
];

export const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Builds the frozen configuration from raw values (flag value, else env value, else fallback). Throws SettingInvalid. */
export function buildConfig(raw: (spec: SettingSpec) => string | undefined): Config {
  const values = new Map<string, string>();
  for (const spec of SETTINGS) {
    const value = raw(spec);
    if (value !== undefined) values.set(spec.env, value);
  }
  const text = (env: string): string => values.get(env) ?? SETTINGS.find((s) => s.env === env)?.fallback ?? '';
  const integer = (env: string, min: number, max: number): number => {
    const value = text(env);
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new SettingInvalid(`${describe(env)} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
    return Number(value);
  };
  const boolean = (env: string): boolean => {
    const value = text(env).toLowerCase();
    if (value === '') return false;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    throw new SettingInvalid(`${describe(env)} must be true or false (got ${JSON.stringify(value)})`);
  };
  // An empty host would listen on every interface, an empty directory be the working one.
  const nonEmpty = (env: string): string => {
    const value = text(env);
    if (value.trim() === '') throw new SettingInvalid(`${describe(env)} must not be empty`);
    return value;
  };
  const choice = <T extends string>(env: string, allowed: readonly T[]): T => {
    const value = text(env);
    const found = allowed.find((candidate) => candidate === value);
    if (found === undefined) throw new SettingInvalid(`${describe(env)} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
    return found;
  };

  const secret = values.get('GATEHOUSE_SECRET');
  const secretFile = values.get('GATEHOUSE_SECRET_FILE');
  if (secret !== undefined && secret !== '' && secretFile !== undefined && secretFile !== '') {
    throw new SettingInvalid('GATEHOUSE_SECRET and --secret-file (GATEHOUSE_SECRET_FILE) are both set: keep one (the file keeps the secret out of docker inspect)');
  }
  const listOf = (env: string): string[] => text(env).split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const trustProxy = listOf('GATEHOUSE_TRUST_PROXY');
  try {
    createProxyTrust(trustProxy);
  } catch (error) {
    throw new SettingInvalid(error instanceof Error ? error.message : String(error));
  }
  const allowedRedirectHosts = listOf('GATEHOUSE_ALLOWED_REDIRECT_HOSTS').map((entry) => {
    const host = normalizeHostName(entry);
    if (host === undefined) throw new SettingInvalid(`--allowed-redirect-hosts takes host names or IP addresses, without scheme, port or path (got ${JSON.stringify(entry)})`);
    return host;
  });
  const cookieDomainText = text('GATEHOUSE_COOKIE_DOMAIN').toLowerCase();
  // RFC 6265 section 5.2.3: a host name; an IP address cannot have sub-domains.
  if (cookieDomainText !== '' && !isDnsName(cookieDomainText)) {
    throw new SettingInvalid(`--cookie-domain must be a DNS name such as example.org, without a leading dot (got ${JSON.stringify(cookieDomainText)})`);
  }
  const allowedHosts = listOf('GATEHOUSE_ALLOWED_HOSTS').map((entry) => entry.toLowerCase());
  for (const name of allowedHosts) {
    if (!isDnsName(name)) throw new SettingInvalid(`--allowed-hosts (GATEHOUSE_ALLOWED_HOSTS): ${JSON.stringify(name)} is not a DNS name (no port, scheme or path)`);
  }
  const scryptText = text('GATEHOUSE_SCRYPT');
  const [N, r, p] = /^\d+,\d+,\d+$/.test(scryptText) ? scryptText.split(',').map(Number) : [];
  let scryptCost: ScryptCost;
  try {
    scryptCost = checkScryptCost({ N: N ?? NaN, r: r ?? NaN, p: p ?? NaN });
  } catch (error) {
    throw new SettingInvalid(`--scrypt: ${error instanceof Error ? error.message : String(error)} (format N,r,p)`);
  }

  const config: Config = {
    host: nonEmpty('GATEHOUSE_HOST'),
    port: integer('GATEHOUSE_PORT', 0, 65535),
    dataDir: resolve(nonEmpty('GATEHOUSE_DATA_DIR')),
    secret: secret === undefined || secret === '' ? undefined : secret,
    secretFile: secretFile === undefined || secretFile === '' ? undefined : resolve(secretFile),
    authMethod: choice('GATEHOUSE_AUTH', ['default', 'none'] as const),
    baseUri: normalizeBaseUri(text('GATEHOUSE_BASE_URI')),
    trustProxy,
    allowedHosts,
    secureCookie: boolean('GATEHOUSE_SECURE_COOKIE'),
    allowedRedirectHosts,
    cookieDomain: cookieDomainText === '' ? undefined : cookieDomainText,
    revokeOnLogout: boolean('GATEHOUSE_REVOKE_ON_LOGOUT'),
    requireMfa: boolean('GATEHOUSE_REQUIRE_MFA'),
    requireMfaForAdmins: boolean('GATEHOUSE_REQUIRE_MFA_FOR_ADMINS'),
    sealKeyFile: text('GATEHOUSE_SEAL_KEY_FILE') === '' ? undefined : resolve(text('GATEHOUSE_SEAL_KEY_FILE')),
    maxRevokedTokens: integer('GATEHOUSE_MAX_REVOKED_TOKENS', 1, 10_000_000),
    tokenTtlSeconds: TOKEN_TTL_SECONDS,
    pollIntervalMs: integer('GATEHOUSE_POLL_INTERVAL', 100, 86_400_000),
    // Real bodies are under 16 KiB; parsing is unauthenticated, so the cap stays small.
    maxBodyBytes: integer('GATEHOUSE_MAX_BODY_BYTES', 1024, 1024 * 1024),
    minPasswordLength: integer('GATEHOUSE_MIN_PASSWORD_LENGTH', 1, 1024),
    scryptCost,
    hashConcurrency: integer('GATEHOUSE_HASH_CONCURRENCY', 1, 64),
    hashQueueLength: integer('GATEHOUSE_HASH_QUEUE', 0, 100_000),
    hashQueuePerClient: integer('GATEHOUSE_HASH_QUEUE_PER_CLIENT', 1, 1_000_000),
    hashQueuePerNetwork: integer('GATEHOUSE_HASH_QUEUE_PER_NETWORK', 1, 1_000_000),
    throttle: {
      maxFailuresPerUsername: integer('GATEHOUSE_THROTTLE_USER', 1, 1_000_000),
      maxFailuresPerAddress: integer('GATEHOUSE_THROTTLE_ADDRESS', 1, 1_000_000),
      windowSeconds: integer('GATEHOUSE_THROTTLE_WINDOW', 1, 86_400),
      maxEntries: 10_000,
    },
    logLevel: choice('GATEHOUSE_LOG_LEVEL', LOG_LEVELS),
    logFormat: choice('GATEHOUSE_LOG_FORMAT', LOG_FORMATS),
    headersTimeoutMs: integer('GATEHOUSE_HEADERS_TIMEOUT', 500, 600_000),
    requestTimeoutMs: integer('GATEHOUSE_REQUEST_TIMEOUT', 500, 3_600_000),
    shutdownTimeoutMs: integer('GATEHOUSE_SHUTDOWN_TIMEOUT', 0, 600_000),
  };
  return Object.freeze(config);
}

function describe(env: string): string {
  const spec = SETTINGS.find((s) => s.env === env);
  return spec === undefined || spec.flag === '' ? env : `--${spec.flag} (${env})`;
}

/** "/" or "" -> "", "flood/" -> "/flood"; refuses anything that is not a plain path. */
function normalizeBaseUri(value: string): string {
  const trimmed = value.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  if (!/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(trimmed) || trimmed.split('/').some((s) => s === '.' || s === '..')) {
    throw new SettingInvalid(`--base-uri must be a plain path such as /flood (got ${JSON.stringify(value)})`);
  }
  return `/${trimmed}`;
}

/** The configuration as an operator may see it: the secret redacted. */
export function printableConfig(config: Config): Record<string, unknown> {
  return { ...config, secret: config.secret !== undefined ? '(set, redacted)' : config.secretFile !== undefined ? `(read from ${config.secretFile})` : '(secret file in the data directory)' };
}
