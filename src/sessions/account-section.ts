// The account page's sessions section's markup (docs/contract/links-and-sessions.md "Sessions"):
// every place the account is signed in, each with an End button, and log out everywhere. Its script
// is browser/account-section.entry.ts.
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import { SESSION_ENTRY_STYLE } from '../pages/session-entry.js';
import type { PageSection } from '../pages/shell.js';

const BODY = `
<section id="sessions-section">
<h2>Sessions</h2>
<p class="muted">Where this account is signed in. End any you do not recognise.</p>
<ul id="session-list" class="items"></ul>
<p id="sessions-message" class="message" role="alert" hidden></p>
<p>Or end every session of this account on every device, this one included:</p>
<button type="button" id="logout-everywhere" class="danger">Log out everywhere</button>
</section>
`;

/** Last on the account page. */
export const SESSIONS_SECTION: PageSection = Object.freeze({ body: BODY, style: SESSION_ENTRY_STYLE, built: BUILT_SCRIPTS['sessions/account-section'], place: 'last' });
