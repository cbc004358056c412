// Every Gatehouse page is built here, once at start-up: one HTML skeleton, one look, and one
// Content-Security-Policy that allows the page's own scripts and style by hash and loads nothing else.
// A page's scripts are bundled and hashed at build time (pages/built-scripts.d.ts), so they are the
// same on every server: what one server says to them (its settings) goes in the page as JSON data.
// One look: a card with a heading; a message (a problem, a note, or done) under it; forms whose
// submit is the blue button; and on a page that only tells a result, its next step as the same
// button (a.button; a.button.secondary for another way), never a bare link.
import type { OutgoingHttpHeaders } from 'node:http';
import { ACCESS } from '../auth/access.js';
import { sendStatic } from '../http/respond.js';
import type { Route } from '../routes/context.js';
import type { BuiltScript } from './built-scripts.js';

/** SHA-256 of the UTF-8 text, base64 (the composition root owns node:crypto). */
export type Sha256Base64 = (text: string) => string;

interface PageSpec {
  /** The document title: plain text, escaped here. */
  readonly title: string;
  /** The HTML inside <main>: written in this repository, never built from a request. */
  readonly body: string;
  /** The page's built scripts (pages/built-scripts.d.ts), run in this order at the end of <body>; none: the CSP allows none. */
  readonly scripts?: readonly BuiltScript[];
  /**
   * This server's values for the scripts, as JSON in <script type="application/json" id="page-data">
   * (data, never run: the CSP does not name it); written in this repository or from settings, never
   * from a request.
   */
  readonly data?: unknown;
  /** CSS added after the shared style (the same <style> element, so one hash). */
  readonly style?: string;
  readonly isWide?: boolean;
  /** img-src data: for an image the script makes from an answer (an SVG as an image runs no script). */
  readonly allowDataImages?: boolean;
}

/** A section a page takes from an optional unit (OpenID Connect, invitations): its HTML, script and style. */
export interface PageSection {
  /** HTML placed among the page's sections; written in this repository, never built from a request. */
  readonly body: string;
  /** Its built script, placed before the page's, which hands it the page (pages/browser/account-page.ts). */
  readonly built?: BuiltScript;
  /** CSS added after the page's own. */
  readonly style?: string;
  /**
   * Where it goes on the account page: 'first' before the page's own sections, 'last' after every
   * other; unset, between. Sections of one place keep the order of the features (src/features.ts).
   */
  readonly place?: 'first' | 'last';
}

export interface BuiltPage {
  readonly body: Buffer;
  readonly headers: Readonly<OutgoingHttpHeaders>;
}

const STYLE = `
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;color:#1d2330;font:16px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:22rem;margin:1rem;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.12)}
main.wide{max-width:42rem}
h1{margin:0 0 1.5rem;font-size:1.4rem;font-weight:600}
h2{margin:0 0 .75rem;font-size:1.1rem;font-weight:600}
section{margin:0;padding:1.25rem 0 .25rem;border-top:1px solid #e1e4ea}
p{margin:0 0 1rem}
a{color:#3465d9}
label{display:block;margin:0 0 .3rem;font-size:.9rem}
input{display:block;width:100%;margin:0 0 1rem;padding:.55rem .65rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit}
input:focus,button:focus-visible{outline:2px solid #3465d9;outline-offset:1px}
button{width:100%;margin:0 0 1rem;padding:.6rem;border:1px solid #3465d9;border-radius:4px;background:#3465d9;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button.secondary{background:transparent;color:#3465d9}
button.danger{background:#b42318;border-color:#b42318}
button.small{width:auto;margin:0;padding:.3rem .7rem;font-size:.9rem}
button:disabled{opacity:.6;cursor:wait}
a.button{display:block;padding:.6rem;border:1px solid #3465d9;border-radius:4px;background:#3465d9;color:#fff;font-weight:600;text-align:center;text-decoration:none}
a.button.secondary{background:transparent;color:#3465d9}
a.button:focus-visible{outline:2px solid #3465d9;outline-offset:1px}
a.button.small{display:inline-block;padding:.3rem .7rem;font-size:.9rem}
main.wide button:not(.small),main.wide a.button:not(.small){display:inline-block;width:auto;padding:.6rem 1.2rem}
.who{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem .75rem;justify-content:space-between}
.message{margin:0 0 1rem;padding:.5rem .65rem;border-radius:4px;background:#fdecec;color:#9b1c1c;overflow-wrap:anywhere}
.message.note{background:#e8effc;color:#1d3f8a}
.message.done{background:#e6f4ea;color:#1e5b2f}
.muted{color:#5b6475;font-size:.9rem}
.or{margin:0 0 1rem;text-align:center;color:#5b6475;font-size:.9rem}
code,.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;overflow-wrap:anywhere}
ul.items{list-style:none;margin:0 0 1rem;padding:0}
ul.items li{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem;padding:.5rem 0;border-bottom:1px solid #e1e4ea}
ul.items li .grow{flex:1 1 12rem;min-width:0;overflow-wrap:anywhere}
@media (max-width:30rem){body{display:block}main,main.wide{max-width:none;margin:0;padding:1.25rem;border-radius:0;box-shadow:none;min-height:100vh}main.wide button:not(.small),main.wide a.button:not(.small){display:block;width:100%}}
@media (prefers-color-scheme:dark){body{background:#15181e;color:#e6e8ec}main{background:#1f232b}a{color:#8fb0ff}input{background:#15181e;color:inherit;border-color:#475063}section,ul.items li{border-color:#363c48}button.secondary,a.button.secondary{color:#8fb0ff;border-color:#8fb0ff}.muted,.or{color:#a3abba}.message{background:#4a1d1d;color:#ffd6d6}.message.note{background:#1d2b4a;color:#d6e2ff}.message.done{background:#1d3b26;color:#d3f5dc}}
`;

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};

/** Text that can sit in HTML element content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/** JSON that can sit inside a <script> element: nothing in it can close the element or end a line. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A field for a new password; `label` is HTML written in this repository. */
interface NewPasswordField {
  readonly id: string;
  readonly name: string;
  readonly label: string;
}

/**
 * The fields of a new password and its repetition: the shortest length said in the first label
 * before anything is typed, and kept as minlength on both, so the browser says it before a round
 * trip (the server decides: config.ts PasswordMinimums).
 */
export function newPasswordFields(first: NewPasswordField, repeat: NewPasswordField, minLength: number): string {
  const input = (field: NewPasswordField): string =>
    `<input id="${field.id}" name="${field.name}" type="password" autocomplete="new-password" required minlength="${minLength}" maxlength="1024">`;
  return `<label for="${first.id}">${first.label} <span class="muted">(at least ${minLength} characters)</span></label>
${input(first)}
<label for="${repeat.id}">${repeat.label}</label>
${input(repeat)}`;
}

/** Builds a page once: the HTML, and frozen headers with its CSP. */
export function buildPage(spec: PageSpec, sha256Base64: Sha256Base64): BuiltPage {
  const style = `${STYLE}${spec.style ?? ''}`;
  const scripts = spec.scripts ?? [];
  const scriptHashes = scripts.map((built) => `'${built.hash}'`);
  const data = spec.data === undefined ? '' : `<script type="application/json" id="page-data">${scriptJson(spec.data)}</script>\n`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(spec.title)}</title>
<style>${style}</style>
</head>
<body>
<main${spec.isWide === true ? ' class="wide"' : ''}>
${spec.body}
</main>
${data}${scripts.map((built) => `<script>${built.code}</script>\n`).join('')}</body>
</html>
`;
  const body = Buffer.from(html, 'utf8');
  const csp = [
    "default-src 'none'",
    `script-src ${scriptHashes.length > 0 ? scriptHashes.join(' ') : "'none'"}`,
    `style-src 'sha256-${sha256Base64(style)}'`,
    "connect-src 'self'",
    spec.allowDataImages === true ? 'img-src data:' : "img-src 'none'",
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

/**
 * GET and HEAD of a page's row (under the base URI): the same prebuilt bytes for everyone; the query is
 * the script's business.
 */
export function pageRoutes(access: PageAction, page: BuiltPage): Route[] {
  const { path } = ACCESS[access];
  const handler: Route['handler'] = (ctx) => sendStatic(ctx.res, 200, page.body, page.headers);
  return [
    { method: 'GET', path, access, body: 'none', handler },
    { method: 'HEAD', path, access, body: 'none', handler },
  ];
}

/** The rows of pages that are the same bytes for everyone. */
type PageAction = 'signInPage' | 'accountPage' | 'usersPage' | 'joinPage' | 'resetPage';
