// `{base}/gatehouse/join#<secret>`: the invitation page's markup; its script is browser/join.entry.ts.
// The secret is read from the fragment (which no request carries) and sent only in JSON bodies; the
// page first asks what the link is, then makes the account, then offers a second factor on the
// account page, whose forms and rules are the ones that apply.
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import { buildPage, newPasswordFields, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';

const bodyOf = (minPasswordLength: number): string => `
<h1>Join</h1>
<p id="loading" class="muted">Checking the invitation…</p>
<p id="problem" class="message" role="alert" hidden></p>
<p id="refused-next" hidden><a class="button secondary" href="../login">Go to the sign-in page</a></p>
<form id="join" method="post" hidden>
<p id="fixed-name" hidden>You are invited to make the account <strong id="invited-name"></strong>.</p>
<div id="choose-name" hidden>
<label for="username">Choose a username</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="256">
</div>
<input id="fixed-username" name="fixed-username" autocomplete="username" hidden>
${newPasswordFields({ id: 'password', name: 'password', label: 'Choose a password' }, { id: 'repeat', name: 'repeat', label: 'The password again' }, minPasswordLength)}
<p id="message" class="message" role="alert" hidden></p>
<button type="submit">Make my account</button>
<p id="expires" class="muted"></p>
</form>
<div id="welcome" hidden>
<p class="message done">Your account <strong id="welcome-name"></strong> is ready, and you are signed in.</p>
<p>Protect it with a second factor now, so that a password alone cannot open it:</p>
<p><a id="to-totp" class="button" href="account#totp-section">Set up an authenticator app</a></p>
<p id="passkey-offer" hidden><a id="to-passkey" class="button secondary" href="account#passkeys-section">Add a passkey</a></p>
<p id="passkey-why" class="message note" hidden></p>
<p class="muted"><a href="account">Later: go to my account</a></p>
</div>
`;

/**
 * The join page, built once at start-up on the shared shell and its CSP; `minPasswordLength` is the
 * join route's; `isPasskeyOffered` false (passkeys off, passkeys/relying-party.ts) offers none.
 */
export function buildJoinPage(sha256Base64: Sha256Base64, options: { readonly minPasswordLength: number; readonly isPasskeyOffered: boolean }): BuiltPage {
  const data = { passkeysOffered: options.isPasskeyOffered };
  return buildPage({ title: 'Join · Gatehouse', body: bodyOf(options.minPasswordLength), scripts: [BUILT_SCRIPTS['invitations/join']], data }, sha256Base64);
}
