// The join page's script ({base}/gatehouse/join#<secret>; invitations/join-page.ts has its markup):
// it first asks what the link is (the name it fixes, or that it expired, was used or withdrawn),
// then makes the account, then offers a second factor on the account page.
import { bodyOf, byId, callApi, callBusy, codeOf, onSubmit, pageData, problemOf, say } from '../../pages/browser/helpers.js';
import { passkeyContextProblem } from '../../pages/browser/passkey-json.js';
import { NO_SECRET, refuse, secretFromFragment } from './link-secret.js';

const form = byId('join', HTMLFormElement);
const problem = byId('problem');
const message = byId('message');
const username = byId('username', HTMLInputElement);
const password = byId('password', HTMLInputElement);
// A passkey is offered only where one can be made (passkeys on at the server: the page's data);
// where the page is not a secure context, it says why instead. With passkeys off, nothing mentions them.
const passkeysOffered = pageData()['passkeysOffered'] === true;
const passkeyProblem = passkeysOffered ? passkeyContextProblem() : '';
byId('passkey-offer').hidden = !passkeysOffered || passkeyProblem !== '';
if (passkeyProblem !== '') say(byId('passkey-why'), `${passkeyProblem} The authenticator app works here.`, 'note');
let secret = secretFromFragment();
let fixedName: string | null = null;
const when = (ms: unknown): string => {
  const date = new Date(typeof ms === 'number' ? ms : NaN);
  return isNaN(date.getTime()) ? '' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};

const check = (): void => {
  if (secret === '') return refuse(form, problem, NO_SECRET);
  void callApi('POST', '../api/auth/join/check', { secret }).then((answer) => {
    const body = bodyOf(answer);
    if (body === null) return refuse(form, problem, answer);
    const name = body['username'];
    fixedName = typeof name === 'string' ? name : null;
    byId('fixed-name').hidden = fixedName === null;
    byId('choose-name').hidden = fixedName !== null;
    username.required = fixedName === null;
    if (fixedName !== null) {
      byId('invited-name').textContent = fixedName;
      // For password managers: the name the new password belongs to.
      byId('fixed-username', HTMLInputElement).value = fixedName;
    }
    byId('expires').textContent = `This invitation works once, until ${when(body['expiresAt'])}.`;
    byId('loading').hidden = true;
    form.hidden = false;
    (fixedName === null ? username : password).focus();
  });
};

onSubmit(form, () => {
  if (password.value !== byId('repeat', HTMLInputElement).value) return say(message, 'The two passwords differ.');
  const body: Record<string, string> = { secret, password: password.value };
  if (fixedName === null) body['username'] = username.value;
  say(message, '');
  void callBusy(form, 'POST', '../api/auth/join', body).then((answer) => {
    const made = bodyOf(answer);
    if (made === null) {
      if (codeOf(answer) === 'INVITATION_INVALID' || answer.status === 429) return refuse(form, problem, answer);
      return say(message, problemOf(answer));
    }
    secret = '';
    form.hidden = true;
    byId('welcome-name').textContent = String(made['username']);
    byId('welcome').hidden = false;
    byId('to-totp').focus();
  });
});

check();
