// The signed-in user's page, {base}/gatehouse/account: password, then its sections: the features'
// (authenticator app, passkeys, name and e-mail, sessions: src/feature.ts `sections`) around its own
// (machine tokens, account-tokens.ts); its script is browser/account.entry.ts. Static, built once; everything it shows comes from GET
// ../api/auth/account and every change is a JSON call (docs/contract/accounts.md "The caller's own account").
import { TOKENS_SECTION } from './account-tokens.js';
import { BUILT_SCRIPTS } from './built-scripts.js';
import { buildPage, newPasswordFields, type BuiltPage, type PageSection, type Sha256Base64 } from './shell.js';

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

/** The account page's own sections, in order. */
const OWN_SECTIONS: readonly PageSection[] = [TOKENS_SECTION];

/** The features' sections placed 'first', the page's own, the unplaced, then those placed 'last' (PageSection `place`). */
const inOrder = (sections: readonly PageSection[]): PageSection[] => [
  ...sections.filter((section) => section.place === 'first'),
  ...OWN_SECTIONS,
  ...sections.filter((section) => section.place === undefined),
  ...sections.filter((section) => section.place === 'last'),
];

/**
 * The account page, built once at start-up; data: images only, for the TOTP QR code. With
 * `isPasskeyOffered` false (passkeys off, passkeys/relying-party.ts) it offers none. `sections`: the
 * features' (authenticator app, passkeys, name and e-mail, sessions), placed around the page's own.
 * `minPasswordLength`: the shortest new password the account's route takes.
 */
export function buildAccountPage(
  sha256Base64: Sha256Base64,
  options: { readonly minPasswordLength: number; readonly isPasskeyOffered?: boolean; readonly sections?: readonly PageSection[] },
): BuiltPage {
  const sections = inOrder(options.sections ?? []);
  const body = bodyOf(options.minPasswordLength).replace('<!-- sections -->', sections.map((section) => section.body).join(''));
  // A feature's section script waits for the page's (browser/account-page.ts), so it goes first.
  const scripts = [...sections.flatMap((section) => (section.built === undefined ? [] : [section.built])), BUILT_SCRIPTS['pages/account']];
  const style = `${STYLE}${sections.map((section) => section.style ?? '').join('')}`;
  const data = { passkeysOffered: options.isPasskeyOffered !== false };
  return buildPage({ title: 'Your account', body, scripts, data, style, isWide: true, allowDataImages: true }, sha256Base64);
}
