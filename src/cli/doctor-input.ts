import { decodeUtf8Strict } from '../validate/utf8.js';
import { UsageError } from '../command-line/usage-error.js';

// Each URL costs two requests; a list longer than this is more likely a wrong file than a site.
export const MAX_URLS = 100;
export const MAX_PATHS_FILE_BYTES = 64 * 1024;
export const MAX_TOKEN_FILE_BYTES = 4 * 1024;
// A machine token as Gatehouse makes them: gh_ and 32 random bytes in base64url.
const MACHINE_TOKEN = /^gh_[A-Za-z0-9_-]{43}$/;

/** What the doctor signs in with, from standard input: a username line, a password line, optionally a TOTP code line. */
export interface SignIn {
  readonly username: string;
  readonly password: string;
  /** The current 6-digit TOTP code, for an account with a second factor. */
  readonly code?: string;
}

/** The URL whose wiring is checked in full: http or https, no credentials, no fragment. */
export function appUrlOf(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${JSON.stringify(text)} is not an absolute URL (for example https://app.example.com/)`);
  }
  return plainHttpUrl(url, JSON.stringify(text));
}

/** Another URL to check is behind the gate: absolute, or a path (`/ws`) on the first URL's origin. */
export function otherUrlOf(text: string, app: URL, where: string): URL {
  // `//host` and `/\host` are other sites to a URL parser, not paths.
  const isPath = /^\/(?![/\\])/.test(text);
  if (!isPath && !/^https?:\/\//i.test(text)) {
    throw new UsageError(`${where}: ${JSON.stringify(text)} is neither a path starting with / nor an http or https URL`);
  }
  let url: URL;
  try {
    url = new URL(text, app);
  } catch {
    throw new UsageError(`${where}: ${JSON.stringify(text)} is not a URL`);
  }
  return plainHttpUrl(url, `${where}: ${JSON.stringify(text)}`);
}

function plainHttpUrl(url: URL, what: string): URL {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${what}: the URL must be http or https`);
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(`${what}: give credentials on standard input, not in the URL`);
  }
  url.hash = '';
  return url;
}

/**
 * The lines of a `--paths` file: one path (resolved on the first URL's origin) or URL per line;
 * blank lines and lines starting with # are skipped. A bad line is a usage error naming its number.
 */
export function pathsFileUrls(text: string, app: URL): URL[] {
  const urls: URL[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    urls.push(otherUrlOf(line, app, `--paths line ${index + 1}`));
  });
  return urls;
}

/** `--paths FILE`'s bytes as text: UTF-8 or a usage error. */
export function pathsFileText(bytes: Uint8Array, path: string): string {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new UsageError(`--paths ${JSON.stringify(path)} is not valid UTF-8`);
  return text;
}

/**
 * Standard input as a sign-in: nothing at all is none; else a username line and a password line, and
 * optionally a third line with the current TOTP code (spaces allowed between the digits, as apps show it).
 * Never a recovery code: the doctor would spend it.
 */
export function signInOf(text: string): SignIn | undefined {
  if (text === '') return undefined;
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  const [username = '', password = '', codeLine = '', ...rest] = lines;
  if (username === '' || password === '') {
    throw new UsageError('standard input must hold a username line and a password line (and may hold a TOTP code line)');
  }
  if (rest.some((line) => line.trim() !== '')) {
    throw new UsageError('standard input holds more than three lines: give a username line, a password line and, for an account with a second factor, a TOTP code line');
  }
  const code = codeLine.replace(/[ \t]/g, '');
  if (code === '') return { username, password };
  if (!/^\d{6}$/.test(code)) {
    throw new UsageError('the third line of standard input must be the current 6-digit TOTP code (never a recovery code: the doctor would use it up)');
  }
  return { username, password, code };
}

/** A `--token-file`'s bytes as a machine token; the file's content is never shown. */
export function machineTokenOf(bytes: Uint8Array, path: string): string {
  const token = decodeUtf8Strict(bytes)?.trim();
  if (token === undefined || !MACHINE_TOKEN.test(token)) {
    throw new UsageError(`--token-file ${JSON.stringify(path)} must hold one machine token (gh_ and 43 more characters), as gatehouse tokens add or the account page make it`);
  }
  return token;
}

/** `--connect HOST:PORT`: where the requests for the URL's origin go instead. */
export function connectTargetOf(text: string, app: URL): { origin: string; host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !(port >= 1 && port <= 65535)) {
    throw new UsageError(`--connect must be HOST:PORT (got ${JSON.stringify(text)})`);
  }
  return { origin: app.origin, host: match[1] ?? match[2] ?? '', port };
}

/**
 * The URL the sign-in redirect must name exactly: the one given, deeper when it is the site's root
 * (a redirect that always says `/` would pass there), with a query that a proxy passing `$uri` or a
 * fixed path would lose.
 */
export function deepUrlOf(app: URL): URL {
  const url = new URL(app.href);
  if (url.pathname === '/') url.pathname = '/gatehouse-doctor/deep/page';
  url.search = `${app.search === '' ? '?' : `${app.search}&`}gatehouse-doctor=a%2Fb%20c&page=2`;
  return url;
}
