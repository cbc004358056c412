import type { OutgoingHttpHeaders } from 'node:http';
import { buildPage, escapeHtml, type Sha256Base64 } from '../pages/shell.js';

/** What a signed-in user lacks for the page they asked for. */
export interface Missing {
  readonly isAdministratorNeeded?: boolean;
  /** Any one of these groups would do. */
  readonly groups?: readonly string[];
  readonly isSecondFactorNeeded?: boolean;
}

interface ForbiddenPageContent {
  readonly username: string;
  readonly missing: Missing;
  /** Where "sign in as someone else" goes (the sign-out page, then the sign-in page), if known. */
  readonly switchAccountUrl?: string | undefined;
}

export type ForbiddenPage = (
  content: ForbiddenPageContent,
) => { readonly body: Buffer; readonly headers: Readonly<OutgoingHttpHeaders> };

// The page is built once by the shell (its CSP and style never change); only the text between
// these markers differs per answer, escaped, so the CSP's style hash stays true.
const SLOT = '\u0000gatehouse-forbidden-slot\u0000';

/**
 * The 403 a browser sees at the gate: who is signed in, what the page asks for that the account
 * lacks, and a link to sign in as someone else. No script (the CSP allows none), nothing loaded;
 * every piece of text from the account is escaped.
 */
export function buildForbiddenPage(
  sha256Base64: Sha256Base64,
  /** `accountUrl`: the account page on Gatehouse's own origin (--public-url's), linked when known. */
  options: { readonly isPasskeyOffered: boolean; readonly accountUrl?: string | undefined },
): ForbiddenPage {
  // A passkey is named only where one can be used: with passkeys off the page would send users looking for it.
  const secondFactors = options.isPasskeyOffered ? 'a code or a passkey' : 'a code from an authenticator app';
  const template = buildPage({
    title: 'Not allowed',
    body: `<h1>Not allowed</h1>\n${SLOT}${options.accountUrl === undefined ? '' : `\n<p class="muted"><a id="account" href="${escapeHtml(options.accountUrl)}">Your account</a></p>`}`,
    style: 'ul.missing{margin:0 0 1rem;padding-left:1.25rem}',
  }, sha256Base64);
  const [before = '', after = ''] = template.body.toString('utf8').split(SLOT);
  const head = Buffer.from(before, 'utf8');
  const tail = Buffer.from(after, 'utf8');
  return (content) => {
    const needs: string[] = [];
    if (content.missing.isAdministratorNeeded === true) needs.push('an administrator account');
    if (content.missing.groups !== undefined && content.missing.groups.length > 0) {
      const names = content.missing.groups.map((name) => `<code>${escapeHtml(name)}</code>`).join(', ');
      needs.push(content.missing.groups.length === 1
        ? `membership in the group ${names}`
        : `membership in one of the groups ${names}`);
    }
    if (content.missing.isSecondFactorNeeded === true) {
      needs.push(`a sign-in with a second factor (${secondFactors})`);
    }
    const list = needs.length === 0
      ? '<p>This page is not open to your account.</p>'
      : `<p>This page needs:</p>\n<ul class="missing">\n${needs.map((need) => `<li>${need}</li>`).join('\n')}\n</ul>`;
    const action =
      content.switchAccountUrl === undefined
        ? '<p class="muted">Ask an administrator for access.</p>'
        : `<p><a id="switch" href="${escapeHtml(content.switchAccountUrl)}" class="button secondary">Sign in as someone else</a></p>\n<p class="muted">Or ask an administrator for access.</p>`;
    const middle = Buffer.from(
      `<p>You are signed in as <strong id="username">${escapeHtml(content.username)}</strong>.</p>\n${list}\n${action}`,
      'utf8',
    );
    const body = Buffer.concat([head, middle, tail]);
    return { body, headers: { ...template.headers, 'content-length': body.length } };
  };
}
