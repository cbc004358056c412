// `{base}/gatehouse/users`: the administrators' page. Lists accounts (level, groups, second
// factor, machine tokens, last sign-in, sessions), adds one without client settings, changes level
// and groups, resets a lost TOTP authenticator, ends sessions, removes. Optional units (invitations)
// add a section and per-account actions of their own (UsersPageExtension).
// Every change is a JSON fetch to ../api/auth/... (relative: works under any base URI), so the
// page holds no authority of its own: the API decides who may do what, the page only shows it.
import { SESSION_ENTRY, SESSION_ENTRY_STYLE } from './session-entry.js';
import { buildPage, PAGE_HELPERS, type BuiltPage, type PageSection, type Sha256Base64 } from './shell.js';

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

const SCRIPT = `${PAGE_HELPERS}${SESSION_ENTRY}
var problem = byId('problem');
var status = byId('status');
var list = byId('users');
var GROUP = /^[a-z0-9_-]{1,64}$/;
var api = function (path) { return '../api/auth/' + path; };
var userPath = function (name) { return api('users/' + encodeURIComponent(name)); };
var isAdministrator = function (level) { return level === 10 || level === 'ADMINISTRATOR'; };
/** Functions (user, actions, item) that optional units add to draw their own per-account actions. */
var accountActions = [];
var when = function (ms) {
  var date = new Date(ms);
  return typeof ms !== 'number' || isNaN(date.getTime()) ? 'never' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};

/** Groups typed as "a, b": trimmed, empty parts dropped; undefined (and a message) when one is not a group name. */
var parseGroups = function (text) {
  var parts = text.split(',').map(function (part) { return part.trim(); }).filter(function (part) { return part !== ''; });
  for (var i = 0; i < parts.length; i += 1) {
    if (!GROUP.test(parts[i])) {
      say(problem, '"' + parts[i] + '" is not a group name: use 1 to 64 of a-z, 0-9, _ and -.');
      return undefined;
    }
  }
  return parts;
};
var tag = function (text, className) { return element('span', className ? 'tag ' + className : 'tag', text); };
var plural = function (count, noun) { return count + ' ' + noun + (count === 1 ? '' : 's'); };
/** After a change: the problem, or what was done and the list loaded again. */
var settle = function (answer, doneText) {
  if (!answer.ok) return say(problem, problemOf(answer));
  say(problem, '');
  say(status, doneText, 'done');
  load();
};

var stop = function (answer) {
  byId('content').hidden = true;
  // 401: not signed in, so there is no account to go to and nothing to sign out of.
  byId('signed-in-links').hidden = answer.status === 401;
  if (answer.status === 401) {
    say(problem, 'Sign in as an administrator to manage users.', 'note');
    byId('sign-in').href = '../login?rd=' + encodeURIComponent(location.href);
    byId('sign-in-next').hidden = false;
  } else {
    say(problem, answer.status === 403 ? 'Only administrators can manage users.' : problemOf(answer));
  }
};

var render = function (details) {
  list.textContent = '';
  byId('count').textContent = '(' + details.length + ')';
  details.forEach(function (user) {
    var item = list.appendChild(element('li', 'user'));
    var head = item.appendChild(element('div', 'user-head'));
    head.appendChild(element('span', 'user-name', user.username));
    if (typeof user.name === 'string') head.appendChild(element('span', 'display-name muted', user.name));
    var facts = item.appendChild(element('div', 'facts'));
    facts.appendChild(isAdministrator(user.level) ? tag('Administrator', 'admin') : tag('User'));
    (user.groups || []).forEach(function (name) { facts.appendChild(tag(name)); });
    if (user.groups && user.groups.length === 0) facts.appendChild(tag('no groups', 'off'));
    var factors = [user.totp ? 'TOTP' : '', user.passkeys > 0 ? plural(user.passkeys, 'passkey') : ''].filter(Boolean);
    var factorTag = factors.length > 0 ? tag('second factor: ' + factors.join(', ')) : tag('no second factor', 'off');
    facts.appendChild(factorTag);
    facts.appendChild(user.tokens > 0 ? tag(plural(user.tokens, 'machine token')) : tag('no machine tokens', 'off'));
    if (typeof user.email === 'string') facts.appendChild(tag(user.email));
    facts.appendChild(user.lastSignInAt ? tag('last sign-in ' + when(user.lastSignInAt)) : tag('no sign-in yet', 'off'));
    var actions = item.appendChild(element('div', 'actions'));
    var form;
    actions.appendChild(button('Edit', 'small secondary', function () {
      if (form) form.hidden = !form.hidden;
      else form = item.appendChild(editForm(user));
    }));
    var sessions;
    actions.appendChild(button('Sessions', 'small secondary', function () {
      if (sessions) {
        sessions.remove();
        sessions = undefined;
      } else {
        sessions = item.appendChild(element('ul', 'sessions'));
        showSessions(user, sessions);
      }
    }));
    accountActions.forEach(function (draw) { draw(user, actions, item); });
    // Taking ways in away (docs/contract/access.md "Administrators and two factors"): each a confirmed PATCH with false.
    var takeAway = function (label, question, patch, done) {
      actions.appendChild(button(label, 'small secondary', function () {
        if (!window.confirm(question)) return;
        callApi('PATCH', userPath(user.username), patch).then(function (answer) { settle(answer, done); });
      }));
    };
    if (user.totp) {
      takeAway('Reset TOTP', 'Remove the TOTP authenticator of ' + user.username + '? Their sessions end; they sign in with the password alone until they set up a new one.', { totp: false }, 'Reset the TOTP of ' + user.username + '.');
    }
    if (user.passkeys > 0) {
      takeAway('Remove passkeys', 'Remove every passkey of ' + user.username + '? Their sessions end.', { passkeys: false }, 'Removed the passkeys of ' + user.username + '.');
    }
    if (user.tokens > 0) {
      takeAway('Revoke tokens', 'Revoke every machine token of ' + user.username + '?', { tokens: false }, 'Revoked the machine tokens of ' + user.username + '.');
    }
    actions.appendChild(button('Remove', 'small danger', function () {
      if (!window.confirm('Remove ' + user.username + '? Their sessions and machine tokens end.')) return;
      callApi('DELETE', userPath(user.username)).then(function (answer) {
        settle(answer, 'Removed ' + user.username + '.');
      });
    }));
  });
};

/** The open sessions of one account, each with a button that ends it. */
var showSessions = function (user, list) {
  var path = userPath(user.username) + '/sessions';
  list.appendChild(element('li', 'muted', 'Loading…'));
  callApi('GET', path).then(function (answer) {
    list.textContent = '';
    if (!Array.isArray(answer.body)) return list.appendChild(element('li', 'message', problemOf(answer)));
    if (answer.body.length === 0) list.appendChild(element('li', 'muted', 'No open sessions.'));
    if (answer.body.length > 1) {
      var all = list.appendChild(element('li'));
      all.appendChild(element('div', 'grow muted', answer.body.length + ' open sessions'));
      all.appendChild(button('End all', 'small danger', function (event) {
        if (!window.confirm('End every session of ' + user.username + '? They sign in again everywhere.')) return;
        event.target.disabled = true;
        callApi('DELETE', path).then(function (ended) {
          if (!ended.ok) return say(problem, problemOf(ended));
          say(status, 'Ended every session of ' + user.username + '.', 'done');
          list.textContent = '';
          showSessions(user, list);
        });
      }));
    }
    answer.body.forEach(function (session) {
      list.appendChild(sessionEntry(session, button('End', 'small secondary', function (event) {
        event.target.disabled = true;
        callApi('DELETE', path + '/' + encodeURIComponent(session.id)).then(function (ended) {
          if (!ended.ok) return say(problem, problemOf(ended));
          say(status, 'Ended a session of ' + user.username + '.', 'done');
          list.textContent = '';
          showSessions(user, list);
        });
      })));
    });
  });
};

var counter = 0;
/** The level, groups, e-mail address and display name of one account, in a copy of the edit form (its labels tied to its own ids). */
var editForm = function (user) {
  var form = byId('edit').content.firstElementChild.cloneNode(true);
  var level = form.elements.level;
  var groups = form.elements.groups;
  var email = form.elements.email;
  var name = form.elements.name;
  var labels = form.querySelectorAll('label');
  counter += 1;
  [level, groups, email, name].forEach(function (field, index) {
    field.id = field.name + '-' + counter;
    labels[index].htmlFor = field.id;
  });
  level.value = isAdministrator(user.level) ? 'ADMINISTRATOR' : 'USER';
  groups.value = (user.groups || []).join(', ');
  email.value = typeof user.email === 'string' ? user.email : '';
  name.value = typeof user.name === 'string' ? user.name : '';
  onSubmit(form, function () {
    var parsed = parseGroups(groups.value);
    if (parsed === undefined) return;
    var patch = { groups: parsed };
    // Sent only when changed: an empty field removes the value.
    if (email.value.trim() !== (user.email || '')) patch.email = email.value.trim() === '' ? null : email.value.trim();
    if (name.value.trim() !== (user.name || '')) patch.name = name.value.trim() === '' ? null : name.value.trim();
    // Only a real change of level is sent: it is a credential change (the account's sessions end).
    if ((level.value === 'ADMINISTRATOR') !== isAdministrator(user.level)) patch.level = level.value;
    callBusy(form, 'PATCH', userPath(user.username), patch).then(function (answer) {
      settle(answer, 'Saved ' + user.username + '.');
    });
  });
  return form;
};

/** The list, then each account's details, a few requests at a time. */
var load = function () {
  return callApi('GET', api('users')).then(function (answer) {
    if (!answer.ok || !Array.isArray(answer.body)) return stop(answer);
    byId('content').hidden = false;
    byId('signed-in-links').hidden = false;
    var names = answer.body.map(function (entry) { return entry.username; });
    var details = new Array(names.length);
    var next = 0;
    var failed;
    var worker = function () {
      if (next >= names.length || failed) return Promise.resolve();
      var index = next;
      next += 1;
      return callApi('GET', userPath(names[index])).then(function (one) {
        if (one.ok) details[index] = one.body;
        else if (one.status === 401 || one.status === 403) failed = one;
        else details[index] = { username: names[index], level: answer.body[index].level };
        return worker();
      });
    };
    var workers = [];
    for (var i = 0; i < 6; i += 1) workers.push(worker());
    return Promise.all(workers).then(function () {
      if (failed) stop(failed);
      else render(details.filter(Boolean));
    });
  });
};

onSubmit(byId('add'), function (form) {
  var parsed = parseGroups(byId('add-groups').value);
  if (parsed === undefined) return;
  var body = { username: byId('add-username').value, password: byId('add-password').value, level: byId('add-level').value, groups: parsed };
  callBusy(form, 'POST', api('users'), body).then(function (answer) {
    if (codeOf(answer) === 'USERNAME_TAKEN') return say(problem, 'That username is already taken.');
    if (answer.ok) form.reset();
    settle(answer, answer.ok ? 'Added ' + answer.body.username + '.' : '');
  });
});

`;

/**
 * Built once at start-up: the same bytes for every administrator (the data comes from the API).
 * `sections` (OpenID Connect's sign-in apps) follow the accounts; `minPasswordLength` is the shortest
 * password POST /api/auth/users takes.
 */
export function buildUsersPage(sha256Base64: Sha256Base64, sections: readonly PageSection[], options: { readonly minPasswordLength: number }): BuiltPage {
  const body = bodyOf(options.minPasswordLength).replace('<!-- sections -->', sections.map((section) => section.body).join(''));
  const script = `${SCRIPT}${sections.map((section) => section.script).join('')}\nload();\n`;
  const style = `${STYLE}${SESSION_ENTRY_STYLE}${sections.map((section) => section.style ?? '').join('')}`;
  return buildPage({ title: 'Users · Gatehouse', body, script, style, isWide: true }, sha256Base64);
}
