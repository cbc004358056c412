import type { OutgoingHttpHeaders } from 'node:http';
import { buildPage, escapeHtml, type Sha256Base64 } from '../../pages/shell.js';

/** What the page says: all of it checked before (the redirect URI registered, the account signed in). */
interface NotOpenContent {
  readonly username: string;
  readonly appName: string;
  /** The registered redirect URI with error=access_denied, the state and iss. */
  readonly backToApp: string;
  /** `{base}/logout?rd=…` relative to `{base}/oidc/authorize`: signs out, then the sign-in page returns here. */
  readonly switchAccount: string;
}

type NotOpenPage = (content: NotOpenContent) => { readonly body: Buffer; readonly headers: Readonly<OutgoingHttpHeaders> };

// Built once by the shell (its CSP and style never change; no script); only the text at the slot
// differs per answer, escaped, so the CSP's hashes stay true.
const SLOT = '\u0000gatehouse-not-open-slot\u0000';

/**
 * The 403 of an authorization request whose signed-in account the app's groups refuse
 * (docs/contract/oidc.md, authorize): who is signed in, that the app is not open to that account,
 * "Sign in as someone else" and "Back to the app". Two plain links and no script: the sign-out is the
 * sign-out page's own same-origin navigation (a cross-site one gets its button), and the way back is
 * the redirect a refusal always made, now the person's choice.
 */
export function buildNotOpenPage(sha256Base64: Sha256Base64): NotOpenPage {
  const template = buildPage({
    title: 'Not open to this account',
    body: `<h1>Not open to this account</h1>\n${SLOT}`,
    style: '.choices{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center}.choices a.primary{display:inline-block;padding:.55rem 1rem;border-radius:4px;background:#3465d9;color:#fff;font-weight:600;text-decoration:none}',
  }, sha256Base64);
  const [before = '', after = ''] = template.body.toString('utf8').split(SLOT);
  const head = Buffer.from(before, 'utf8');
  const tail = Buffer.from(after, 'utf8');
  return (content) => {
    const middle = Buffer.from(`<p>You are signed in to Gatehouse as <strong id="username">${escapeHtml(content.username)}</strong>.</p>
<p><strong id="app-name">${escapeHtml(content.appName)}</strong> is not open to your account: an administrator lets only some groups sign in to it.</p>
<p class="choices"><a class="primary" id="switch" href="${escapeHtml(content.switchAccount)}">Sign in as someone else</a> <a id="back" href="${escapeHtml(content.backToApp)}">Back to the app</a></p>
<p class="muted">Or ask an administrator to add your account to one of the app's groups.</p>`, 'utf8');
    const body = Buffer.concat([head, middle, tail]);
    return { body, headers: { ...template.headers, 'content-length': body.length } };
  };
}
