// The account page's passkeys section: the account's passkeys (added, last used, Remove with the
// password and a second click) and adding one with the password. Browser code that runs inside the
// account page's script (pages/account.ts), after its helpers; PASSKEYS_OFFERED says whether the
// server offers passkeys at all (passkeys/relying-party.ts).
import type { PageSection } from './shell.js';

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

const SCRIPT = `
onAccount.push(function (account) {
  var passkeys = Array.isArray(account.passkeys) ? account.passkeys : [];
  fill(byId('passkey-list'), passkeys.map(function (passkey) {
    var name = String(passkey.name);
    var details = 'Added ' + when(passkey.createdAt) + ' · last used ' + when(passkey.lastUsedAt);
    return item(name, details, 'Remove', 'Remove passkey ' + name, function () {
      var password = byId('passkey-password');
      if (password.value === '') {
        say(byId('passkey-message'), 'Enter your password above to remove a passkey.');
        password.focus();
        reload();
        return;
      }
      var path = '../api/auth/account/passkeys/' + encodeURIComponent(passkey.id);
      change(byId('passkey-add'), byId('passkey-message'), 'DELETE', path, { password: password.value }, 'Passkey removed.');
    });
  }), byId('no-passkeys'));
  // None is offered where none can be made: passkeys off on this server (then those the account still
  // has are listed as off), or a page that is not a secure context (then it says why). The password
  // field stays while there is a passkey to remove.
  var canAdd = PASSKEYS_OFFERED && passkeyProblem === '';
  byId('passkey-new').hidden = !canAdd;
  byId('passkey-add').hidden = !canAdd && passkeys.length === 0;
  byId('passkey-password-label').textContent = canAdd ? 'Your password, to add or remove a passkey' : 'Your password, to remove a passkey';
  if (!PASSKEYS_OFFERED) {
    ['passkeys-about', 'no-passkeys'].forEach(function (id) { byId(id).hidden = true; });
    byId('passkeys-off').hidden = false;
    byId('passkeys-section').hidden = passkeys.length === 0;
  }
});

var passkeyProblem = PASSKEYS_OFFERED ? passkeyContextProblem() : '';
if (passkeyProblem !== '') say(byId('passkey-why'), passkeyProblem + ' Set up an authenticator app instead, or add a passkey from an https address of this page.', 'note');
onSubmit(byId('passkey-add'), function (form) {
  var name = form.elements.name.value.trim();
  var message = byId('passkey-message');
  say(message, '');
  setBusy(form, true);
  callApi('POST', '../api/auth/account/passkeys/options', {})
    .then(function (answer) {
      if (answer.status === 401) return toSignIn();
      if (bodyOf(answer) === null) throw new Error(problemOf(answer));
      return navigator.credentials.create({ publicKey: publicKeyOf(answer.body) }).then(function (credential) {
        if (credential === null) throw new Error('No passkey was made.');
        var body = { name: name, credential: credentialJsonOf(credential), password: form.elements.password.value };
        return change(form, message, 'POST', '../api/auth/account/passkeys', body, 'Passkey added.');
      });
    })
    .catch(function (error) {
      var text = error && error.name === 'NotAllowedError'
        ? 'No passkey was made: the request was cancelled or timed out.'
        : error && error.name === 'InvalidStateError'
          ? 'This authenticator already holds a passkey for this account.'
          : error && error.message ? error.message : 'Adding a passkey failed.';
      say(message, text);
      setBusy(form, false);
    });
});
`;

export const PASSKEYS_SECTION: PageSection = Object.freeze({ body: BODY, script: SCRIPT });
