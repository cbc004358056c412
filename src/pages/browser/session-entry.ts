// One session as a person reads it, on the account page and the users page alike
// (docs/contract/links-and-sessions.md): the browser's name, "this browser" on the one asking, then
// where it signed in from and how, and when it was last seen ("active now" for this browser, whose
// own request is the one asking; others to the hour, as the server writes it). Two browsers of one
// kind are told apart by these.
import { element, type JsonObject } from './helpers.js';

function factorsOf(amr: unknown): string {
  const has = (value: string): boolean => Array.isArray(amr) && amr.indexOf(value) !== -1;
  if (has('otp')) return 'password and code';
  if (has('hwk')) return has('user') ? 'passkey with PIN or biometric' : 'passkey';
  return 'password';
}

/** A list item for one session of GET …/sessions, with `action` (a button) at its end; `when` writes a time. */
export function sessionEntry(session: JsonObject, action: HTMLElement, when: (value: unknown) => string): HTMLLIElement {
  const li = element('li', 'session');
  const text = li.appendChild(element('div', 'grow'));
  const title = text.appendChild(element('strong', '', String(session['browser'])));
  if (session['current'] === true) title.appendChild(element('span', 'here', 'this browser'));
  text.appendChild(element('div', 'muted', `From ${String(session['address'])} · signed in ${when(session['createdAt'])} with ${factorsOf(session['amr'])}`));
  text.appendChild(element('div', 'muted', session['current'] === true ? 'Active now' : `Last seen ${when(session['lastSeenAt'])}`));
  li.appendChild(action);
  return li;
}
