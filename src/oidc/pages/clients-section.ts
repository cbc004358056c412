import { BUILT_SCRIPTS } from '../../pages/built-scripts.js';
import type { PageSection } from '../../pages/shell.js';

// The users page's "Sign-in apps" section, there only when Gatehouse is an OpenID Connect provider:
// the administrators' view of POST/GET/DELETE /api/auth/clients. The secret of a new app is shown
// once, with the issuer and discovery URL to paste into the app; nothing here holds authority of its
// own: the API decides, the page shows. Its script is browser/clients-section.entry.ts.

export const CLIENTS_SECTION: PageSection = {
  body: `
<section id="apps-section">
<h2>Sign-in apps <span id="apps-count" class="muted"></span></h2>
<p class="muted">Apps that sign users in themselves (Grafana, Immich, Nextcloud…) sign them in with Gatehouse through OpenID Connect. Give the app the issuer below, a client id and, for a server app, its secret.</p>
<p id="apps-issuer" class="muted" hidden>Issuer: <code id="apps-issuer-url"></code></p>
<div id="app-created" class="message done" hidden>
<p><strong id="app-created-name"></strong> is registered. Copy what the app needs now: the secret is not shown again.</p>
<p>Client id: <code id="app-created-id" class="secret"></code></p>
<p id="app-created-secret-line">Client secret: <code id="app-created-secret" class="secret"></code></p>
</div>
<ul id="apps" class="items"></ul>
<p id="no-apps" class="muted" hidden>No sign-in apps yet.</p>
<form id="app-add" autocomplete="off">
<h2>Register an app</h2>
<label for="app-name">Name</label>
<input id="app-name" name="name" required maxlength="128" placeholder="Grafana">
<label for="app-redirects">Redirect URIs <span class="muted">(one per line, exactly as the app sends them)</span></label>
<textarea id="app-redirects" name="redirects" rows="2" required autocapitalize="none" spellcheck="false" placeholder="https://grafana.example.org/login/generic_oauth"></textarea>
<label for="app-kind">Kind</label>
<select id="app-kind" name="kind"><option value="confidential">Server app, with a secret</option><option value="public">Phone or browser app, no secret (PKCE)</option></select>
<label for="app-groups">Only for these groups <span class="muted">(comma-separated; empty: every account)</span></label>
<input id="app-groups" name="groups" autocapitalize="none" spellcheck="false" placeholder="family, media">
<label for="app-alg">id_token signature</label>
<select id="app-alg" name="alg"><option value="RS256">RS256 (what most apps expect)</option><option value="ES256">ES256</option></select>
<label for="app-logout">After sign-out, return to <span class="muted">(optional, one per line)</span></label>
<textarea id="app-logout" name="logout" rows="1" autocapitalize="none" spellcheck="false"></textarea>
<label class="check"><input id="app-mfa" name="mfa" type="checkbox"> Needs two factors (a code or a passkey)</label>
<button type="submit">Register app</button>
</form>
<template id="app-edit">
<form class="edit" autocomplete="off">
<label>Name</label>
<input name="name" required maxlength="128">
<label>Redirect URIs <span class="muted">(one per line)</span></label>
<textarea name="redirects" rows="2" required autocapitalize="none" spellcheck="false"></textarea>
<label>Only for these groups <span class="muted">(comma-separated; empty: every account)</span></label>
<input name="groups" autocapitalize="none" spellcheck="false">
<label>id_token signature</label>
<select name="alg"><option value="RS256">RS256</option><option value="ES256">ES256</option></select>
<label>After sign-out, return to <span class="muted">(one per line)</span></label>
<textarea name="logout" rows="1" autocapitalize="none" spellcheck="false"></textarea>
<label class="check"><input name="mfa" type="checkbox"> Needs two factors (a code or a passkey)</label>
<p class="muted">The client id and secret stay. Accounts that new groups or two factors leave out lose their refresh tokens for this app.</p>
<div class="actions"><button type="submit">Save</button></div>
</form>
</template>
</section>
`,
  style: `
textarea{display:block;width:100%;margin:0 0 1rem;padding:.55rem .65rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit;font-size:.9rem;resize:vertical;background:inherit;color:inherit}
label.check{display:flex;align-items:center;gap:.5rem;margin:0 0 1rem}
label.check input{width:auto;margin:0}
#app-add{margin-top:1rem}
.uris{font-size:.85rem;overflow-wrap:anywhere}
#apps .actions{margin-top:.4rem}
#apps select{margin-bottom:1rem}
@media (prefers-color-scheme:dark){textarea{border-color:#475063}}
`,
  built: BUILT_SCRIPTS['oidc/pages/clients-section'],
};
