// The account page's passkeys section's markup: the account's passkeys (added, last used, Remove
// with the password and a second click) and adding one with the password. Its script is
// browser/account-section.entry.ts.
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import type { PageSection } from '../pages/shell.js';

const BODY = `
<section id="passkeys-section">
<h2>Passkeys</h2>
<p id="passkeys-off" class="message note" hidden>Passkeys are turned off on this server: the ones below no longer sign in, and no new one can be added.</p>
<p id="passkeys-about" class="muted">Sign in with your device's screen lock or a security key, instead of a password and a code.</p>
<ul id="passkey-list" class="items"></ul>
<p id="no-passkeys" class="muted" hidden>No passkeys yet.</p>
<p id="passkey-why" class="message note" hidden></p>
<form id="passkey-add" method="post">
<label id="passkey-password-label" for="passkey-password">Your password, to add or remove a passkey</label>
<input id="passkey-password" name="password" type="password" autocomplete="current-password" required>
<div id="passkey-new">
<label for="passkey-name">Name for a new passkey</label>
<input id="passkey-name" name="name" autocomplete="off" maxlength="64" placeholder="e.g. Phone, YubiKey" required>
<button type="submit">Add a passkey</button>
</div>
</form>
<p id="passkey-message" class="message" role="alert" hidden></p>
</section>
`;

/** Before the account page's own sections, after TOTP's. */
export const PASSKEYS_SECTION: PageSection = Object.freeze({ body: BODY, built: BUILT_SCRIPTS['passkeys/account-section'], place: 'first' });
