// `{base}/gatehouse/users`: the administrators' page. Lists accounts (level, groups, second
// factor, machine tokens, last sign-in, sessions), adds one without client settings, changes level
// and groups, resets a lost TOTP authenticator, ends sessions, removes. Optional units (invitations)
// add a section and per-account actions of their own (browser/users-page.ts); the page's script is
// browser/users.entry.ts.
// Every change is a JSON fetch to ../api/auth/... (relative: works under any base URI), so the
// page holds no authority of its own: the API decides who may do what, the page only shows it.
import { BUILT_SCRIPTS } from './built-scripts.js';
import { SESSION_ENTRY_STYLE } from './session-entry.js';
import { buildPage, type BuiltPage, type PageSection, type Sha256Base64 } from './shell.js';

const bodyOf = (minPasswordLength: number): string => `
<h1>Users</h1>
<p id="signed-in-links" class="who" hidden><a href="account">Your account</a> <a id="sign-out" class="button secondary small" href="../logout">Sign out</a></p>
<p id="problem" class="message" role="alert" hidden></p>
<p id="status" class="message note" role="status" hidden></p>
<p id="sign-in-next" hidden><a id="sign-in" class="button" href="../login">Sign in</a></p>
<div id="content" hidden>
<section>
<h2>Add an account</h2>
<p class="muted">For the apps behind the gate: no torrent-client settings.</p>
<form id="add" autocomplete="off">
<label for="add-username">Username</label>
<input id="add-username" name="username" autocomplete="off" required maxlength="256" autocapitalize="none" spellcheck="false">
<label for="add-password">Password <span class="muted">(at least ${minPasswordLength} characters)</span></label>
<input id="add-password" name="password" type="password" required minlength="${minPasswordLength}" maxlength="1024" autocomplete="new-password">
<label for="add-level">Level</label>
<select id="add-level" name="level"><option value="USER">User</option><option value="ADMINISTRATOR">Administrator</option></select>
<label for="add-groups">Groups <span class="muted">(comma-separated; a-z, 0-9, _ and -)</span></label>
<input id="add-groups" name="groups" autocapitalize="none" spellcheck="false" placeholder="family, media">
<button type="submit">Add account</button>
</form>
</section>
<section>
<h2>Accounts <span id="count" class="muted"></span></h2>
<ul id="users" class="items"></ul>
</section>
<!-- sections -->
</div>
<template id="edit">
<form class="edit">
<label>Level</label>
<select name="level"><option value="USER">User</option><option value="ADMINISTRATOR">Administrator</option></select>
<label>Groups (comma-separated)</label>
<input name="groups" autocapitalize="none" spellcheck="false">
<label>E-mail address <span class="muted">(for apps signed in through Gatehouse; counts as verified)</span></label>
<input name="email" type="email" maxlength="254" autocapitalize="none" spellcheck="false">
<label>Display name</label>
<input name="name" maxlength="128">
<div class="actions"><button type="submit">Save</button></div>
</form>
</template>
`;

const STYLE = `
select{display:block;width:100%;margin:0 0 1rem;padding:.5rem .6rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit;background:#fff;color:inherit}
ul.items li.user{display:block}
.user-head{display:flex;flex-wrap:wrap;align-items:baseline;gap:.25rem .75rem}
.user-name{flex:0 1 auto;min-width:0;font-weight:600;overflow-wrap:anywhere}
.display-name{flex:1 1 8rem;min-width:0;overflow-wrap:anywhere}
.facts{display:flex;flex-wrap:wrap;gap:.3rem;margin:.35rem 0 .5rem}
.tag{display:inline-block;padding:.05rem .5rem;border-radius:999px;background:#e8effc;color:#1d3f8a;font-size:.8rem}
.tag.admin{background:#fdf0d5;color:#7a4b00}
.tag.off{background:#eef0f3;color:#5b6475}
.actions{display:flex;flex-wrap:wrap;gap:.5rem}
form.edit{margin:.75rem 0 .25rem;padding:.75rem;border:1px solid #e1e4ea;border-radius:6px}
form.edit .actions button{flex:1 1 8rem}
ul.sessions{list-style:none;margin:.5rem 0 .25rem;padding:0 .75rem;border:1px solid #e1e4ea;border-radius:6px}
ul.sessions li{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem;padding:.5rem 0;border-bottom:1px solid #e1e4ea}
ul.sessions li:last-child{border-bottom:0}
ul.sessions li .grow{flex:1 1 12rem;min-width:0;overflow-wrap:anywhere}
@media (prefers-color-scheme:dark){ul.sessions,ul.sessions li{border-color:#363c48}select{background:#15181e;border-color:#475063}.tag{background:#1d2b4a;color:#d6e2ff}.tag.admin{background:#4a3a1d;color:#ffe6b3}.tag.off{background:#2a2f39;color:#a3abba}form.edit{border-color:#363c48}}
`;


/**
 * Built once at start-up: the same bytes for every administrator (the data comes from the API).
 * `sections` (OpenID Connect's sign-in apps) follow the accounts; `minPasswordLength` is the shortest
 * password POST /api/auth/users takes.
 */
export function buildUsersPage(sha256Base64: Sha256Base64, sections: readonly PageSection[], options: { readonly minPasswordLength: number }): BuiltPage {
  const body = bodyOf(options.minPasswordLength).replace('<!-- sections -->', sections.map((section) => section.body).join(''));
  // A feature's section script waits for the page's (browser/users-page.ts), so it goes first.
  const scripts = [...sections.flatMap((section) => (section.built === undefined ? [] : [section.built])), BUILT_SCRIPTS['pages/users']];
  const style = `${STYLE}${SESSION_ENTRY_STYLE}${sections.map((section) => section.style ?? '').join('')}`;
  return buildPage({ title: 'Users · Gatehouse', body, scripts, style, isWide: true }, sha256Base64);
}
