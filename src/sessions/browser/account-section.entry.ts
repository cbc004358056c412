// The account page's sessions section (docs/contract/links-and-sessions.md "Sessions"; the markup is
// sessions/account-section.ts): every place the account is signed in (pages/browser/session-entry.ts),
// each with an End button (a second click confirms), and log out everywhere.
import { onAccountPage, type AccountPage } from '../../pages/browser/account-page.js';
import { button, byId, callApi, isObject, listOf, problemOf, say, type JsonObject } from '../../pages/browser/helpers.js';
import { sessionEntry } from '../../pages/browser/session-entry.js';

/** The account's sessions from GET ../api/auth/account/sessions, newest first; this one marked. */
function drawSessions(page: AccountPage, sessions: readonly JsonObject[]): void {
  const message = byId('sessions-message');
  page.fill(byId('session-list'), sessions.map((session) => {
    const end = button('End', 'secondary small');
    end.setAttribute('aria-label', `End the session of ${String(session['browser'])} from ${String(session['address'])}`);
    page.onSecondClick(end, 'Click again to end', () => {
      const path = `../api/auth/account/sessions/${encodeURIComponent(String(session['id']))}`;
      void page.send(null, message, 'DELETE', path).then((answer) => {
        if (answer.status === 401) return;
        if (answer.ok && session['current'] === true) return page.toSignIn();
        if (!answer.ok) say(message, problemOf(answer));
        else say(message, 'Session ended: it is signed out everywhere it was used.', 'done');
        void page.reload();
      });
    });
    return sessionEntry(session, end, page.when);
  }));
}

onAccountPage((page) => {
  // Asked once the account answered: a visitor without a session meets one 401, not two.
  page.afterAccount(() => callApi('GET', '../api/auth/account/sessions').then((sessions) => {
    const list = listOf(sessions);
    if (list !== null) drawSessions(page, list.filter(isObject));
    else if (sessions.status !== 401) say(byId('sessions-message'), problemOf(sessions));
  }));
  const everywhere = byId('logout-everywhere', HTMLButtonElement);
  page.onSecondClick(everywhere, 'Click again: end every session, this one included', () => {
    void callApi('POST', '../api/auth/account/logout-everywhere', {}).then((answer) => {
      if (answer.status === 401 || answer.ok) return page.toSignIn();
      everywhere.disabled = false;
      say(byId('sessions-message'), problemOf(answer));
    });
  });
});
