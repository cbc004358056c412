import { BUILT_SCRIPTS } from '../../pages/built-scripts.js';
import type { PageSection } from '../../pages/shell.js';

// The account page's "Name and e-mail" section, there only when Gatehouse is an OpenID Connect
// provider: what apps signed in through it receive as `name` and `email`
// (docs/contract/oidc.md "Accounts"). An address its owner sets is not verified; one an administrator set is.
// Its script is browser/profile-section.entry.ts.

export const PROFILE_SECTION: PageSection = {
  body: `
<section id="profile-section">
<h2>Name and e-mail</h2>
<p class="muted">The apps you sign in to through Gatehouse receive these when they ask for them.</p>
<form id="profile-form" method="post">
<label for="profile-name">Display name</label>
<input id="profile-name" name="name" maxlength="128" autocomplete="name">
<label for="profile-email">E-mail address</label>
<input id="profile-email" name="email" type="email" maxlength="254" autocomplete="email" autocapitalize="none" spellcheck="false">
<p id="profile-verified" class="muted" hidden>This address was set by an administrator.</p>
<button type="submit">Save</button>
</form>
<p id="profile-message" class="message" role="alert" hidden></p>
</section>
`,
  built: BUILT_SCRIPTS['oidc/pages/profile-section'],
};
