// The signed-in user's page, {base}/gatehouse/account: password, then its sections, each a file of
// its own (authenticator app, passkeys, machine tokens, sessions). Static, built once; everything it
// shows comes from GET ../api/auth/account and every change is a JSON call
// (docs/contract/accounts.md "The caller's own account").
import { PASSKEYS_SECTION } from './account-passkeys.js';
import { SESSIONS_SECTION } from './account-sessions.js';
import { TOKENS_SECTION } from './account-tokens.js';
import { TOTP_SECTION } from './account-totp.js';
import { buildPage, newPasswordFields, PAGE_HELPERS, type BuiltPage, type PageSection, type Sha256Base64 } from './shell.js';

const bodyOf = (minPasswordLength: number): string => `
<h1>Your account</h1>
<p id="loading" class="muted">Loading…</p>
<p id="status" class="message" role="alert" hidden></p>
<div id="account" hidden>
<p class="who"><span>Signed in as <strong id="who"></strong></span> <span class="who-actions"><a id="to-users" href="users" hidden>Manage users</a> <a id="sign-out" class="button secondary small" href="../logout">Sign out</a></span></p>

<section id="password-section">
<h2>Password</h2>
<form id="password-form" method="post">
<input name="username" autocomplete="username" hidden>
<label for="current-password">Current password</label>
<input id="current-password" name="password" type="password" autocomplete="current-password" required>
${newPasswordFields({ id: 'new-password', name: 'newPassword', label: 'New password' }, { id: 'repeat-password', name: 'repeat', label: 'New password again' }, minPasswordLength)}
<button type="submit">Change password</button>
</form>
<p id="password-message" class="message" role="alert" hidden></p>
</section>
<!-- sections -->
</div>
`;

const STYLE = `
.who strong{overflow-wrap:anywhere}
.who-actions{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem}
.secret{display:inline-block;padding:.3rem .5rem;border-radius:4px;background:#f0f2f5;letter-spacing:.05em;user-select:all}
@media (prefers-color-scheme:dark){.secret{background:#2a2f39}}
`;

const SCRIPT = `
var state = null;
// Sections added to this page (buildAccountPage's sections) fill themselves from each loaded account.
var onAccount = [];
var toSignIn = function () {
  location.replace('../login?rd=' + encodeURIComponent(location.href));
};
var when = function (value) {
  if (value === null || value === undefined || value === '') return 'never';
  var date = new Date(typeof value === 'number' && value < 1e11 ? value * 1000 : value);
  return isNaN(date.getTime()) ? String(value) : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};
var fill = function (parent, entries, empty) {
  parent.textContent = '';
  entries.forEach(function (entry) { parent.appendChild(entry); });
  if (empty) empty.hidden = entries.length > 0;
};
// A second click confirms (no dialog: a removal is one deliberate step more, not a pop-up).
var onSecondClick = function (target, armedText, action) {
  target.addEventListener('click', function () {
    if (target.dataset.armed !== '1') {
      target.dataset.armed = '1';
      target.textContent = armedText;
      target.classList.replace('secondary', 'danger');
      return;
    }
    target.disabled = true;
    action();
  });
};
var item = function (title, details, verb, label, onRemove) {
  var li = element('li');
  var text = li.appendChild(element('div', 'grow'));
  text.appendChild(element('strong', '', title));
  text.appendChild(element('div', 'muted', details));
  var remove = li.appendChild(button(verb, 'secondary small'));
  remove.setAttribute('aria-label', label);
  onSecondClick(remove, 'Click again to ' + verb.toLowerCase(), onRemove);
  return li;
};

/** Draws the account from GET ../api/auth/account; a caller without a session goes to sign in. */
var render = function (account) {
  state = account;
  byId('who').textContent = account.username;
  // Administrators manage every account on the users page (whose API decides; the link only leads there).
  byId('to-users').hidden = !(account.level === 10 || account.level === 'ADMINISTRATOR');
  document.querySelector('#password-form input[name=username]').value = account.username;
  onAccount.forEach(function (fill) { fill(account); });
  byId('loading').hidden = true;
  byId('account').hidden = false;
};
var reload = function () {
  return callApi('GET', '../api/auth/account').then(function (answer) {
    if (answer.status === 401) return toSignIn();
    if (bodyOf(answer) === null) {
      byId('loading').hidden = true;
      return say(byId('status'), problemOf(answer));
    }
    render(answer.body);
    // Asked once the account answered: a visitor without a session meets one 401, not two.
    return callApi('GET', '../api/auth/account/sessions').then(function (sessions) {
      if (Array.isArray(sessions.body)) renderSessions(sessions.body);
      else if (sessions.status !== 401) say(byId('sessions-message'), problemOf(sessions));
      showAskedSection();
    });
  });
};
/** One call from a form or a button: its message cleared first; a lost session goes to sign in. */
var send = function (form, message, method, path, body) {
  say(message, '');
  return callBusy(form, method, path, body).then(function (answer) {
    if (answer.status === 401) toSignIn();
    return answer;
  });
};
/**
 * One change: the call, then the account drawn again, then its message (a 'done' says so only once the
 * page shows what was done). Resolves with the answer.
 */
var change = function (form, message, method, path, body, doneText) {
  return send(form, message, method, path, body).then(function (answer) {
    if (answer.status === 401) return answer;
    if (answer.ok && form) form.reset();
    return reload().then(function () {
      if (!answer.ok) say(message, problemOf(answer));
      else if (doneText) say(message, doneText, 'done');
      return answer;
    });
  });
};

onSubmit(byId('password-form'), function (form) {
  var message = byId('password-message');
  if (form.elements.newPassword.value !== form.elements.repeat.value) {
    say(message, 'The new password and its repetition differ.');
    return;
  }
  var body = { password: form.elements.password.value, newPassword: form.elements.newPassword.value };
  change(form, message, 'POST', '../api/auth/account/password', body, 'Password changed. Every other session of this account has ended.');
});

`;

/** The account page's own sections, in order; `sections` (OpenID Connect's name and e-mail) go before the sessions. */
const OWN_SECTIONS: readonly PageSection[] = [TOTP_SECTION, PASSKEYS_SECTION, TOKENS_SECTION];

/**
 * The account page, built once at start-up; data: images only, for the TOTP QR code. With
 * `isPasskeyOffered` false (passkeys off, passkeys/relying-party.ts) it offers none. `sections`
 * (OpenID Connect's name and e-mail) go before the sessions section, their scripts after the page's own.
 * `minPasswordLength`: the shortest new password the account's route takes.
 */
export function buildAccountPage(
  sha256Base64: Sha256Base64,
  options: { readonly minPasswordLength: number; readonly isPasskeyOffered?: boolean; readonly sections?: readonly PageSection[] },
): BuiltPage {
  const sections = [...OWN_SECTIONS, ...(options.sections ?? []), SESSIONS_SECTION];
  const body = bodyOf(options.minPasswordLength).replace('<!-- sections -->', sections.map((section) => section.body).join(''));
  const sectionScripts = sections.map((section) => section.script).join('');
  const script = `var PASSKEYS_OFFERED = ${options.isPasskeyOffered !== false};\n${PAGE_HELPERS}${SCRIPT}${sectionScripts}\nreload();\n`;
  const style = `${STYLE}${sections.map((section) => section.style ?? '').join('')}`;
  return buildPage({ title: 'Your account', body, script, style, isWide: true, allowDataImages: true }, sha256Base64);
}
