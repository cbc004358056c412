// The signed-in user's page, {base}/gatehouse/account: password, TOTP, passkeys, machine tokens,
// log out everywhere. Static, built once; everything it shows comes from GET
// ../api/auth/account and every change is a JSON call (INTERFACE.md "The caller's own account").
import type { Route } from '../routes/context.js';
import { buildPage, PAGE_HELPERS, pageRoutes, type BuiltPage, type Sha256Base64 } from './shell.js';

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
<p class="muted">Sign in with your device's screen lock or a security key, instead of a password and a code.</p>
<ul id="passkey-list" class="items"></ul>
<p id="no-passkeys" class="muted" hidden>No passkeys yet.</p>
<form id="passkey-add" method="post">
<label for="passkey-name">Name for a new passkey</label>
<input id="passkey-name" name="name" autocomplete="off" maxlength="64" placeholder="e.g. Phone, YubiKey" required>
<button type="submit">Add a passkey</button>
</form>
<p id="passkey-message" class="message" role="alert" hidden></p>
</section>

<section id="tokens-section">
<h2>Machine tokens</h2>
<p class="muted">For scripts and apps that cannot sign in: sent as <code>Authorization: Bearer gh_…</code>, accepted only where the gate allows tokens.</p>
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
<button type="submit">Create a token</button>
</form>
<p id="token-message" class="message" role="alert" hidden></p>
</section>

<section id="sessions-section">
<h2>Sessions</h2>
<p>Ends every session of this account on every device, this one included.</p>
<button type="button" id="logout-everywhere" class="danger">Log out everywhere</button>
<p id="sessions-message" class="message" role="alert" hidden></p>
</section>
</div>
`;

const STYLE = `
.who{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;justify-content:space-between}
.who strong{overflow-wrap:anywhere}
img.qr{display:block;width:12rem;height:12rem;margin:0 0 1rem;border:1px solid #e1e4ea;border-radius:4px;image-rendering:pixelated}
.secret{display:inline-block;padding:.3rem .5rem;border-radius:4px;background:#f0f2f5;letter-spacing:.05em;user-select:all}
ol.codes{columns:2;margin:0 0 1rem;padding:.75rem 1rem .75rem 2.25rem;border-radius:4px;background:#f0f2f5;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
ol.codes li{margin:0 0 .2rem;white-space:nowrap}
#totp-confirm button,#totp-start button,#totp-disable button,#passkey-add button,#token-add button,#password-form button,#codes-saved,#logout-everywhere{width:auto;padding:.6rem 1.2rem}
#totp-cancel{margin-left:.5rem}
@media (max-width:30rem){ol.codes{columns:1}#totp-confirm button,#totp-start button,#totp-disable button,#passkey-add button,#token-add button,#password-form button,#codes-saved,#logout-everywhere{width:100%}#totp-cancel{margin-left:0}}
@media (prefers-color-scheme:dark){.secret,ol.codes{background:#2a2f39}img.qr{border-color:#363c48}}
`;

const SCRIPT = `
var state = null;
var here = location.href;
var toSignIn = function () {
  location.replace('../login?rd=' + encodeURIComponent(here));
};
var when = function (value) {
  if (value === null || value === undefined || value === '') return 'never';
  var date = new Date(typeof value === 'number' && value < 1e11 ? value * 1000 : value);
  return isNaN(date.getTime()) ? String(value) : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};
var showOnly = function (shown) {
  ['totp-off', 'totp-pending', 'totp-codes', 'totp-on'].forEach(function (id) { byId(id).hidden = id !== shown; });
};
var item = function (title, details, verb, onRemove, removeLabel) {
  var li = document.createElement('li');
  var text = document.createElement('div');
  text.className = 'grow';
  var name = document.createElement('strong');
  name.textContent = title;
  var info = document.createElement('div');
  info.className = 'muted';
  info.textContent = details;
  text.appendChild(name);
  text.appendChild(info);
  var button = document.createElement('button');
  button.type = 'button';
  button.className = 'secondary small';
  button.textContent = verb;
  button.setAttribute('aria-label', removeLabel);
  // A second click confirms (no dialog: a removal is one deliberate step more, not a pop-up).
  button.addEventListener('click', function () {
    if (button.dataset.armed !== '1') {
      button.dataset.armed = '1';
      button.textContent = 'Click again to ' + verb.toLowerCase();
      button.className = 'danger small';
      return;
    }
    button.disabled = true;
    onRemove();
  });
  li.appendChild(text);
  li.appendChild(button);
  return li;
};
var fill = function (element, entries) {
  while (element.firstChild) element.removeChild(element.firstChild);
  entries.forEach(function (entry) { element.appendChild(entry); });
};
var list = function (element, empty, entries) {
  fill(element, entries);
  empty.hidden = entries.length > 0;
};

/** Draws the account from GET ../api/auth/account; a caller without a session goes to sign in. */
var render = function (account) {
  state = account;
  byId('who').textContent = account.username;
  document.querySelector('#password-form input[name=username]').value = account.username;
  // A set-up in progress or codes on screen stay until the person moves on.
  if (byId('totp-pending').hidden && byId('totp-codes').hidden) showOnly(account.totp === true ? 'totp-on' : 'totp-off');
  var passkeys = Array.isArray(account.passkeys) ? account.passkeys : [];
  list(byId('passkey-list'), byId('no-passkeys'), passkeys.map(function (passkey) {
    return item(String(passkey.name), 'Added ' + when(passkey.createdAt) + ' · last used ' + when(passkey.lastUsedAt), 'Remove', function () {
      change('DELETE', '../api/auth/account/passkeys/' + encodeURIComponent(passkey.id), undefined, byId('passkey-message'), 'Passkey removed.');
    }, 'Remove passkey ' + String(passkey.name));
  }));
  var tokens = Array.isArray(account.tokens) ? account.tokens : [];
  list(byId('token-list'), byId('no-tokens'), tokens.map(function (token) {
    var expires = token.expiresAt === null || token.expiresAt === undefined ? 'never expires' : 'expires ' + when(token.expiresAt);
    return item(String(token.name), 'Created ' + when(token.createdAt) + ' · ' + expires + ' · last used ' + when(token.lastUsedAt), 'Revoke', function () {
      byId('new-token').hidden = true;
      change('DELETE', '../api/auth/account/tokens/' + encodeURIComponent(token.id), undefined, byId('token-message'), 'Token revoked.');
    }, 'Revoke token ' + String(token.name));
  }));
  byId('loading').hidden = true;
  byId('account').hidden = false;
};
var reload = function () {
  return callApi('GET', '../api/auth/account').then(function (answer) {
    if (answer.status === 401) return toSignIn();
    if (!answer.ok || answer.body === null || typeof answer.body !== 'object') {
      byId('loading').hidden = true;
      say(byId('status'), problemOf(answer));
      return;
    }
    render(answer.body);
  });
};
/** One change: the call, its message, then the account drawn again. Resolves with the answer. */
var change = function (method, path, body, messageElement, doneText, form) {
  say(messageElement, '');
  if (form) setBusy(form, true);
  return callApi(method, path, body).then(function (answer) {
    if (form) setBusy(form, false);
    if (answer.status === 401) {
      toSignIn();
      return answer;
    }
    if (answer.ok) {
      if (doneText) say(messageElement, doneText, 'done');
      if (form) form.reset();
    } else {
      say(messageElement, problemOf(answer));
    }
    return reload().then(function () { return answer; });
  });
};

byId('password-form').addEventListener('submit', function (event) {
  event.preventDefault();
  var form = event.target;
  if (form.elements.newPassword.value !== form.elements.repeat.value) {
    say(byId('password-message'), 'The new password and its repetition differ.');
    return;
  }
  change('POST', '../api/auth/account/password', { password: form.elements.password.value, newPassword: form.elements.newPassword.value }, byId('password-message'), 'Password changed. Every other session of this account has ended.', form);
});

byId('totp-start').addEventListener('submit', function (event) {
  event.preventDefault();
  var form = event.target;
  say(byId('totp-message'), '');
  setBusy(form, true);
  callApi('POST', '../api/auth/account/totp', { password: form.elements.password.value }).then(function (answer) {
    setBusy(form, false);
    if (answer.status === 401) return toSignIn();
    var body = answer.body;
    if (!answer.ok || body === null || typeof body !== 'object' || typeof body.secret !== 'string' || typeof body.qr !== 'string') {
      say(byId('totp-message'), problemOf(answer));
      return;
    }
    form.reset();
    // The QR code is an SVG made by the server. Shown as an image it runs no script and loads
    // nothing; the page's CSP allows data: images and nothing else.
    byId('totp-qr').src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(body.qr);
    byId('totp-secret').textContent = body.secret.replace(/(.{4})(?=.)/g, '$1 ');
    showOnly('totp-pending');
    byId('totp-code').focus();
  });
});
byId('totp-confirm').addEventListener('submit', function (event) {
  event.preventDefault();
  var form = event.target;
  say(byId('totp-message'), '');
  setBusy(form, true);
  callApi('POST', '../api/auth/account/totp/confirm', { code: form.elements.code.value.trim() }).then(function (answer) {
    setBusy(form, false);
    if (answer.status === 401) return toSignIn();
    var body = answer.body;
    if (!answer.ok || body === null || typeof body !== 'object' || !Array.isArray(body.recoveryCodes)) {
      say(byId('totp-message'), problemOf(answer));
      return;
    }
    form.reset();
    byId('totp-qr').removeAttribute('src');
    byId('totp-secret').textContent = '';
    fill(byId('recovery-codes'), body.recoveryCodes.map(function (code) {
      var li = document.createElement('li');
      li.textContent = String(code);
      return li;
    }));
    showOnly('totp-codes');
    reload();
  });
});
byId('totp-cancel').addEventListener('click', function () {
  byId('totp-qr').removeAttribute('src');
  byId('totp-secret').textContent = '';
  say(byId('totp-message'), '');
  showOnly(state !== null && state.totp === true ? 'totp-on' : 'totp-off');
});
byId('codes-saved').addEventListener('click', function () {
  fill(byId('recovery-codes'), []);
  showOnly(state !== null && state.totp === true ? 'totp-on' : 'totp-off');
});
byId('totp-disable').addEventListener('submit', function (event) {
  event.preventDefault();
  var form = event.target;
  change('POST', '../api/auth/account/totp/disable', { password: form.elements.password.value }, byId('totp-message'), 'The authenticator app is off; its recovery codes are gone.', form);
});

/** PublicKeyCredentialCreationOptionsJSON (WebAuthn L3) to what navigator.credentials.create takes. */
var creationOptionsOf = function (json) {
  var options = {};
  Object.keys(json).forEach(function (key) { options[key] = json[key]; });
  options.challenge = fromBase64url(json.challenge);
  options.user = { id: fromBase64url(json.user.id), name: json.user.name, displayName: json.user.displayName };
  options.excludeCredentials = (Array.isArray(json.excludeCredentials) ? json.excludeCredentials : []).map(function (item) {
    var descriptor = { type: 'public-key', id: fromBase64url(item.id) };
    if (Array.isArray(item.transports)) descriptor.transports = item.transports;
    return descriptor;
  });
  return options;
};
/** A PublicKeyCredential from navigator.credentials.create as RegistrationResponseJSON. */
var registrationJsonOf = function (credential) {
  var response = credential.response;
  var json = {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      attestationObject: toBase64url(response.attestationObject),
      transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
    },
    authenticatorAttachment: credential.authenticatorAttachment || null,
    clientExtensionResults: {},
  };
  if (typeof response.getPublicKeyAlgorithm === 'function') json.response.publicKeyAlgorithm = response.getPublicKeyAlgorithm();
  if (typeof response.getAuthenticatorData === 'function') json.response.authenticatorData = toBase64url(response.getAuthenticatorData());
  if (typeof response.getPublicKey === 'function' && response.getPublicKey() !== null) json.response.publicKey = toBase64url(response.getPublicKey());
  return json;
};
if (!window.PublicKeyCredential || !navigator.credentials) {
  setBusy(byId('passkey-add'), true);
  say(byId('passkey-message'), 'This browser cannot make passkeys here (they need https, or localhost).', 'note');
}
byId('passkey-add').addEventListener('submit', function (event) {
  event.preventDefault();
  var form = event.target;
  var name = form.elements.name.value.trim();
  var message = byId('passkey-message');
  say(message, '');
  setBusy(form, true);
  callApi('POST', '../api/auth/account/passkeys/options', {})
    .then(function (answer) {
      if (answer.status === 401) {
        toSignIn();
        return null;
      }
      if (!answer.ok || answer.body === null || typeof answer.body !== 'object') throw new Error(problemOf(answer));
      return navigator.credentials.create({ publicKey: creationOptionsOf(answer.body) }).then(function (credential) {
        if (credential === null) throw new Error('No passkey was made.');
        return change('POST', '../api/auth/account/passkeys', { name: name, credential: registrationJsonOf(credential) }, message, 'Passkey added.', form);
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

byId('token-add').addEventListener('submit', function (event) {
  event.preventDefault();
  var form = event.target;
  var body = { name: form.elements.name.value.trim() };
  if (form.elements.days.value !== '') body.days = Number(form.elements.days.value);
  byId('new-token').hidden = true;
  change('POST', '../api/auth/account/tokens', body, byId('token-message'), '', form).then(function (answer) {
    if (answer.ok && answer.body !== null && typeof answer.body === 'object' && typeof answer.body.token === 'string') {
      byId('token-value').textContent = answer.body.token;
      byId('new-token').hidden = false;
    }
  });
});

byId('logout-everywhere').addEventListener('click', function () {
  var button = byId('logout-everywhere');
  if (button.dataset.armed !== '1') {
    button.dataset.armed = '1';
    button.textContent = 'Click again: end every session, this one included';
    return;
  }
  button.disabled = true;
  callApi('POST', '../api/auth/account/logout-everywhere', {}).then(function (answer) {
    if (answer.ok || answer.status === 401) return toSignIn();
    button.disabled = false;
    say(byId('sessions-message'), problemOf(answer));
  });
});
byId('sign-out').addEventListener('click', function () {
  callApi('GET', '../api/auth/logout').then(function () {
    location.replace('../login');
  });
});

reload();
`;

/** The account page, built once at start-up; data: images only, for the TOTP QR code. */
export function buildAccountPage(sha256Base64: Sha256Base64): BuiltPage {
  return buildPage({ title: 'Your account', body: BODY, script: `${PAGE_HELPERS}${SCRIPT}`, style: STYLE, isWide: true, allowDataImages: true }, sha256Base64);
}

/** GET and HEAD {base}/gatehouse/account. */
export function accountPageRoutes(page: BuiltPage): Route[] {
  return pageRoutes('/gatehouse/account', page);
}
