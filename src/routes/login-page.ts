import { buildPage, pageRoutes, scriptJson, type BuiltPage, type Sha256Base64 } from '../pages/shell.js';
import type { Route } from './context.js';
import { safeRedirectTarget } from './redirect-target.js';

export type LoginPage = BuiltPage;

export interface LoginPageOptions {
  /** Hosts `rd` may point at besides the page's own origin (config: --allowed-redirect-hosts). */
  readonly allowedRedirectHosts: readonly string[];
  /** SHA-256 of the UTF-8 text, base64 (the composition root owns node:crypto). */
  readonly sha256Base64: Sha256Base64;
}

// Browser code: relative API paths, so the page works under any base URI and behind a proxy
// that mounts it elsewhere. Messages go in as text, never as HTML.
const MAIN = `
var form = document.getElementById('login');
var message = document.getElementById('message');
var target = safeRedirectTarget(new URLSearchParams(location.search).get('rd'), location.href, ALLOWED_HOSTS);
var show = function (text) {
  message.textContent = text;
  message.hidden = text === '';
};
var setBusy = function (busy) {
  for (var i = 0; i < form.elements.length; i += 1) form.elements[i].disabled = busy;
};
var leave = function () {
  location.replace(target);
};
// The session cookie is SameSite=Strict: a link from another site arrives without it, but this
// page is a same-site context, so a live session is found here and the user sent on at once.
fetch('api/auth/verify', { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } })
  .then(function (res) { return res.ok ? res.json() : null; })
  .then(function (body) {
    if (body !== null && typeof body === 'object' && typeof body.username === 'string') leave();
    else if (body !== null && typeof body === 'object' && body.initialUser === true) show('No account exists yet.');
  })
  .catch(function () {});
form.addEventListener('submit', function (event) {
  event.preventDefault();
  show('');
  var body = JSON.stringify({ username: form.elements.username.value, password: form.elements.password.value });
  setBusy(true);
  fetch('api/auth/authenticate', {
    method: 'POST',
    credentials: 'same-origin',
    cache: 'no-store',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: body,
  })
    .then(function (res) {
      if (res.ok) {
        leave();
        return;
      }
      return res.json().then(
        function (answer) { return answer !== null && typeof answer === 'object' && typeof answer.message === 'string' ? answer.message : ''; },
        function () { return ''; },
      ).then(function (text) {
        show(text !== '' ? text : 'Sign-in failed (' + res.status + ').');
        setBusy(false);
      });
    })
    .catch(function () {
      show('The server could not be reached.');
      setBusy(false);
    });
});
`;

/**
 * The login page, built once at start-up by the page shell (pages/shell.ts): its script has
 * the allowed hosts baked in first, and is allowed by hash in a CSP that loads nothing else.
 */
export function buildLoginPage(options: LoginPageOptions): LoginPage {
  const script = `
var ALLOWED_HOSTS = ${scriptJson(options.allowedRedirectHosts)};
${safeRedirectTarget.toString()}
${MAIN}`;
  return buildPage(
    {
      title: 'Sign in',
      body: `
<h1>Sign in</h1>
<form id="login" method="post">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<p id="message" class="message" role="alert" hidden></p>
<button type="submit">Sign in</button>
</form>`,
      script,
    },
    options.sha256Base64,
  );
}

/** GET and HEAD {base}/login: the same prebuilt bytes for everyone; the query is the script's business. */
export function loginPageRoutes(page: LoginPage): Route[] {
  return pageRoutes('/login', page);
}
