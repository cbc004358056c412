import type { OutgoingHttpHeaders } from 'node:http';
import { sendStatic } from '../http/respond.js';
import type { Route } from './context.js';
import { safeRedirectTarget } from './redirect-target.js';

export interface LoginPage {
  readonly body: Buffer;
  readonly headers: Readonly<OutgoingHttpHeaders>;
}

export interface LoginPageOptions {
  /** Hosts `rd` may point at besides the page's own origin (config: --allowed-redirect-hosts). */
  readonly allowedRedirectHosts: readonly string[];
  /** SHA-256 of the UTF-8 text, base64 (the composition root owns node:crypto). */
  readonly sha256Base64: (text: string) => string;
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;color:#1d2330;font:16px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:22rem;margin:1rem;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{margin:0 0 1.5rem;font-size:1.4rem;font-weight:600}
label{display:block;margin:0 0 .3rem;font-size:.9rem}
input{display:block;width:100%;margin:0 0 1rem;padding:.55rem .65rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit}
input:focus{outline:2px solid #3465d9;outline-offset:1px}
button{width:100%;padding:.6rem;border:0;border-radius:4px;background:#3465d9;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button:disabled{opacity:.6;cursor:wait}
#message{margin:0 0 1rem;padding:.5rem .65rem;border-radius:4px;background:#fdecec;color:#9b1c1c}
#message[hidden]{display:none}
@media (prefers-color-scheme:dark){body{background:#15181e;color:#e6e8ec}main{background:#1f232b}input{background:#15181e;color:inherit;border-color:#475063}#message{background:#4a1d1d;color:#ffd6d6}}
`;

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

/** JSON that can sit inside a <script> element: nothing in it can close the element or end a line. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The login page, built once at start-up: one inline style and one inline script (the
 * allowed hosts baked in first), allowed by hash in a Content-Security-Policy that loads nothing else.
 */
export function buildLoginPage(options: LoginPageOptions): LoginPage {
  const script = `
'use strict';
(function () {
var ALLOWED_HOSTS = ${scriptJson(options.allowedRedirectHosts)};
${safeRedirectTarget.toString()}
${MAIN}})();
`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign in</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Sign in</h1>
<form id="login" method="post">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<p id="message" role="alert" hidden></p>
<button type="submit">Sign in</button>
</form>
</main>
<script>${script}</script>
</body>
</html>
`;
  const body = Buffer.from(html, 'utf8');
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${options.sha256Base64(script)}'`,
    `style-src 'sha256-${options.sha256Base64(STYLE)}'`,
    "connect-src 'self'",
    "img-src 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return {
    body,
    headers: Object.freeze({
      'content-type': 'text/html; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'content-security-policy': csp,
    }),
  };
}

/** GET and HEAD {base}/login: the same prebuilt bytes for everyone; the query is the script's business. */
export function loginPageRoutes(page: LoginPage): Route[] {
  const handler: Route['handler'] = (ctx) => sendStatic(ctx.res, 200, page.body, page.headers);
  return [
    { method: 'GET', path: '/login', handler },
    { method: 'HEAD', path: '/login', handler },
  ];
}
