// The users page's script ({base}/gatehouse/users; pages/users-page.ts has its markup). Every change
// is a JSON call to ../api/auth/... (relative: works under any base URI), so the page holds no
// authority of its own: the API decides who may do what, the page only shows it.
import { bodyOf, button, byId, callApi, callBusy, clickedButton, codeOf, element, fieldOf, isObject, listOf, onSubmit, problemOf, say, type Answer, type JsonObject } from './helpers.js';
import { sessionEntry } from './session-entry.js';
import { startUsersSections, type UsersPage } from './users-page.js';

const problem = byId('problem');
const status = byId('status');
const list = byId('users');
const GROUP = /^[a-z0-9_-]{1,64}$/;
const api = (path: string): string => `../api/auth/${path}`;
const userPath = (name: string): string => api(`users/${encodeURIComponent(name)}`);
const isAdministrator = (level: unknown): boolean => level === 10 || level === 'ADMINISTRATOR';
/** Functions that sections add to draw their own per-account actions. */
const accountActions: Array<(user: JsonObject, actions: HTMLElement) => void> = [];
const when = (ms: unknown): string => {
  const date = new Date(typeof ms === 'number' ? ms : NaN);
  return typeof ms !== 'number' || isNaN(date.getTime()) ? 'never' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
};
const stringsOf = (value: unknown): string[] | undefined => (Array.isArray(value) ? value.map(String) : undefined);

function parseGroups(text: string): string[] | undefined {
  const parts = text.split(',').map((part) => part.trim()).filter((part) => part !== '');
  for (const part of parts) {
    if (!GROUP.test(part)) {
      say(problem, `"${part}" is not a group name: use 1 to 64 of a-z, 0-9, _ and -.`);
      return undefined;
    }
  }
  return parts;
}
const tag = (text: string, className?: string): HTMLElement => element('span', className !== undefined && className !== '' ? `tag ${className}` : 'tag', text);
const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
/** After a change: the problem, or what was done and the list loaded again. */
function settle(answer: Answer, doneText: string): void {
  if (!answer.ok) return say(problem, problemOf(answer));
  say(problem, '');
  say(status, doneText, 'done');
  void load();
}

function stop(answer: Answer): void {
  byId('content').hidden = true;
  // 401: not signed in, so there is no account to go to and nothing to sign out of.
  byId('signed-in-links').hidden = answer.status === 401;
  if (answer.status === 401) {
    say(problem, 'Sign in as an administrator to manage users.', 'note');
    byId('sign-in', HTMLAnchorElement).href = `../login?rd=${encodeURIComponent(location.href)}`;
    byId('sign-in-next').hidden = false;
  } else {
    say(problem, answer.status === 403 ? 'Only administrators can manage users.' : problemOf(answer));
  }
}

function render(details: readonly JsonObject[]): void {
  list.textContent = '';
  byId('count').textContent = `(${details.length})`;
  for (const user of details) {
    const username = String(user['username']);
    const groups = stringsOf(user['groups']);
    const passkeys = typeof user['passkeys'] === 'number' ? user['passkeys'] : 0;
    const tokens = typeof user['tokens'] === 'number' ? user['tokens'] : 0;
    const item = list.appendChild(element('li', 'user'));
    const head = item.appendChild(element('div', 'user-head'));
    head.appendChild(element('span', 'user-name', username));
    if (typeof user['name'] === 'string') head.appendChild(element('span', 'display-name muted', user['name']));
    const facts = item.appendChild(element('div', 'facts'));
    facts.appendChild(isAdministrator(user['level']) ? tag('Administrator', 'admin') : tag('User'));
    for (const name of groups ?? []) facts.appendChild(tag(name));
    if (groups !== undefined && groups.length === 0) facts.appendChild(tag('no groups', 'off'));
    const factors = [user['totp'] === true ? 'TOTP' : '', passkeys > 0 ? plural(passkeys, 'passkey') : ''].filter(Boolean);
    facts.appendChild(factors.length > 0 ? tag(`second factor: ${factors.join(', ')}`) : tag('no second factor', 'off'));
    facts.appendChild(tokens > 0 ? tag(plural(tokens, 'machine token')) : tag('no machine tokens', 'off'));
    if (typeof user['email'] === 'string') facts.appendChild(tag(user['email']));
    facts.appendChild(typeof user['lastSignInAt'] === 'number' && user['lastSignInAt'] !== 0 ? tag(`last sign-in ${when(user['lastSignInAt'])}`) : tag('no sign-in yet', 'off'));
    const actions = item.appendChild(element('div', 'actions'));
    let form: HTMLFormElement | undefined;
    actions.appendChild(button('Edit', 'small secondary', () => {
      if (form !== undefined) form.hidden = !form.hidden;
      else form = item.appendChild(editForm(user));
    }));
    let sessions: HTMLUListElement | undefined;
    actions.appendChild(button('Sessions', 'small secondary', () => {
      if (sessions !== undefined) {
        sessions.remove();
        sessions = undefined;
      } else {
        sessions = item.appendChild(element('ul', 'sessions'));
        showSessions(username, sessions);
      }
    }));
    for (const draw of accountActions) draw(user, actions);
    // Taking ways in away (docs/contract/access.md "Administrators and two factors"): each a confirmed PATCH with false.
    const takeAway = (label: string, question: string, patch: JsonObject, done: string): void => {
      actions.appendChild(button(label, 'small secondary', () => {
        if (!window.confirm(question)) return;
        void callApi('PATCH', userPath(username), patch).then((answer) => settle(answer, done));
      }));
    };
    if (user['totp'] === true) {
      takeAway('Reset TOTP', `Remove the TOTP authenticator of ${username}? Their sessions end; they sign in with the password alone until they set up a new one.`, { totp: false }, `Reset the TOTP of ${username}.`);
    }
    if (passkeys > 0) takeAway('Remove passkeys', `Remove every passkey of ${username}? Their sessions end.`, { passkeys: false }, `Removed the passkeys of ${username}.`);
    if (tokens > 0) takeAway('Revoke tokens', `Revoke every machine token of ${username}?`, { tokens: false }, `Revoked the machine tokens of ${username}.`);
    actions.appendChild(button('Remove', 'small danger', () => {
      if (!window.confirm(`Remove ${username}? Their sessions and machine tokens end.`)) return;
      void callApi('DELETE', userPath(username)).then((answer) => settle(answer, `Removed ${username}.`));
    }));
  }
}

/** The open sessions of one account, each with a button that ends it. */
function showSessions(username: string, target: HTMLUListElement): void {
  const path = `${userPath(username)}/sessions`;
  target.appendChild(element('li', 'muted', 'Loading…'));
  void callApi('GET', path).then((answer) => {
    target.textContent = '';
    const sessions = listOf(answer)?.filter(isObject);
    if (sessions === undefined) {
      target.appendChild(element('li', 'message', problemOf(answer)));
      return;
    }
    const ended = (text: string) => (result: Answer): void => {
      if (!result.ok) return say(problem, problemOf(result));
      say(status, text, 'done');
      target.textContent = '';
      showSessions(username, target);
    };
    if (sessions.length === 0) target.appendChild(element('li', 'muted', 'No open sessions.'));
    if (sessions.length > 1) {
      const all = target.appendChild(element('li'));
      all.appendChild(element('div', 'grow muted', `${sessions.length} open sessions`));
      all.appendChild(button('End all', 'small danger', (event) => {
        if (!window.confirm(`End every session of ${username}? They sign in again everywhere.`)) return;
        const clicked = clickedButton(event);
        if (clicked !== null) clicked.disabled = true;
        void callApi('DELETE', path).then(ended(`Ended every session of ${username}.`));
      }));
    }
    for (const session of sessions) {
      target.appendChild(sessionEntry(session, button('End', 'small secondary', (event) => {
        const clicked = clickedButton(event);
        if (clicked !== null) clicked.disabled = true;
        void callApi('DELETE', `${path}/${encodeURIComponent(String(session['id']))}`).then(ended(`Ended a session of ${username}.`));
      }), when));
    }
  });
}

let counter = 0;
/** The level, groups, e-mail address and display name of one account, in a copy of the edit form (its labels tied to its own ids). */
function editForm(user: JsonObject): HTMLFormElement {
  const copy = byId('edit', HTMLTemplateElement).content.firstElementChild?.cloneNode(true);
  if (!(copy instanceof HTMLFormElement)) throw new Error('the edit template holds no form');
  const form = copy;
  const username = String(user['username']);
  const [level, groups, email, name] = ['level', 'groups', 'email', 'name'].map((field) => fieldOf(form, field)) as [HTMLSelectElement, HTMLInputElement, HTMLInputElement, HTMLInputElement];
  const labels = form.querySelectorAll('label');
  counter += 1;
  [level, groups, email, name].forEach((field, index) => {
    field.id = `${field.name}-${counter}`;
    const label = labels[index];
    if (label !== undefined) label.htmlFor = field.id;
  });
  const oldEmail = typeof user['email'] === 'string' ? user['email'] : '';
  const oldName = typeof user['name'] === 'string' ? user['name'] : '';
  level.value = isAdministrator(user['level']) ? 'ADMINISTRATOR' : 'USER';
  groups.value = (stringsOf(user['groups']) ?? []).join(', ');
  email.value = oldEmail;
  name.value = oldName;
  onSubmit(form, () => {
    const parsed = parseGroups(groups.value);
    if (parsed === undefined) return;
    const patch: Record<string, unknown> = { groups: parsed };
    // Sent only when changed: an empty field removes the value.
    if (email.value.trim() !== oldEmail) patch['email'] = email.value.trim() === '' ? null : email.value.trim();
    if (name.value.trim() !== oldName) patch['name'] = name.value.trim() === '' ? null : name.value.trim();
    // Only a real change of level is sent: it is a credential change (the account's sessions end).
    if ((level.value === 'ADMINISTRATOR') !== isAdministrator(user['level'])) patch['level'] = level.value;
    void callBusy(form, 'PATCH', userPath(username), patch).then((answer) => settle(answer, `Saved ${username}.`));
  });
  return form;
}

/** The list, then each account's details, a few requests at a time. */
function load(): Promise<void> {
  return callApi('GET', api('users')).then((answer) => {
    const entries = listOf(answer);
    if (!answer.ok || entries === null) return stop(answer);
    byId('content').hidden = false;
    byId('signed-in-links').hidden = false;
    const listed = entries.filter(isObject);
    const names = listed.map((entry) => String(entry['username']));
    const details: Array<JsonObject | undefined> = new Array<JsonObject | undefined>(names.length);
    let next = 0;
    let failed: Answer | undefined;
    const worker = (): Promise<void> => {
      if (next >= names.length || failed !== undefined) return Promise.resolve();
      const index = next;
      next += 1;
      return callApi('GET', userPath(names[index] ?? '')).then((one) => {
        const body = bodyOf(one);
        if (one.ok && body !== null) details[index] = body;
        else if (one.status === 401 || one.status === 403) failed = one;
        else details[index] = { username: names[index], level: listed[index]?.['level'] };
        return worker();
      });
    };
    const workers: Array<Promise<void>> = [];
    for (let i = 0; i < 6; i += 1) workers.push(worker());
    return Promise.all(workers).then(() => {
      if (failed !== undefined) stop(failed);
      else render(details.filter((detail): detail is JsonObject => detail !== undefined));
    });
  });
}

onSubmit(byId('add', HTMLFormElement), (form) => {
  const parsed = parseGroups(byId('add-groups', HTMLInputElement).value);
  if (parsed === undefined) return;
  const body = { username: byId('add-username', HTMLInputElement).value, password: byId('add-password', HTMLInputElement).value, level: byId('add-level', HTMLSelectElement).value, groups: parsed };
  void callBusy(form, 'POST', api('users'), body).then((answer) => {
    if (codeOf(answer) === 'USERNAME_TAKEN') return say(problem, 'That username is already taken.');
    if (answer.ok) form.reset();
    return settle(answer, answer.ok ? `Added ${String(bodyOf(answer)?.['username'])}.` : '');
  });
});

const page: UsersPage = {
  api, userPath, parseGroups, isAdministrator, when, plural, tag, problem, status,
  onAccountActions: (draw) => {
    accountActions.push(draw);
  },
};
startUsersSections(page);
void load();
