// The account page's passkeys section (passkeys/account-section.ts has its markup): the account's
// passkeys (added, last used, Remove with the password and a second click) and adding one with the
// password. Whether the server offers passkeys at all is the page's data (passkeys/relying-party.ts decides).
import { onAccountPage } from '../../pages/browser/account-page.js';
import { bodyOf, byId, callApi, fieldOf, isObject, onSubmit, problemOf, say, setBusy } from '../../pages/browser/helpers.js';
import { credentialJsonOf, errorMessage, errorName, passkeyContextProblem, publicKeyOf } from '../../pages/browser/passkey-json.js';

onAccountPage((page) => {
  const { passkeysOffered } = page;
  const message = byId('passkey-message');
  const password = byId('passkey-password', HTMLInputElement);
  page.onAccount((account) => {
    const passkeys = Array.isArray(account['passkeys']) ? account['passkeys'].filter(isObject) : [];
    page.fill(byId('passkey-list'), passkeys.map((passkey) => {
      const name = String(passkey['name']);
      const details = `Added ${page.when(passkey['createdAt'])} · last used ${page.when(passkey['lastUsedAt'])}`;
      return page.item(name, details, 'Remove', `Remove passkey ${name}`, () => {
        if (password.value === '') {
          say(message, 'Enter your password above to remove a passkey.');
          password.focus();
          void page.reload();
          return;
        }
        const path = `../api/auth/account/passkeys/${encodeURIComponent(String(passkey['id']))}`;
        void page.change(byId('passkey-add', HTMLFormElement), message, 'DELETE', path, { password: password.value }, 'Passkey removed.');
      });
    }), byId('no-passkeys'));
    // None is offered where none can be made: passkeys off on this server (then those the account still
    // has are listed as off), or a page that is not a secure context (then it says why). The password
    // field stays while there is a passkey to remove.
    const canAdd = passkeysOffered && passkeyProblem === '';
    byId('passkey-new').hidden = !canAdd;
    byId('passkey-add').hidden = !canAdd && passkeys.length === 0;
    byId('passkey-password-label').textContent = canAdd ? 'Your password, to add or remove a passkey' : 'Your password, to remove a passkey';
    if (!passkeysOffered) {
      for (const id of ['passkeys-about', 'no-passkeys']) byId(id).hidden = true;
      byId('passkeys-off').hidden = false;
      byId('passkeys-section').hidden = passkeys.length === 0;
    }
  });

  const passkeyProblem = passkeysOffered ? passkeyContextProblem() : '';
  if (passkeyProblem !== '') say(byId('passkey-why'), `${passkeyProblem} Set up an authenticator app instead, or add a passkey from an https address of this page.`, 'note');
  onSubmit(byId('passkey-add', HTMLFormElement), (form) => {
    const name = fieldOf(form, 'name').value.trim();
    say(message, '');
    setBusy(form, true);
    callApi('POST', '../api/auth/account/passkeys/options', {})
      .then((answer) => {
        if (answer.status === 401) return page.toSignIn();
        const options = bodyOf(answer);
        if (options === null) throw new Error(problemOf(answer));
        return navigator.credentials.create({ publicKey: publicKeyOf(options) }).then((credential) => {
          if (!(credential instanceof PublicKeyCredential)) throw new Error('No passkey was made.');
          const body = { name, credential: credentialJsonOf(credential), password: fieldOf(form, 'password').value };
          return page.change(form, message, 'POST', '../api/auth/account/passkeys', body, 'Passkey added.').then(() => undefined);
        });
      })
      .catch((error: unknown) => {
        const text = errorName(error) === 'NotAllowedError'
          ? 'No passkey was made: the request was cancelled or timed out.'
          : errorName(error) === 'InvalidStateError'
            ? 'This authenticator already holds a passkey for this account.'
            : errorMessage(error) !== '' ? errorMessage(error) : 'Adding a passkey failed.';
        say(message, text);
        setBusy(form, false);
      });
  });
});
