// The account page's sessions (docs/contract/links-and-sessions.md "Sessions"): every place the
// account is signed in, this browser marked, each with an End button (a second click confirms); and
// the section the join page links to, shown once the page is drawn. Browser code that runs inside the
// account page's script (pages/account.ts), after its helpers: item, fill, send, reload, toSignIn, when.

export const SESSIONS_SCRIPT = `
var factorsOf = function (amr) {
  var has = function (value) { return Array.isArray(amr) && amr.indexOf(value) !== -1; };
  if (has('otp')) return 'password and code';
  if (has('hwk')) return has('user') ? 'passkey with PIN or biometric' : 'passkey';
  return 'password';
};
/** The account's sessions from GET ../api/auth/account/sessions, newest first; this one marked. */
var renderSessions = function (sessions) {
  fill(byId('session-list'), sessions.map(function (session) {
    var details = 'Signed in ' + when(session.createdAt) + ' from ' + String(session.address) + ' with ' + factorsOf(session.amr) +
      ' · last seen ' + when(session.lastSeenAt);
    var li = item(String(session.browser), details, 'End', 'End the session of ' + String(session.browser), function () {
      var path = '../api/auth/account/sessions/' + encodeURIComponent(session.id);
      send(null, byId('sessions-message'), 'DELETE', path).then(function (answer) {
        if (answer.status === 401) return;
        if (answer.ok && session.current === true) return toSignIn();
        if (!answer.ok) say(byId('sessions-message'), problemOf(answer));
        else say(byId('sessions-message'), 'Session ended: it is signed out everywhere it was used.', 'done');
        reload();
      });
    });
    if (session.current === true) li.querySelector('strong').appendChild(element('span', 'here', 'this browser'));
    return li;
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
`;
