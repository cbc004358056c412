// The account page's sessions (docs/contract/links-and-sessions.md "Sessions"): every place the
// account is signed in (session-entry.ts), each with an End button (a second click confirms), and log
// out everywhere; and the section the join page links to, shown once the page is drawn.
import type { AccountPage } from './account-page.js';
import { button, byId, callApi, problemOf, say, type JsonObject } from './helpers.js';
import { sessionEntry } from './session-entry.js';

/** The account's sessions from GET ../api/auth/account/sessions, newest first; this one marked. */
export function drawSessions(page: AccountPage, sessions: readonly JsonObject[]): void {
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

// The join page links to a section: once drawn, go there (the browser could not: it was hidden).
let isSectionShown = false;
export function showAskedSection(): void {
  if (isSectionShown) return;
  isSectionShown = true;
  const section = /^#[a-z-]+$/.test(location.hash) ? document.querySelector(location.hash) : null;
  if (section === null) return;
  section.scrollIntoView();
  const field = section.querySelector<HTMLElement>('input:not([hidden]):not([disabled])');
  if (field !== null) field.focus();
}

export function initSessions(page: AccountPage): void {
  const everywhere = byId('logout-everywhere', HTMLButtonElement);
  page.onSecondClick(everywhere, 'Click again: end every session, this one included', () => {
    void callApi('POST', '../api/auth/account/logout-everywhere', {}).then((answer) => {
      if (answer.status === 401 || answer.ok) return page.toSignIn();
      everywhere.disabled = false;
      say(byId('sessions-message'), problemOf(answer));
    });
  });
}
