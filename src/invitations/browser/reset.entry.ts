// The reset page's script ({base}/gatehouse/reset#<secret>; invitations/reset-page.ts has its
// markup): it asks whose the link is, then sets the new password, which ends every session of the
// account and does not sign in.
import { bodyOf, byId, callApi, callBusy, codeOf, onSubmit, problemOf, say } from '../../pages/browser/helpers.js';
import { NO_SECRET, refuse, secretFromFragment } from './link-secret.js';

const form = byId('reset', HTMLFormElement);
const problem = byId('problem');
const message = byId('message');
const password = byId('password', HTMLInputElement);
let secret = secretFromFragment();

const check = (): void => {
  if (secret === '') return refuse(form, problem, NO_SECRET);
  void callApi('POST', '../api/auth/reset/check', { secret }).then((answer) => {
    const body = bodyOf(answer);
    if (body === null) return refuse(form, problem, answer);
    byId('reset-name').textContent = String(body['username']);
    byId('username', HTMLInputElement).value = String(body['username']);
    byId('loading').hidden = true;
    form.hidden = false;
    password.focus();
  });
};

onSubmit(form, () => {
  if (password.value !== byId('repeat', HTMLInputElement).value) return say(message, 'The two passwords differ.');
  say(message, '');
  void callBusy(form, 'POST', '../api/auth/reset', { secret, password: password.value }).then((answer) => {
    if (bodyOf(answer) === null) {
      if (codeOf(answer) === 'RESET_LINK_INVALID' || answer.status === 429) return refuse(form, problem, answer);
      return say(message, problemOf(answer));
    }
    secret = '';
    form.hidden = true;
    byId('done').hidden = false;
  });
});

check();
