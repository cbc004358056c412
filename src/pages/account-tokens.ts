// The account page's machine tokens section's markup: make one with the password (shown once,
// optionally expiring), see when each was last used, revoke one with a second click. Its script is
// browser/account-tokens.ts.
import type { PageSection } from './shell.js';

const BODY = `
<section id="tokens-section">
<h2>Machine tokens</h2>
<p class="muted">For scripts and apps that cannot sign in: sent as <code>Authorization: Bearer gh_…</code> (or as the password of Basic auth). A token passes every gate your account passes, except one that asks for two factors (<code>mfa=1</code>, or a server setting requiring them) without also saying <code>tokens=1</code>.</p>
<ul id="token-list" class="items"></ul>
<p id="no-tokens" class="muted" hidden>No machine tokens.</p>
<div id="new-token" class="message done" hidden>
<p>Copy this token now: it is not shown again.</p>
<p><code id="token-value" class="secret"></code></p>
</div>
<form id="token-add" method="post">
<label for="token-name">Name</label>
<input id="token-name" name="name" autocomplete="off" maxlength="64" placeholder="e.g. backup script" required>
<label for="token-days">Expires after (days, empty for never)</label>
<input id="token-days" name="days" type="number" min="1" max="3650" inputmode="numeric">
<label for="token-password">Your password</label>
<input id="token-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Create a token</button>
</form>
<p id="token-message" class="message" role="alert" hidden></p>
</section>
`;

export const TOKENS_SECTION: PageSection = Object.freeze({ body: BODY });
