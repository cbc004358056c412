// The signed-in user's page, {base}/gatehouse/account: password, TOTP, passkeys, machine tokens,
// log out everywhere. Static, built once; everything it shows comes from GET
// ../api/auth/account and every change is a JSON call (docs/contract/accounts.md "The caller's own account").
import { SESSIONS_SCRIPT } from './account-sessions.js';
import { buildPage, PAGE_HELPERS, type BuiltPage, type PageSection, type Sha256Base64 } from './shell.js';

const BODY = `
<h1>Your account</h1>
<p id="loading" class="muted">Loading…</p>
<p id="status" class="message" role="alert" hidden></p>
<div id="account" hidden>
<p class="who"><span>Signed in as <strong id="who"></strong></span> <button type="button" id="sign-out" class="secondary small">Sign out</button></p>

<section id="password-section">
<h2>Password</h2>
<form id="password-form" method="post">
<input name="username" autocomplete="username" hidden>
<label for="current-password">Current password</label>
<input id="current-password" name="password" type="password" autocomplete="current-password" required>
<label for="new-password">New password</label>
<input id="new-password" name="newPassword" type="password" autocomplete="new-password" required>
<label for="repeat-password">New password again</label>
<input id="repeat-password" name="repeat" type="password" autocomplete="new-password" required>
<button type="submit">Change password</button>
</form>
<p id="password-message" class="message" role="alert" hidden></p>
</section>

<section id="totp-section">
<h2>Authenticator app</h2>
<div id="totp-off" hidden>
<p>A code from an app such as Aegis, Google Authenticator or 1Password, asked for after your password.</p>
<form id="totp-start" method="post">
<label for="totp-password">Your password</label>
<input id="totp-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Set up an authenticator app</button>
</form>
</div>
<div id="totp-pending" hidden>
<p>Scan this code with your authenticator app:</p>
<img id="totp-qr" class="qr" alt="QR code of the authenticator app setup link">
<p class="muted">Or enter this key by hand (time-based, 6 digits, every 30 seconds):</p>
<p><code id="totp-secret" class="secret"></code></p>
<form id="totp-confirm" method="post">
<label for="totp-code">The code your app shows now</label>
<input id="totp-code" name="code" autocomplete="one-time-code" inputmode="numeric" autocapitalize="none" spellcheck="false" maxlength="64" required>
<button type="submit">Confirm</button>
<button type="button" id="totp-cancel" class="secondary">Cancel</button>
</form>
</div>
<div id="totp-codes" hidden>
<p class="message done">The authenticator app is set up. From now on, signing in asks for a code.</p>
<p>Recovery codes: each works once instead of a code, if you lose the app. <strong>Save them now: they are not shown again.</strong></p>
<ol id="recovery-codes" class="codes"></ol>
<button type="button" id="codes-saved">I have saved them</button>
</div>
<div id="totp-on" hidden>
<p>On: signing in with your password asks for a code from your app (or a recovery code).</p>
<form id="totp-disable" method="post">
<label for="totp-disable-password">Your password, to turn it off</label>
<input id="totp-disable-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="danger">Turn off the authenticator app</button>
</form>
</div>
<p id="totp-message" class="message" role="alert" hidden></p>
</section>

<section id="passkeys-section">
<h2>Passkeys</h2>
<p id="passkeys-off" class="message note" hidden>Passkeys are turned off on this server: the ones below no longer sign in, and no new one can be added.</p>
<p id="passkeys-about" class="muted">Sign in with your device's screen lock or a security key, instead of a password and a code.</p>
<ul id="passkey-list" class="items"></ul>
<p id="no-passkeys" class="muted" hidden>No passkeys yet.</p>
<form id="passkey-add" method="post">
<label for="passkey-password">Your password, to add or remove a passkey</label>
<input id="passkey-password" name="password" type="password" autocomplete="current-password" required>
<label for="passkey-name">Name for a new passkey</label>
<input id="passkey-name" name="name" autocomplete="off" maxlength="64" placeholder="e.g. Phone, YubiKey" required>
<button type="submit">Add a passkey</button>
</form>
<p id="passkey-message" class="message" role="alert" hidden></p>
</section>

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

<section id="sessions-section">
<h2>Sessions</h2>
<p class="muted">Where this account is signed in. End any you do not recognise.</p>
<ul id="session-list" class="items"></ul>
<p id="sessions-message" class="message" role="alert" hidden></p>
<p>Or end every session of this account on every device, this one included:</p>
<button type="button" id="logout-everywhere" class="danger">Log out everywhere</button>
</section>
</div>
`;

const STYLE = `
.who{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;justify-content:space-between}
.who strong{overflow-wrap:anywhere}
.here{display:inline-block;margin-left:.5rem;padding:.05rem .5rem;border-radius:999px;background:#e6f4ea;color:#1e5b2f;font-size:.8rem;font-weight:400}
img.qr{display:block;width:12rem;height:12rem;margin:0 0 1rem;border:1px solid #e1e4ea;border-radius:4px;image-rendering:pixelated}
.secret{display:inline-block;padding:.3rem .5rem;border-radius:4px;background:#f0f2f5;letter-spacing:.05em;user-select:all}
ol.codes{columns:2;margin:0 0 1rem;padding:.75rem 1rem .75rem 2.25rem;border-radius:4px;background:#f0f2f5;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
ol.codes li{margin:0 0 .2rem;white-space:nowrap}
#account button:not(.small){width:auto;padding:.6rem 1.2rem}
#totp-cancel{margin-left:.5rem}
@media (max-width:30rem){ol.codes{columns:1}#account button:not(.small){width:100%}#totp-cancel{margin-left:0}}
@media (prefers-color-scheme:dark){.secret,ol.codes{background:#2a2f39}img.qr{border-color:#363c48}.here{background:#1d3b26;color:#d3f5dc}}
`;

const SCRIPT = `
var state = null;
// Sections added to this page (buildAccountPage's sections) fill themselves from each loaded account.
var onAccount = [];
var totpMessage = byId('totp-message');
var toSignIn = function () {
  location.replace('../login?rd=' + encodeURIComponent(location.href));
};
var when = function (value) {
  if (value === null || value === undefined || value === '') return 'never';
  var date = new Date(typeof value === 'number' && value < 1e11 ? value * 1000 : value);
  return isNaN(date.getTime()) ? String(value) : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};
var showTotp = function (shown) {
  ['totp-off', 'totp-pending', 'totp-codes', 'totp-on'].forEach(function (id) { byId(id).hidden = id !== shown; });
};
var showTotpState = function () {
  showTotp(state !== null && state.totp === true ? 'totp-on' : 'totp-off');
};
var clearSeed = function () {
  byId('totp-qr').removeAttribute('src');
  byId('totp-secret').textContent = '';
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
  document.querySelector('#password-form input[name=username]').value = account.username;
  // A set-up in progress or codes on screen stay until the person moves on.
  if (byId('totp-pending').hidden && byId('totp-codes').hidden) showTotpState();
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
  // Passkeys off on this server (buildAccountPage): none is offered; those the account still has are listed.
  if (!PASSKEYS_OFFERED) {
    ['passkey-add', 'passkeys-about', 'no-passkeys'].forEach(function (id) { byId(id).hidden = true; });
    byId('passkeys-off').hidden = false;
    byId('passkeys-section').hidden = passkeys.length === 0;
  }
  var tokens = Array.isArray(account.tokens) ? account.tokens : [];
  fill(byId('token-list'), tokens.map(function (token) {
    var name = String(token.name);
    var expires = token.expiresAt === null || token.expiresAt === undefined ? 'never expires' : 'expires ' + when(token.expiresAt);
    var details = 'Created ' + when(token.createdAt) + ' · ' + expires + ' · last used ' + when(token.lastUsedAt);
    return item(name, details, 'Revoke', 'Revoke token ' + name, function () {
      byId('new-token').hidden = true;
      var path = '../api/auth/account/tokens/' + encodeURIComponent(token.id);
      change(null, byId('token-message'), 'DELETE', path, undefined, 'Token revoked.');
    });
  }), byId('no-tokens'));
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
/** One change: the call, its message, then the account drawn again. Resolves with the answer. */
var change = function (form, message, method, path, body, doneText) {
  return send(form, message, method, path, body).then(function (answer) {
    if (answer.status === 401) return answer;
    if (!answer.ok) say(message, problemOf(answer));
    else if (doneText) say(message, doneText, 'done');
    if (answer.ok && form) form.reset();
    return reload().then(function () { return answer; });
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

onSubmit(byId('totp-start'), function (form) {
  var body = { password: form.elements.password.value };
  send(form, totpMessage, 'POST', '../api/auth/account/totp', body).then(function (answer) {
    if (answer.status === 401) return;
    var body = bodyOf(answer);
    if (body === null || typeof body.secret !== 'string' || typeof body.qr !== 'string') {
      say(totpMessage, problemOf(answer));
      return;
    }
    form.reset();
    // The QR code is an SVG made by the server. Shown as an image it runs no script and loads
    // nothing; the page's CSP allows data: images and nothing else.
    byId('totp-qr').src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(body.qr);
    byId('totp-secret').textContent = body.secret.replace(/(.{4})(?=.)/g, '$1 ');
    showTotp('totp-pending');
    byId('totp-code').focus();
  });
});
onSubmit(byId('totp-confirm'), function (form) {
  var body = { code: form.elements.code.value.trim() };
  send(form, totpMessage, 'POST', '../api/auth/account/totp/confirm', body).then(function (answer) {
    if (answer.status === 401) return;
    var body = bodyOf(answer);
    if (body === null || !Array.isArray(body.recoveryCodes)) {
      say(totpMessage, problemOf(answer));
      return;
    }
    form.reset();
    clearSeed();
    fill(byId('recovery-codes'), body.recoveryCodes.map(function (code) { return element('li', '', String(code)); }));
    showTotp('totp-codes');
    reload();
  });
});
byId('totp-cancel').addEventListener('click', function () {
  clearSeed();
  say(totpMessage, '');
  showTotpState();
});
byId('codes-saved').addEventListener('click', function () {
  fill(byId('recovery-codes'), []);
  showTotpState();
});
onSubmit(byId('totp-disable'), function (form) {
  var body = { password: form.elements.password.value };
  change(form, totpMessage, 'POST', '../api/auth/account/totp/disable', body, 'The authenticator app is off; its recovery codes are gone.');
});

if (!window.PublicKeyCredential || !navigator.credentials) {
  setBusy(byId('passkey-add'), true);
  say(byId('passkey-message'), 'This browser cannot make passkeys here (they need https, or localhost).', 'note');
}
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

onSubmit(byId('token-add'), function (form) {
  var body = { name: form.elements.name.value.trim(), password: form.elements.password.value };
  if (form.elements.days.value !== '') body.days = Number(form.elements.days.value);
  byId('new-token').hidden = true;
  change(form, byId('token-message'), 'POST', '../api/auth/account/tokens', body, '').then(function (answer) {
    var made = bodyOf(answer);
    if (made === null || typeof made.token !== 'string') return;
    byId('token-value').textContent = made.token;
    byId('new-token').hidden = false;
  });
});

onSecondClick(byId('logout-everywhere'), 'Click again: end every session, this one included', function () {
  callApi('POST', '../api/auth/account/logout-everywhere', {}).then(function (answer) {
    if (answer.status === 401 || answer.ok) return toSignIn();
    byId('logout-everywhere').disabled = false;
    say(byId('sessions-message'), problemOf(answer));
  });
});
byId('sign-out').addEventListener('click', function () {
  callApi('GET', '../api/auth/logout').then(function () {
    location.replace('../login');
  });
});
`;

/**
 * The account page, built once at start-up; data: images only, for the TOTP QR code. With
 * `isPasskeyOffered` false (passkeys off, webauthn/relying-party.ts) it offers none. `sections`
 * (OpenID Connect's name and e-mail) go before the sessions section, their scripts after the page's own.
 */
export function buildAccountPage(
  sha256Base64: Sha256Base64, options: { readonly isPasskeyOffered?: boolean; readonly sections?: readonly PageSection[] } = {},
): BuiltPage {
  const sections = options.sections ?? [];
  const place = BODY.indexOf('<section id="sessions-section">');
  if (place < 0) throw new TypeError('the account page has no place for its sections');
  const body = `${BODY.slice(0, place)}${sections.map((section) => section.body).join('')}${BODY.slice(place)}`;
  const sectionScripts = sections.map((section) => section.script).join('');
  const script = `var PASSKEYS_OFFERED = ${options.isPasskeyOffered !== false};\n${PAGE_HELPERS}${SCRIPT}${SESSIONS_SCRIPT}${sectionScripts}\nreload();\n`;
  const spec = { title: 'Your account', body, script, style: STYLE, isWide: true };
  return buildPage({ ...spec, allowDataImages: true }, sha256Base64);
}
