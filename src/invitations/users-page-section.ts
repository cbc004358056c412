// The invitations' part of the users page (pages/users-page.ts): make an invitation (a fixed or a
// chosen name, level, groups, days); on each account a "Reset link" button; and the open links, both
// kinds, each with a "Withdraw" button, which asks once (as the page's other removals do) and takes
// the link off the page if it is the one shown. The links are shown once, to copy and send; the page
// keeps none.
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

const SCRIPT = `
// The id of the link on the page: withdrawing that link takes it off the page too.
var shownLink = null;
var showLink = function (text, url, linkId) {
  shownLink = linkId;
  byId('new-link-text').textContent = text;
  byId('new-link-url').textContent = url;
  byId('new-link').hidden = false;
  byId('new-link').scrollIntoView({ block: 'nearest' });
};
var loadInvitations = function () {
  return callApi('GET', api('invites')).then(function (answer) {
    if (!Array.isArray(answer.body)) return;
    var list = byId('invitation-list');
    list.textContent = '';
    byId('no-invitations').hidden = answer.body.length > 0;
    answer.body.forEach(function (link) {
      var li = list.appendChild(element('li'));
      var text = li.appendChild(element('div', 'grow'));
      var isReset = link.kind === 'reset';
      var name = typeof link.username === 'string' ? link.username : 'a name of their choice';
      var what = isReset ? 'the reset link for ' + name : 'the invitation for ' + name;
      text.appendChild(element('strong', '', name));
      var groups = Array.isArray(link.groups) && link.groups.length > 0 ? ' · ' + link.groups.join(', ') : '';
      var kind = isReset ? 'Reset link' : 'Invitation · ' + (isAdministrator(link.level) ? 'Administrator' : 'User') + groups;
      text.appendChild(element('div', 'muted', kind + ' · until ' + when(link.expiresAt) + ' · by ' + String(link.createdBy)));
      li.appendChild(button('Withdraw', 'small secondary', function (event) {
        if (!window.confirm('Withdraw ' + what + '? Its link stops working at once.')) return;
        event.target.disabled = true;
        callApi('DELETE', api('invites/' + encodeURIComponent(link.id))).then(function (withdrawn) {
          if (!withdrawn.ok) {
            event.target.disabled = false;
            return say(problem, problemOf(withdrawn));
          }
          if (shownLink === link.id) byId('new-link').hidden = true;
          say(status, 'Withdrew ' + what + '.', 'done');
          loadInvitations();
        });
      }));
    });
  });
};
onSubmit(byId('invite'), function (form) {
  var groups = parseGroups(byId('invite-groups').value);
  if (groups === undefined) return;
  var body = { level: byId('invite-level').value, groups: groups, days: Number(byId('invite-days').value) };
  var username = byId('invite-username').value;
  if (username !== '') body.username = username;
  byId('new-link').hidden = true;
  callBusy(form, 'POST', api('invites'), body).then(function (answer) {
    var made = bodyOf(answer);
    if (made === null) return say(problem, problemOf(answer));
    say(problem, '');
    form.reset();
    showLink('Send this link to ' + (username === '' ? 'the person you invite' : username) + '. It works once, until ' + when(made.expiresAt) + '.', String(made.url), String(made.id));
    loadInvitations();
  });
});
accountActions.push(function (user, actions) {
  actions.appendChild(button('Reset link', 'small secondary', function (event) {
    event.target.disabled = true;
    callApi('POST', userPath(user.username) + '/reset-link', {}).then(function (answer) {
      event.target.disabled = false;
      var made = bodyOf(answer);
      if (made === null) return say(problem, problemOf(answer));
      say(problem, '');
      showLink('Send this link to ' + user.username + ' to set a new password. It works once, until ' + when(made.expiresAt) +
        '; every session of the account ends when it is used.', String(made.url), String(made.id));
      loadInvitations();
    });
  }));
});
loadInvitations();
`;

/** The invitations section and the per-account "Reset link" button of the users page. */
export const INVITATIONS_USERS_PAGE: PageSection = Object.freeze({ body: BODY, script: SCRIPT });
