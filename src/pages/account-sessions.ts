// The account page's sessions (docs/contract/links-and-sessions.md "Sessions"): every place the
// account is signed in (session-entry.ts), each with an End button (a second click confirms), and log
// out everywhere; and the section the join page links to, shown once the page is drawn. Browser code
// that runs inside the account page's script (pages/account.ts), after its helpers: item, fill, send,
// reload, toSignIn, when, onSecondClick.
import { SESSION_ENTRY, SESSION_ENTRY_STYLE } from './session-entry.js';
import type { PageSection } from './shell.js';

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

const SCRIPT = `${SESSION_ENTRY}
/** The account's sessions from GET ../api/auth/account/sessions, newest first; this one marked. */
var renderSessions = function (sessions) {
  fill(byId('session-list'), sessions.map(function (session) {
    var end = button('End', 'secondary small');
    end.setAttribute('aria-label', 'End the session of ' + String(session.browser) + ' from ' + String(session.address));
    onSecondClick(end, 'Click again to end', function () {
      var path = '../api/auth/account/sessions/' + encodeURIComponent(session.id);
      send(null, byId('sessions-message'), 'DELETE', path).then(function (answer) {
        if (answer.status === 401) return;
        if (answer.ok && session.current === true) return toSignIn();
        if (!answer.ok) say(byId('sessions-message'), problemOf(answer));
        else say(byId('sessions-message'), 'Session ended: it is signed out everywhere it was used.', 'done');
        reload();
      });
    });
    return sessionEntry(session, end);
  }));
};
// The join page links to a section: once drawn, go there (the browser could not: it was hidden).
var isSectionShown = false;
var showAskedSection = function () {
  if (isSectionShown) return;
  isSectionShown = true;
  var section = /^#[a-z-]+$/.test(location.hash) ? document.querySelector(location.hash) : null;
  if (section === null) return;
  section.scrollIntoView();
  var field = section.querySelector('input:not([hidden]):not([disabled])');
  if (field) field.focus();
};
onSecondClick(byId('logout-everywhere'), 'Click again: end every session, this one included', function () {
  callApi('POST', '../api/auth/account/logout-everywhere', {}).then(function (answer) {
    if (answer.status === 401 || answer.ok) return toSignIn();
    byId('logout-everywhere').disabled = false;
    say(byId('sessions-message'), problemOf(answer));
  });
});
`;

export const SESSIONS_SECTION: PageSection = Object.freeze({ body: BODY, script: SCRIPT, style: SESSION_ENTRY_STYLE });
