// `{base}/gatehouse/join#<secret>`: the invitation page. The secret is read from the fragment (which
// no request carries) and sent only in JSON bodies; the page first asks what the link is (the name
// it fixes, or that it expired, was used or withdrawn), then makes the account, then offers a second
// factor on the account page, whose forms and rules are the ones that apply.
import { buildPage, newPasswordFields, PAGE_HELPERS, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';
import { REFUSED_LINK, SECRET_FROM_FRAGMENT } from './fragment-secret.js';

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

const SCRIPT = `${PAGE_HELPERS}${SECRET_FROM_FRAGMENT}${REFUSED_LINK}
var form = byId('join');
// A passkey is offered only where one can be made (PASSKEYS_OFFERED: passkeys on at the server); where
// the page is not a secure context, it says why instead. With passkeys off, nothing mentions them.
var passkeyProblem = PASSKEYS_OFFERED ? passkeyContextProblem() : '';
byId('passkey-offer').hidden = !PASSKEYS_OFFERED || passkeyProblem !== '';
if (passkeyProblem !== '') say(byId('passkey-why'), passkeyProblem + ' The authenticator app works here.', 'note');
var problem = byId('problem');
var message = byId('message');
var secret = secretFromFragment();
var fixedName = null;
var when = function (ms) {
  var date = new Date(ms);
  return isNaN(date.getTime()) ? '' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};

var check = function () {
  if (secret === '') return refuse(NO_SECRET);
  callApi('POST', '../api/auth/join/check', { secret: secret }).then(function (answer) {
    var body = bodyOf(answer);
    if (body === null) return refuse(answer);
    fixedName = typeof body.username === 'string' ? body.username : null;
    byId('fixed-name').hidden = fixedName === null;
    byId('choose-name').hidden = fixedName !== null;
    byId('username').required = fixedName === null;
    if (fixedName !== null) {
      byId('invited-name').textContent = fixedName;
      // For password managers: the name the new password belongs to.
      byId('fixed-username').value = fixedName;
    }
    byId('expires').textContent = 'This invitation works once, until ' + when(body.expiresAt) + '.';
    byId('loading').hidden = true;
    form.hidden = false;
    (fixedName === null ? byId('username') : byId('password')).focus();
  });
};

onSubmit(form, function () {
  if (byId('password').value !== byId('repeat').value) return say(message, 'The two passwords differ.');
  var body = { secret: secret, password: byId('password').value };
  if (fixedName === null) body.username = byId('username').value;
  say(message, '');
  callBusy(form, 'POST', '../api/auth/join', body).then(function (answer) {
    var made = bodyOf(answer);
    if (made === null) {
      if (codeOf(answer) === 'INVITATION_INVALID' || answer.status === 429) return refuse(answer);
      return say(message, problemOf(answer));
    }
    secret = '';
    form.hidden = true;
    byId('welcome-name').textContent = String(made.username);
    byId('welcome').hidden = false;
    byId('to-totp').focus();
  });
});

check();
`;

/**
 * The join page, built once at start-up on the shared shell and its CSP; `minPasswordLength` is the
 * join route's; `isPasskeyOffered` false (passkeys off, passkeys/relying-party.ts) offers none.
 */
export function buildJoinPage(sha256Base64: Sha256Base64, options: { readonly minPasswordLength: number; readonly isPasskeyOffered: boolean }): BuiltPage {
  const script = `var PASSKEYS_OFFERED = ${options.isPasskeyOffered};\n${SCRIPT}`;
  return buildPage({ title: 'Join · Gatehouse', body: bodyOf(options.minPasswordLength), script }, sha256Base64);
}
