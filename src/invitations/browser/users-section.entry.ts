// The invitations' part of the users page (invitations/users-page-section.ts has its markup): make
// an invitation (a fixed or a chosen name, level, groups, days); on each account a "Reset link"
// button; and the open links, both kinds, each with a "Withdraw" button, which asks once (as the
// page's other removals do) and takes the link off the page if it is the one shown. The links are
// shown once, to copy and send; the page keeps none.
import { bodyOf, button, byId, callApi, callBusy, clickedButton, element, isObject, listOf, onSubmit, problemOf, say } from '../../pages/browser/helpers.js';
import { onUsersPage } from '../../pages/browser/users-page.js';

onUsersPage((page) => {
  const { api, problem, status } = page;
  // The id of the link on the page: withdrawing that link takes it off the page too.
  let shownLink: string | null = null;
  const showLink = (text: string, url: string, linkId: string): void => {
    shownLink = linkId;
    byId('new-link-text').textContent = text;
    byId('new-link-url').textContent = url;
    byId('new-link').hidden = false;
    byId('new-link').scrollIntoView({ block: 'nearest' });
  };
  const loadInvitations = (): Promise<void> => callApi('GET', api('invites')).then((answer) => {
    const links = listOf(answer)?.filter(isObject);
    if (links === undefined) return;
    const list = byId('invitation-list');
    list.textContent = '';
    byId('no-invitations').hidden = links.length > 0;
    for (const link of links) {
      const li = list.appendChild(element('li'));
      const text = li.appendChild(element('div', 'grow'));
      const isReset = link['kind'] === 'reset';
      const name = typeof link['username'] === 'string' ? link['username'] : 'a name of their choice';
      const what = isReset ? `the reset link for ${name}` : `the invitation for ${name}`;
      text.appendChild(element('strong', '', name));
      const groups = Array.isArray(link['groups']) && link['groups'].length > 0 ? ` · ${link['groups'].join(', ')}` : '';
      const kind = isReset ? 'Reset link' : `Invitation · ${page.isAdministrator(link['level']) ? 'Administrator' : 'User'}${groups}`;
      text.appendChild(element('div', 'muted', `${kind} · until ${page.when(link['expiresAt'])} · by ${String(link['createdBy'])}`));
      li.appendChild(button('Withdraw', 'small secondary', (event) => {
        if (!window.confirm(`Withdraw ${what}? Its link stops working at once.`)) return;
        const clicked = clickedButton(event);
        if (clicked !== null) clicked.disabled = true;
        void callApi('DELETE', api(`invites/${encodeURIComponent(String(link['id']))}`)).then((withdrawn) => {
          if (!withdrawn.ok) {
            if (clicked !== null) clicked.disabled = false;
            return say(problem, problemOf(withdrawn));
          }
          if (shownLink === link['id']) byId('new-link').hidden = true;
          say(status, `Withdrew ${what}.`, 'done');
          return loadInvitations();
        });
      }));
    }
  });
  onSubmit(byId('invite', HTMLFormElement), (form) => {
    const groups = page.parseGroups(byId('invite-groups', HTMLInputElement).value);
    if (groups === undefined) return;
    const body: Record<string, unknown> = { level: byId('invite-level', HTMLSelectElement).value, groups, days: Number(byId('invite-days', HTMLInputElement).value) };
    const username = byId('invite-username', HTMLInputElement).value;
    if (username !== '') body['username'] = username;
    byId('new-link').hidden = true;
    void callBusy(form, 'POST', api('invites'), body).then((answer) => {
      const made = bodyOf(answer);
      if (made === null) return say(problem, problemOf(answer));
      say(problem, '');
      form.reset();
      showLink(`Send this link to ${username === '' ? 'the person you invite' : username}. It works once, until ${page.when(made['expiresAt'])}.`, String(made['url']), String(made['id']));
      return loadInvitations();
    });
  });
  page.onAccountActions((user, actions) => {
    const username = String(user['username']);
    actions.appendChild(button('Reset link', 'small secondary', (event) => {
      const clicked = clickedButton(event);
      if (clicked !== null) clicked.disabled = true;
      void callApi('POST', `${page.userPath(username)}/reset-link`, {}).then((answer) => {
        if (clicked !== null) clicked.disabled = false;
        const made = bodyOf(answer);
        if (made === null) return say(problem, problemOf(answer));
        say(problem, '');
        showLink(`Send this link to ${username} to set a new password. It works once, until ${page.when(made['expiresAt'])}; every session of the account ends when it is used.`, String(made['url']), String(made['id']));
        return loadInvitations();
      });
    }));
  });
  void loadInvitations();
});
