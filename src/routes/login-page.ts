import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import { buildPage, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';
import { signInBody } from '../pages/sign-in.js';

interface LoginPageOptions {
  /** Hosts `rd` may point at besides the page's own origin (config: --allowed-redirect-hosts). */
  readonly allowedRedirectHosts: readonly string[];
  /** --secure-cookie: the page warns at once when it is opened where a Secure cookie cannot be kept. */
  readonly isCookieSecure?: boolean;
  /** --cookie-domain: the page warns at once when it is opened on a host that Domain does not cover. */
  readonly cookieDomain?: string | undefined;
  /** False when passkeys are off (passkeys/relying-party.ts): the page does not offer them. */
  readonly isPasskeyOffered?: boolean;
  /** The account page on Gatehouse's own origin (--public-url's); else `gatehouse/account` beside this page. */
  readonly accountUrl?: string | undefined;
  /** --site-name: what the page says it signs in to; without it, the host in the address bar. */
  readonly siteName?: string | undefined;
  /** SHA-256 of the UTF-8 text, base64 (the composition root owns node:crypto). */
  readonly sha256Base64: Sha256Base64;
}

/**
 * The login page ({base}/login), built once at start-up by the page shell (pages/shell.ts): its
 * script (pages/browser/sign-in.entry.ts) is the same on every server and allowed by its hash, and
 * reads the allowed hosts, the cookie settings and the site's name from the page's JSON data.
 */
export function buildLoginPage(options: LoginPageOptions): BuiltPage {
  const { allowedRedirectHosts: allowedHosts, isCookieSecure, cookieDomain, isPasskeyOffered, siteName } = options;
  const data = { allowedHosts, cookieIsSecure: isCookieSecure === true, cookieDomain: cookieDomain ?? null, passkeysOffered: isPasskeyOffered !== false, siteName: siteName ?? null };
  const body = signInBody(options.accountUrl ?? 'gatehouse/account');
  return buildPage({ title: 'Sign in', body, scripts: [BUILT_SCRIPTS['pages/sign-in']], data }, options.sha256Base64);
}
