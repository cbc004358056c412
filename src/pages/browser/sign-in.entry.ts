// The sign-in page's script ({base}/login; pages/sign-in.ts has its markup, routes/login-page.ts
// builds it). Steps: password; then, when the account asks for it, a code (TOTP or a recovery code);
// or a passkey instead of both. After signing in, the page checks that the browser kept the session
// cookie before it leaves, and says why when it did not, instead of reloading into the same form.
// Relative API paths, so the page works under any base URI; messages go in as text, never HTML.
import { safeRedirectTarget } from './redirect-target.js';
import { bodyOf, byId, callApi, codeOf, fieldOf, onSubmit, pageData, problemOf, say, setBusy } from './helpers.js';
import { credentialJsonOf, errorMessage, errorName, hasWebAuthn, publicKeyOf } from './passkey-json.js';

// This server's settings (routes/login-page.ts), as data: the script is the same on every server.
const data = pageData();
const allowedHosts = Array.isArray(data['allowedHosts']) ? data['allowedHosts'].filter((host): host is string => typeof host === 'string') : [];
const cookieIsSecure = data['cookieIsSecure'] === true;
const cookieDomain = typeof data['cookieDomain'] === 'string' ? data['cookieDomain'] : null;
const passkeysOffered = data['passkeysOffered'] !== false;
const configuredSiteName = typeof data['siteName'] === 'string' ? data['siteName'] : null;

const form = byId('login', HTMLFormElement);
const codeForm = byId('code-step', HTMLFormElement);
const message = byId('message');
const codeMessage = byId('code-message');
const passkeyButton = byId('passkey', HTMLButtonElement);
const passkeyMessage = byId('passkey-message');
const cookieNote = byId('cookie-note');
const username = fieldOf(form, 'username');
const password = fieldOf(form, 'password');
const code = fieldOf(codeForm, 'code');
const query = new URLSearchParams(location.search);
// The site this page signs in to, as text: --site-name, else the host in the address bar.
const siteName = configuredSiteName ?? location.host;
byId('title').textContent = `Sign in to ${siteName}`;
document.title = `Sign in · ${siteName}`;
const target = safeRedirectTarget(query.get('rd'), location.href, allowedHosts);
// The gate adds mfa= when the page behind it needs two factors and the session has one:
// mfa=code (the account has a second factor: sign in again with it) or mfa=setup (it has none).
// A one-factor session must not be sent back there: it would only come back here.
const mfa = query.get('mfa');
const needsTwoFactors = mfa !== null && mfa !== '0' && mfa !== 'false';
// An app signing in through Gatehouse (OpenID Connect) may ask for a new sign-in (prompt=login), or
// only whether someone is signed in (prompt=none: never a form, straight back to authorize either way).
const prompt = query.get('prompt');
let pending: { readonly username: string; readonly password: string } | null = null;

const showCodeStep = (isShown: boolean): void => {
  form.hidden = isShown;
  byId('passkey-step').hidden = isShown || !passkeysOffered;
  codeForm.hidden = !isShown;
};
showCodeStep(false);
// Passkeys off on this server (routes/login-page.ts): nothing on the page mentions them.
if (!passkeysOffered) {
  document.querySelectorAll<HTMLElement>('[data-passkey]').forEach((mention) => {
    mention.hidden = true;
  });
}
// {base}/logout sends the browser here once it has signed out: the page says so, above the form.
if (query.get('signed_out') === '1') byId('signed-out-note').hidden = false;
if (needsTwoFactors) byId('mfa-note').hidden = false;
if (prompt === 'login') byId('again-note').hidden = false;
if (mfa === 'setup') byId('setup-note').hidden = false;

// What the page knows about its cookie, each cause told apart: say it now, not after a sign-in
// that silently does nothing. RFC 6265 section 5.3 step 6: a browser keeps a cookie with Domain=D
// only on D and its sub-domains (section 5.1.3 domain-match: never on an IP address).
const host = location.hostname.toLowerCase();
const isIpAddress = /^[0-9.]+$/.test(host) || host.charAt(0) === '[';
const isHostCovered = cookieDomain === null || host === cookieDomain ||
  (!isIpAddress && host.slice(-cookieDomain.length - 1) === `.${cookieDomain}`);
// A Secure cookie is dropped on a page that is not a secure context (plain http but to localhost).
const isSecureDropped = cookieIsSecure && window.isSecureContext === false;
const cookieProblem = !isHostCovered
  ? `This page is at ${host}, but the session cookie is set for ${String(cookieDomain)} (--cookie-domain), which does not cover ${host}: the browser will not keep it, so signing in cannot work here. Open this page on ${String(cookieDomain)} or a host under it, or change --cookie-domain.`
  : isSecureDropped
    ? 'This page was opened over http, but Gatehouse marks its session cookie Secure, so the browser will not keep it and signing in cannot work. Open this page over https (or run Gatehouse without --secure-cookie on a plain-http network).'
    : '';
if (cookieProblem !== '') say(cookieNote, cookieProblem);
// A passkey sign-in sets the same cookie; and WebAuthn exists only in a secure context.
const passkeyProblem = !hasWebAuthn()
  ? 'This browser cannot use passkeys here (they need https, or localhost).'
  : cookieProblem !== '' ? 'A passkey cannot sign you in here either: see above.' : '';

/** Why the browser did not keep the cookie, as far as this page can tell. */
const whyCookieWasDropped = (): string => {
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
const signedIn = (isPasswordOnly: boolean, messageElement: HTMLElement, busyForm: HTMLFormElement | null): Promise<void> =>
  callApi('GET', 'api/auth/probe').then((answer) => {
    const body = bodyOf(answer);
    if (body !== null && body['jwtCookie'] === false) {
      say(messageElement, `You were signed in, but the browser did not keep the session cookie, so you are still signed out. ${whyCookieWasDropped()}`);
      setBusy(busyForm, false);
      passkeyButton.disabled = passkeyProblem !== '';
      return;
    }
    if (!needsTwoFactors || !isPasswordOnly) {
      location.replace(target);
      return;
    }
    for (const id of ['login', 'code-step', 'passkey-step', 'mfa-note', 'again-note', 'setup-note', 'signed-out-note']) byId(id).hidden = true;
    byId('setup-step').hidden = false;
  });

// The session cookie is SameSite=Strict: a link from another site arrives without it, but this
// page is a same-site context, so a live session is found here and the user sent on at once
// (not when two factors were asked for: that session may be the one the gate just refused).
void callApi('GET', 'api/auth/verify').then((answer) => {
  if (prompt === 'none') {
    location.replace(target);
    return;
  }
  const body = bodyOf(answer);
  if (body === null) return;
  if (typeof body['username'] === 'string' && !needsTwoFactors && prompt !== 'login') location.replace(target);
  else if (body['initialUser'] === true) say(message, 'No account exists yet.');
});

onSubmit(form, () => {
  say(message, '');
  const credentials = { username: username.value, password: password.value };
  setBusy(form, true);
  void callApi('POST', 'api/auth/authenticate', credentials).then((answer) => {
    if (answer.ok) return signedIn(true, message, form);
    setBusy(form, false);
    if (answer.status !== 401 || codeOf(answer) !== 'SECOND_FACTOR_REQUIRED') return say(message, problemOf(answer));
    pending = credentials;
    showCodeStep(true);
    code.value = '';
    code.focus();
    return undefined;
  });
});

onSubmit(codeForm, () => {
  if (pending === null) return;
  say(codeMessage, '');
  setBusy(codeForm, true);
  const body = { username: pending.username, password: pending.password, code: code.value.trim() };
  void callApi('POST', 'api/auth/authenticate', body).then((answer) => {
    if (answer.ok) return signedIn(false, codeMessage, codeForm);
    say(codeMessage, problemOf(answer));
    setBusy(codeForm, false);
    if (code instanceof HTMLInputElement) code.select();
    return undefined;
  });
});

byId('code-back').addEventListener('click', () => {
  pending = null;
  say(codeMessage, '');
  showCodeStep(false);
  password.value = '';
  password.focus();
});

if (passkeyProblem !== '') {
  passkeyButton.disabled = true;
  say(passkeyMessage, passkeyProblem, 'note');
}
passkeyButton.addEventListener('click', () => {
  say(passkeyMessage, '');
  say(message, '');
  passkeyButton.disabled = true;
  const name = username.value;
  // With a username typed, the options list that account's passkeys; without, any passkey
  // for this site may answer (a discoverable credential names its own account).
  callApi('POST', 'api/auth/passkey/options', name !== '' ? { username: name } : {})
    .then((answer) => {
      const options = bodyOf(answer);
      if (options === null) throw new Error(problemOf(answer));
      return navigator.credentials.get({ publicKey: publicKeyOf(options) });
    })
    .then((credential) => {
      if (!(credential instanceof PublicKeyCredential)) throw new Error('No passkey was chosen.');
      return callApi('POST', 'api/auth/passkey', { credential: credentialJsonOf(credential) });
    })
    .then((answer) => {
      if (answer.ok) return signedIn(false, passkeyMessage, null);
      throw new Error(problemOf(answer));
    })
    .catch((error: unknown) => {
      // NotAllowedError: the person cancelled, or no passkey for this site was found.
      const text = errorName(error) === 'NotAllowedError'
        ? 'No passkey was used: the request was cancelled, timed out, or this device has no passkey for this site.'
        : errorMessage(error) !== '' ? errorMessage(error) : 'Signing in with a passkey failed.';
      say(passkeyMessage, text);
      passkeyButton.disabled = false;
    });
});
