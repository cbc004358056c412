// `{base}/gatehouse/reset#<secret>`: where someone who forgot their password sets a new one, from a
// link an administrator made; its script is browser/reset.entry.ts. The secret is read from the
// fragment and sent only in JSON bodies. A new password ends every session of the account; it does
// not sign in (the account's second factors still apply at the sign-in page).
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import { buildPage, newPasswordFields, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';

const bodyOf = (minPasswordLength: number): string => `
<h1>New password</h1>
<p id="loading" class="muted">Checking the link…</p>
<p id="problem" class="message" role="alert" hidden></p>
<p id="refused-next" hidden><a class="button secondary" href="../login">Go to the sign-in page</a></p>
<form id="reset" method="post" hidden>
<p>Set a new password for <strong id="reset-name"></strong>.</p>
<input id="username" name="username" autocomplete="username" hidden>
${newPasswordFields({ id: 'password', name: 'password', label: 'New password' }, { id: 'repeat', name: 'repeat', label: 'The new password again' }, minPasswordLength)}
<p id="message" class="message" role="alert" hidden></p>
<button type="submit">Set the new password</button>
<p class="muted">Every session of this account ends. Its authenticator app and passkeys stay as they are.</p>
</form>
<div id="done" hidden>
<p class="message done">Your new password is set, and every earlier session of this account has ended.</p>
<p><a class="button" href="../login">Sign in</a></p>
</div>
`;

/** The reset page, built once at start-up on the shared shell and its CSP; `minPasswordLength` is the reset route's. */
export function buildResetPage(sha256Base64: Sha256Base64, options: { readonly minPasswordLength: number }): BuiltPage {
  return buildPage({ title: 'New password · Gatehouse', body: bodyOf(options.minPasswordLength), scripts: [BUILT_SCRIPTS['invitations/reset']] }, sha256Base64);
}
