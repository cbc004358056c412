// The invitations' part of the users page (pages/users-page.ts): make an invitation (a fixed or a
// chosen name, level, groups, days); on each account a "Reset link" button; and the open links, both
// kinds, each with a "Withdraw" button, which asks once (as the page's other removals do) and takes
// the link off the page if it is the one shown. The links are shown once, to copy and send; the page
// keeps none. Its script is browser/users-section.entry.ts.
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import type { PageSection } from '../pages/shell.js';
import { DEFAULT_INVITATION_DAYS, MAX_INVITATION_DAYS } from './bodies.js';

const BODY = `
<section id="invitations">
<h2>Invitations</h2>
<p class="muted">A one-time link with which someone makes their own account and chooses its password.</p>
<form id="invite" autocomplete="off">
<label for="invite-username">Username <span class="muted">(leave empty to let them choose)</span></label>
<input id="invite-username" name="username" maxlength="256" autocapitalize="none" spellcheck="false">
<label for="invite-level">Level</label>
<select id="invite-level" name="level"><option value="USER">User</option><option value="ADMINISTRATOR">Administrator</option></select>
<label for="invite-groups">Groups <span class="muted">(comma-separated; a-z, 0-9, _ and -)</span></label>
<input id="invite-groups" name="groups" autocapitalize="none" spellcheck="false" placeholder="family, media">
<label for="invite-days">Valid for (days, 1 to ${MAX_INVITATION_DAYS})</label>
<input id="invite-days" name="days" type="number" min="1" max="${MAX_INVITATION_DAYS}" value="${DEFAULT_INVITATION_DAYS}" inputmode="numeric" required>
<button type="submit">Make an invitation link</button>
</form>
<div id="new-link" class="message done" role="status" hidden>
<p id="new-link-text"></p>
<p><code id="new-link-url" class="link"></code></p>
<p class="muted">Copy it now: it is not shown again.</p>
</div>
<h3>Open links</h3>
<p class="muted">Invitations and reset links not yet used. A link ends when the administrator who made it is demoted, renamed or deleted, or its sessions end (a new password, logging out everywhere).</p>
<ul id="invitation-list" class="items"></ul>
<p id="no-invitations" class="muted" hidden>No open invitations or reset links.</p>
</section>
`;


/** The invitations section and the per-account "Reset link" button of the users page. */
export const INVITATIONS_USERS_PAGE: PageSection = Object.freeze({ body: BODY, built: BUILT_SCRIPTS['invitations/users-section'] });
