import { BUILT_SCRIPTS } from '../../pages/built-scripts.js';
import { buildPage, escapeHtml, type BuiltPage, type Sha256Base64 } from '../../pages/shell.js';

// The provider's own pages, built on the shell like every other page (one look, one strict CSP).

/**
 * The 400 page of an authorization or logout request that cannot be sent back to its app: the client
 * or the redirect URI is unknown (RFC 6749 section 4.1.2.1: never redirect then). `reason` is one of
 * our fixed sentences, never text from the request.
 */
export function buildNoRedirectPage(reason: string, sha256Base64: Sha256Base64): BuiltPage {
  const body = `
<h1>This sign-in link does not work</h1>
<p class="message">${escapeHtml(reason)}</p>
<p>The app that sent you here is not set up with Gatehouse as it asks, or the link was changed on the way. Nothing was sent back to the app.</p>
<p class="muted">If this keeps happening, tell whoever runs Gatehouse which app you came from.</p>
`;
  return buildPage({ title: 'Sign-in link not valid', body }, sha256Base64);
}

/** After a logout an app asked for with a valid id_token_hint and no place to return to. */
export function buildSignedOutPage(sha256Base64: Sha256Base64): BuiltPage {
  const body = `
<h1>Signed out</h1>
<p class="message done">You are signed out of Gatehouse.</p>
<p><a class="button" href="../login">Sign in again</a></p>
`;
  return buildPage({ title: 'Signed out', body }, sha256Base64);
}

/**
 * RP-Initiated Logout 1.0 section 2 without a valid id_token_hint: anyone could have sent the browser
 * here, so the person confirms. The server has already checked the query (a post_logout_redirect_uri
 * it holds is registered for the client it names), so the script (browser/logout-confirm.entry.ts)
 * may return there afterwards.
 */
export function buildLogoutConfirmPage(sha256Base64: Sha256Base64): BuiltPage {
  const body = `
<h1>Sign out</h1>
<p>An app asks to sign you out of Gatehouse.</p>
<p id="message" class="message" role="alert" hidden></p>
<button type="button" id="sign-out">Sign out</button>
<p id="done" class="message done" hidden>You are signed out of Gatehouse.</p>
`;
  return buildPage({ title: 'Sign out', body, scripts: [BUILT_SCRIPTS['oidc/pages/logout-confirm']] }, sha256Base64);
}
