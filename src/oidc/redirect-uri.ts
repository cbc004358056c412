import { fail, pass, type Checker } from '../validate/check.js';
import { MAX_REDIRECT_URI_LENGTH } from './limits.js';

// A client's redirect URIs (docs/contract/oidc.md "Clients"): absolute, no fragment
// (RFC 6749 section 3.1.2), https, or http on a loopback name (RFC 8252 section 7.3), or a custom
// scheme for phone apps (RFC 8252 section 7.1); stored as given and compared exactly, character for
// character (RFC 9700 section 2.1), so there is no pattern to widen and no normalization to confuse.

const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];
// Schemes a browser runs or reads locally instead of handing to an app: never a place for a code.
const REFUSED_SCHEMES: readonly string[] = [
  'javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:', 'ws:', 'wss:', 'ftp:', 'mailto:',
];
// Visible ASCII only: a URI with spaces or non-ASCII would be sent differently by different apps.
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** A redirect URI an administrator registers: the string as given, when it follows the rules above. */
export const checkRedirectUri: Checker<string> = (input, path) => {
  if (typeof input !== 'string' || input.length === 0 || input.length > MAX_REDIRECT_URI_LENGTH) {
    return fail(path, `must be a URL of at most ${MAX_REDIRECT_URI_LENGTH} characters`);
  }
  if (!VISIBLE_ASCII.test(input)) return fail(path, 'must be written in visible ASCII, without spaces (percent-encode the rest)');
  if (input.includes('#')) return fail(path, 'must not have a fragment (#)');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return fail(path, 'must be an absolute URL such as https://app.example.org/callback');
  }
  if (url.username !== '' || url.password !== '') return fail(path, 'must not hold a user name or password');
  if (url.protocol === 'https:') return url.hostname === '' ? fail(path, 'must name a host') : pass(input);
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.includes(url.hostname)
      ? pass(input)
      : fail(path, 'must be https (http only on localhost, 127.0.0.1 or [::1])');
  }
  if (REFUSED_SCHEMES.includes(url.protocol)) return fail(path, `must not use the ${url.protocol} scheme`);
  return pass(input);
};

/** A list of 0 (when `allowEmpty`) or 1 to `max` distinct redirect URIs. */
export function redirectUriList(max: number, allowEmpty: boolean): Checker<readonly string[]> {
  return (input, path) => {
    const min = allowEmpty ? 0 : 1;
    if (!Array.isArray(input) || input.length < min || input.length > max) {
      return fail(path, `must be an array of ${min} to ${max} URLs`);
    }
    const seen = new Set<string>();
    for (const [index, item] of input.entries()) {
      const result = checkRedirectUri(item, `${path}[${index}]`);
      if (!result.ok) return result;
      if (seen.has(result.value)) return fail(`${path}[${index}]`, 'repeats a URL');
      seen.add(result.value);
    }
    return pass(Object.freeze([...seen]));
  };
}
