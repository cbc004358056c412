// The sign-in page's markup ({base}/login; routes/login-page.ts builds and serves it, and its script
// is browser/sign-in.entry.ts). Steps: password; then, when the account asks for it, a code (TOTP or
// a recovery code); or a passkey instead of both.
import { escapeHtml } from './shell.js';

/**
 * The markup; `accountUrl` is where the account page is: --public-url's when set (the sign-in page
 * also serves apps' sites, where accounts do not answer), else `gatehouse/account` beside the page.
 */
export const signInBody = (accountUrl: string): string => `
<h1 id="title">Sign in</h1>
<p id="signed-out-note" class="message done" role="status" hidden>You are signed out.</p>
<p id="mfa-note" class="message note" hidden>The page you asked for needs two factors: your password and a code from your authenticator app<span data-passkey>, or a passkey</span>.</p>
<p id="again-note" class="message note" hidden>The app you came from asks you to sign in again.</p>
<p id="setup-note" class="message note" hidden>Your account has no second factor yet. Set up an authenticator app<span data-passkey> or a passkey</span> on <a href="${escapeHtml(accountUrl)}">your account page</a>, then come back.</p>
<p id="cookie-note" class="message" role="alert" hidden></p>
<form id="login" method="post">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username webauthn" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<p id="message" class="message" role="alert" hidden></p>
<button type="submit">Sign in</button>
</form>
<form id="code-step" method="post" hidden>
<p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
<label for="code">Code</label>
<input id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="64" required>
<p id="code-message" class="message" role="alert" hidden></p>
<button type="submit">Verify</button>
<button type="button" id="code-back" class="secondary">Back</button>
</form>
<div id="passkey-step" data-passkey hidden>
<p class="or">or</p>
<button type="button" id="passkey" class="secondary">Sign in with a passkey</button>
<p id="passkey-message" class="message" role="alert" hidden></p>
</div>
<div id="setup-step" hidden>
<p class="message note">You are signed in with your password, but the page you asked for needs a second factor and your account has none yet.</p>
<p>Set up an authenticator app<span data-passkey> or a passkey</span> on <a id="account-link" href="${escapeHtml(accountUrl)}">your account page</a>, then sign in again.</p>
</div>
`;
