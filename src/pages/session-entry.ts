// One session as a person reads it, on the account page and the users page alike
// (docs/contract/links-and-sessions.md): the browser's name, "this browser" on the one asking, then
// where it signed in from and how, and when it was last seen ("active now" for this browser, whose
// own request is the one asking; others to the hour, as the server writes it). Two browsers of one
// kind are told apart by these. Browser code, after PAGE_HELPERS; `when` is the page's own.

export const SESSION_ENTRY = `
var factorsOf = function (amr) {
  var has = function (value) { return Array.isArray(amr) && amr.indexOf(value) !== -1; };
  if (has('otp')) return 'password and code';
  if (has('hwk')) return has('user') ? 'passkey with PIN or biometric' : 'passkey';
  return 'password';
};
/** A list item for one session of GET …/sessions, with \`action\` (a button) at its end. */
var sessionEntry = function (session, action) {
  var li = element('li', 'session');
  var text = li.appendChild(element('div', 'grow'));
  var title = text.appendChild(element('strong', '', String(session.browser)));
  if (session.current === true) title.appendChild(element('span', 'here', 'this browser'));
  text.appendChild(element('div', 'muted', 'From ' + String(session.address) + ' · signed in ' + when(session.createdAt) + ' with ' + factorsOf(session.amr)));
  text.appendChild(element('div', 'muted', session.current === true ? 'Active now' : 'Last seen ' + when(session.lastSeenAt)));
  li.appendChild(action);
  return li;
};
`;

export const SESSION_ENTRY_STYLE = `
.here{display:inline-block;margin-left:.5rem;padding:.05rem .5rem;border-radius:999px;background:#e6f4ea;color:#1e5b2f;font-size:.8rem;font-weight:400}
@media (prefers-color-scheme:dark){.here{background:#1d3b26;color:#d3f5dc}}
`;
