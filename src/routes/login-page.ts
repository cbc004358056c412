import { buildPage, PAGE_HELPERS, scriptJson, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';
import { signInBody, SIGN_IN_SCRIPT } from '../pages/sign-in.js';
import { safeRedirectTarget } from './redirect-target.js';

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
 * script has the allowed hosts and the cookie settings baked in first, and is allowed by hash in a CSP that loads nothing else.
 */
export function buildLoginPage(options: LoginPageOptions): BuiltPage {
  const script = `
var ALLOWED_HOSTS = ${scriptJson(options.allowedRedirectHosts)};
var COOKIE_IS_SECURE = ${options.isCookieSecure === true};
var COOKIE_DOMAIN = ${scriptJson(options.cookieDomain ?? null)};
var PASSKEYS_OFFERED = ${options.isPasskeyOffered !== false};
var SITE_NAME = ${scriptJson(options.siteName ?? null)};
${safeRedirectTarget.toString()}
${PAGE_HELPERS}${SIGN_IN_SCRIPT}`;
  return buildPage({ title: 'Sign in', body: signInBody(options.accountUrl ?? 'gatehouse/account'), script }, options.sha256Base64);
}
