// `{base}/gatehouse/reset#<secret>`: where someone who forgot their password sets a new one, from a
// link an administrator made. The secret is read from the fragment and sent only in JSON bodies. A
// new password ends every session of the account; it does not sign in (the account's second factors
// still apply at the sign-in page).
import { buildPage, newPasswordFields, PAGE_HELPERS, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';
import { REFUSED_LINK, SECRET_FROM_FRAGMENT } from './fragment-secret.js';

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

const SCRIPT = `${PAGE_HELPERS}${SECRET_FROM_FRAGMENT}${REFUSED_LINK}
var form = byId('reset');
var problem = byId('problem');
var message = byId('message');
var secret = secretFromFragment();

var check = function () {
  if (secret === '') return refuse(NO_SECRET);
  callApi('POST', '../api/auth/reset/check', { secret: secret }).then(function (answer) {
    var body = bodyOf(answer);
    if (body === null) return refuse(answer);
    byId('reset-name').textContent = String(body.username);
    byId('username').value = String(body.username);
    byId('loading').hidden = true;
    form.hidden = false;
    byId('password').focus();
  });
};

onSubmit(form, function () {
  if (byId('password').value !== byId('repeat').value) return say(message, 'The two passwords differ.');
  say(message, '');
  callBusy(form, 'POST', '../api/auth/reset', { secret: secret, password: byId('password').value }).then(function (answer) {
    if (bodyOf(answer) === null) {
      if (codeOf(answer) === 'RESET_LINK_INVALID' || answer.status === 429) return refuse(answer);
      return say(message, problemOf(answer));
    }
    secret = '';
    form.hidden = true;
    byId('done').hidden = false;
  });
});

check();
`;

/** The reset page, built once at start-up on the shared shell and its CSP; `minPasswordLength` is the reset route's. */
export function buildResetPage(sha256Base64: Sha256Base64, options: { readonly minPasswordLength: number }): BuiltPage {
  return buildPage({ title: 'New password · Gatehouse', body: bodyOf(options.minPasswordLength), script: SCRIPT }, sha256Base64);
}
