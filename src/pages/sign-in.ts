// The sign-in page's markup and browser code ({base}/login; routes/login-page.ts builds and serves
// it). Steps: password; then, when the account asks for it, a code (TOTP or a recovery code); or a
// passkey instead of both. After signing in, the page checks that the browser kept the session
// cookie before it leaves, and says why when it did not, instead of reloading into the same form.
import { escapeHtml } from './shell.js';

/**
 * The markup; `accountUrl` is where the account page is: --public-url's when set (the sign-in page
 * also serves apps' sites, where accounts do not answer), else `gatehouse/account` beside the page.
 */
export const signInBody = (accountUrl: string): string => `
<h1 id="title">Sign in</h1>
<p id="signed-out-note" class="message done" role="status" hidden>You are signed out.</p>
<p id="mfa-note" class="message note" hidden>The page you asked for needs two factors: your password and a code from your authenticator app<span data-passkey>, or a passkey</span>.</p>
<p id="again-note" class="message note" hidden>The app you came from asks you to sign in again.</p>
<p id="setup-note" class="message note" hidden>Your account has no second factor yet. Set up an authenticator app<span data-passkey> or a passkey</span> on <a href="${escapeHtml(accountUrl)}">your account page</a>, then come back.</p>
<p id="cookie-note" class="message" role="alert" hidden></p>
<form id="login" method="post">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username webauthn" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<p id="message" class="message" role="alert" hidden></p>
<button type="submit">Sign in</button>
</form>
<form id="code-step" method="post" hidden>
<p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
<label for="code">Code</label>
<input id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="64" required>
<p id="code-message" class="message" role="alert" hidden></p>
<button type="submit">Verify</button>
<button type="button" id="code-back" class="secondary">Back</button>
</form>
<div id="passkey-step" data-passkey hidden>
<p class="or">or</p>
<button type="button" id="passkey" class="secondary">Sign in with a passkey</button>
<p id="passkey-message" class="message" role="alert" hidden></p>
</div>
<div id="setup-step" hidden>
<p class="message note">You are signed in with your password, but the page you asked for needs a second factor and your account has none yet.</p>
<p>Set up an authenticator app<span data-passkey> or a passkey</span> on <a id="account-link" href="${escapeHtml(accountUrl)}">your account page</a>, then sign in again.</p>
</div>
`;

// Runs after PAGE_HELPERS, safeRedirectTarget, ALLOWED_HOSTS, COOKIE_IS_SECURE, COOKIE_DOMAIN,
// PASSKEYS_OFFERED and SITE_NAME (see routes/login-page.ts).
// Relative API paths, so the page works under any base URI; messages go in as text, never HTML.
export const SIGN_IN_SCRIPT = `
var form = byId('login');
var codeForm = byId('code-step');
var message = byId('message');
var codeMessage = byId('code-message');
var passkeyButton = byId('passkey');
var passkeyMessage = byId('passkey-message');
var cookieNote = byId('cookie-note');
var query = new URLSearchParams(location.search);
// The site this page signs in to, as text: --site-name, else the host in the address bar.
var siteName = SITE_NAME !== null ? SITE_NAME : location.host;
byId('title').textContent = 'Sign in to ' + siteName;
document.title = 'Sign in · ' + siteName;
var target = safeRedirectTarget(query.get('rd'), location.href, ALLOWED_HOSTS);
// The gate adds mfa= when the page behind it needs two factors and the session has one:
// mfa=code (the account has a second factor: sign in again with it) or mfa=setup (it has none).
// A one-factor session must not be sent back there: it would only come back here.
var mfa = query.get('mfa');
var needsTwoFactors = mfa !== null && mfa !== '0' && mfa !== 'false';
// An app signing in through Gatehouse (OpenID Connect) may ask for a new sign-in (prompt=login), or
// only whether someone is signed in (prompt=none: never a form, straight back to authorize either way).
var prompt = query.get('prompt');
var pending = null;

var showCodeStep = function (isShown) {
  form.hidden = isShown;
  byId('passkey-step').hidden = isShown || !PASSKEYS_OFFERED;
  codeForm.hidden = !isShown;
};
showCodeStep(false);
// Passkeys off on this server (routes/login-page.ts): nothing on the page mentions them.
if (!PASSKEYS_OFFERED) {
  var mentions = document.querySelectorAll('[data-passkey]');
  for (var i = 0; i < mentions.length; i += 1) mentions[i].hidden = true;
}
// {base}/logout sends the browser here once it has signed out: the page says so, above the form.
if (query.get('signed_out') === '1') byId('signed-out-note').hidden = false;
if (needsTwoFactors) byId('mfa-note').hidden = false;
if (prompt === 'login') byId('again-note').hidden = false;
if (mfa === 'setup') byId('setup-note').hidden = false;

// What the page knows about its cookie, each cause told apart: say it now, not after a sign-in
// that silently does nothing. RFC 6265 section 5.3 step 6: a browser keeps a cookie with Domain=D
// only on D and its sub-domains (section 5.1.3 domain-match: never on an IP address).
var host = location.hostname.toLowerCase();
var isIpAddress = /^[0-9.]+$/.test(host) || host.charAt(0) === '[';
var isHostCovered = COOKIE_DOMAIN === null || host === COOKIE_DOMAIN ||
  (!isIpAddress && host.slice(-COOKIE_DOMAIN.length - 1) === '.' + COOKIE_DOMAIN);
// A Secure cookie is dropped on a page that is not a secure context (plain http but to localhost).
var isSecureDropped = COOKIE_IS_SECURE && window.isSecureContext === false;
var cookieProblem = !isHostCovered
  ? 'This page is at ' + host + ', but the session cookie is set for ' + COOKIE_DOMAIN + ' (--cookie-domain), which does not cover ' + host + ': the browser will not keep it, so signing in cannot work here. Open this page on ' + COOKIE_DOMAIN + ' or a host under it, or change --cookie-domain.'
  : isSecureDropped
    ? 'This page was opened over http, but Gatehouse marks its session cookie Secure, so the browser will not keep it and signing in cannot work. Open this page over https (or run Gatehouse without --secure-cookie on a plain-http network).'
    : '';
if (cookieProblem !== '') say(cookieNote, cookieProblem);
// A passkey sign-in sets the same cookie; and WebAuthn exists only in a secure context.
var passkeyProblem = !window.PublicKeyCredential || !navigator.credentials
  ? 'This browser cannot use passkeys here (they need https, or localhost).'
  : cookieProblem !== '' ? 'A passkey cannot sign you in here either: see above.' : '';

/** Why the browser did not keep the cookie, as far as this page can tell. */
var whyCookieWasDropped = function () {
  if (cookieProblem !== '') return 'See above.';
  // Without --secure-cookie, the cookie is still Secure when a trusted proxy says the client came over https.
  if (window.isSecureContext === false) return 'This page was opened over http, and Gatehouse marks the cookie Secure when a proxy in front of it says the client came over https (X-Forwarded-Proto), which a browser does not keep on http. Open it over https, or have the proxy pass the scheme the browser used. Otherwise check that this browser accepts cookies from this site.';
  return 'Check that this browser accepts cookies from this site (its settings, an extension, or a private window may refuse them).';
};

/**
 * Called after an answer that set the session cookie. The probe says whether a jwt cookie came with
 * it (never its value), on an app's site too, where the account API does not answer: false means
 * the browser did not keep the cookie. Any other answer (no probe routed here) is no evidence.
 */
var signedIn = function (isPasswordOnly, messageElement, busyForm) {
  return callApi('GET', 'api/auth/probe').then(function (answer) {
    var body = bodyOf(answer);
    if (body !== null && body.jwtCookie === false) {
      say(messageElement, 'You were signed in, but the browser did not keep the session cookie, so you are still signed out. ' + whyCookieWasDropped());
      setBusy(busyForm, false);
      passkeyButton.disabled = passkeyProblem !== '';
      return;
    }
    if (!needsTwoFactors || !isPasswordOnly) return location.replace(target);
    ['login', 'code-step', 'passkey-step', 'mfa-note', 'again-note', 'setup-note', 'signed-out-note'].forEach(function (id) { byId(id).hidden = true; });
    byId('setup-step').hidden = false;
  });
};

// The session cookie is SameSite=Strict: a link from another site arrives without it, but this
// page is a same-site context, so a live session is found here and the user sent on at once
// (not when two factors were asked for: that session may be the one the gate just refused).
callApi('GET', 'api/auth/verify').then(function (answer) {
  if (prompt === 'none') return location.replace(target);
  var body = bodyOf(answer);
  if (body === null) return;
  if (typeof body.username === 'string' && !needsTwoFactors && prompt !== 'login') location.replace(target);
  else if (body.initialUser === true) say(message, 'No account exists yet.');
});

onSubmit(form, function () {
  say(message, '');
  var credentials = { username: form.elements.username.value, password: form.elements.password.value };
  setBusy(form, true);
  callApi('POST', 'api/auth/authenticate', credentials).then(function (answer) {
    if (answer.ok) return signedIn(true, message, form);
    setBusy(form, false);
    if (answer.status !== 401 || codeOf(answer) !== 'SECOND_FACTOR_REQUIRED') return say(message, problemOf(answer));
    pending = credentials;
    showCodeStep(true);
    codeForm.elements.code.value = '';
    codeForm.elements.code.focus();
  });
});

onSubmit(codeForm, function () {
  if (pending === null) return;
  say(codeMessage, '');
  setBusy(codeForm, true);
  var code = codeForm.elements.code.value.trim();
  callApi('POST', 'api/auth/authenticate', { username: pending.username, password: pending.password, code: code }).then(function (answer) {
    if (answer.ok) return signedIn(false, codeMessage, codeForm);
    say(codeMessage, problemOf(answer));
    setBusy(codeForm, false);
    codeForm.elements.code.select();
  });
});

byId('code-back').addEventListener('click', function () {
  pending = null;
  say(codeMessage, '');
  showCodeStep(false);
  form.elements.password.value = '';
  form.elements.password.focus();
});

if (passkeyProblem !== '') {
  passkeyButton.disabled = true;
  say(passkeyMessage, passkeyProblem, 'note');
}
passkeyButton.addEventListener('click', function () {
  say(passkeyMessage, '');
  say(message, '');
  passkeyButton.disabled = true;
  var username = form.elements.username.value;
  // With a username typed, the options list that account's passkeys; without, any passkey
  // for this site may answer (a discoverable credential names its own account).
  callApi('POST', 'api/auth/passkey/options', username !== '' ? { username: username } : {})
    .then(function (answer) {
      if (bodyOf(answer) === null) throw new Error(problemOf(answer));
      return navigator.credentials.get({ publicKey: publicKeyOf(answer.body) });
    })
    .then(function (credential) {
      if (credential === null) throw new Error('No passkey was chosen.');
      return callApi('POST', 'api/auth/passkey', { credential: credentialJsonOf(credential) });
    })
    .then(function (answer) {
      if (answer.ok) return signedIn(false, passkeyMessage, null);
      throw new Error(problemOf(answer));
    })
    .catch(function (error) {
      // NotAllowedError: the person cancelled, or no passkey for this site was found.
      var text = error && error.name === 'NotAllowedError'
        ? 'No passkey was used: the request was cancelled, timed out, or this device has no passkey for this site.'
        : error && error.message ? error.message : 'Signing in with a passkey failed.';
      say(passkeyMessage, text);
      passkeyButton.disabled = false;
    });
});
`;
