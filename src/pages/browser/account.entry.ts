// The account page's script ({base}/gatehouse/account; pages/account.ts has its markup): everything
// it shows comes from GET ../api/auth/account and every change is a JSON call. Its own section
// (machine tokens) is set up here; a feature's section (authenticator app, passkeys, name and e-mail,
// sessions) is a script of its own (account-page.ts).
import { initTokens } from './account-tokens.js';
import { startSections, type AccountPage } from './account-page.js';
import { bodyOf, button, byId, callApi, callBusy, element, fieldOf, onSubmit, pageData, problemOf, say, type Answer, type JsonObject } from './helpers.js';

let state: JsonObject | null = null;
const draws: Array<(account: JsonObject) => void> = [];
const loads: Array<() => Promise<void>> = [];

const toSignIn = (): void => {
  location.replace(`../login?rd=${encodeURIComponent(location.href)}`);
};

function when(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'never';
  const date = new Date(typeof value === 'number' && value < 1e11 ? value * 1000 : typeof value === 'number' || typeof value === 'string' ? value : NaN);
  return isNaN(date.getTime()) ? String(value) : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

function fill(parent: HTMLElement, entries: readonly HTMLElement[], empty?: HTMLElement): void {
  parent.textContent = '';
  for (const entry of entries) parent.appendChild(entry);
  if (empty !== undefined) empty.hidden = entries.length > 0;
}

// A second click confirms (no dialog: a removal is one deliberate step more, not a pop-up).
function onSecondClick(target: HTMLButtonElement, armedText: string, action: () => void): void {
  target.addEventListener('click', () => {
    if (target.dataset['armed'] !== '1') {
      target.dataset['armed'] = '1';
      target.textContent = armedText;
      target.classList.replace('secondary', 'danger');
      return;
    }
    target.disabled = true;
    action();
  });
}

function item(title: string, details: string, verb: string, label: string, onRemove: () => void): HTMLElement {
  const li = element('li');
  const text = li.appendChild(element('div', 'grow'));
  text.appendChild(element('strong', '', title));
  text.appendChild(element('div', 'muted', details));
  const remove = li.appendChild(button(verb, 'secondary small'));
  remove.setAttribute('aria-label', label);
  onSecondClick(remove, `Click again to ${verb.toLowerCase()}`, onRemove);
  return li;
}

// The join page links to a section: once drawn, go there (the browser could not: it was hidden).
let isSectionShown = false;
function showAskedSection(): void {
  if (isSectionShown) return;
  isSectionShown = true;
  const section = /^#[a-z-]+$/.test(location.hash) ? document.querySelector(location.hash) : null;
  if (section === null) return;
  section.scrollIntoView();
  const field = section.querySelector<HTMLElement>('input:not([hidden]):not([disabled])');
  if (field !== null) field.focus();
}

/** Draws the account from GET ../api/auth/account. */
function render(account: JsonObject): void {
  state = account;
  byId('who').textContent = String(account['username']);
  // Administrators manage every account on the users page (whose API decides; the link only leads there).
  byId('to-users').hidden = !(account['level'] === 10 || account['level'] === 'ADMINISTRATOR');
  fieldOf(byId('password-form', HTMLFormElement), 'username').value = String(account['username']);
  for (const draw of draws) draw(account);
  byId('loading').hidden = true;
  byId('account').hidden = false;
}

function reload(): Promise<void> {
  return callApi('GET', '../api/auth/account').then((answer) => {
    if (answer.status === 401) return toSignIn();
    const account = bodyOf(answer);
    if (account === null) {
      byId('loading').hidden = true;
      return say(byId('status'), problemOf(answer));
    }
    render(account);
    return Promise.all(loads.map((load) => load())).then(showAskedSection);
  });
}

function send(form: HTMLFormElement | null, message: HTMLElement, method: string, path: string, body?: unknown): Promise<Answer> {
  say(message, '');
  return callBusy(form, method, path, body).then((answer) => {
    if (answer.status === 401) toSignIn();
    return answer;
  });
}

function change(form: HTMLFormElement | null, message: HTMLElement, method: string, path: string, body: unknown, doneText: string): Promise<Answer> {
  return send(form, message, method, path, body).then((answer) => {
    if (answer.status === 401) return answer;
    if (answer.ok && form !== null) form.reset();
    return reload().then(() => {
      if (!answer.ok) say(message, problemOf(answer));
      else if (doneText !== '') say(message, doneText, 'done');
      return answer;
    });
  });
}

const page: AccountPage = {
  onAccount: (draw) => {
    draws.push(draw);
  },
  afterAccount: (load) => {
    loads.push(load);
  },
  account: () => state,
  reload,
  send,
  change,
  toSignIn,
  when,
  fill,
  item,
  onSecondClick,
  passkeysOffered: pageData()['passkeysOffered'] !== false,
};

onSubmit(byId('password-form', HTMLFormElement), (form) => {
  const message = byId('password-message');
  const newPassword = fieldOf(form, 'newPassword').value;
  if (newPassword !== fieldOf(form, 'repeat').value) {
    say(message, 'The new password and its repetition differ.');
    return;
  }
  const body = { password: fieldOf(form, 'password').value, newPassword };
  void change(form, message, 'POST', '../api/auth/account/password', body, 'Password changed. Every other session of this account has ended.');
});

initTokens(page);
startSections(page);
void reload();
