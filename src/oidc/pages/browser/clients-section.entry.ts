// The users page's "Sign-in apps" section (oidc/pages/clients-section.ts has its markup): the
// administrators' view of POST/GET/PATCH/DELETE /api/auth/clients. The secret of a new app is shown
// once, with the issuer to paste into the app; nothing here holds authority of its own.
import { bodyOf, button, byId, callApi, callBusy, checkboxOf, element, fieldOf, isObject, listOf, onSubmit, problemOf, say, type JsonObject } from '../../../pages/browser/helpers.js';
import { onUsersPage } from '../../../pages/browser/users-page.js';

const lines = (text: string): string[] => text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
const stringsOf = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

onUsersPage((page) => {
  const { api, problem, status, tag } = page;
  let issuer = '';
  /** The ready sign-out URL for an app that takes one fixed URL: client_id and a registered return address. */
  const signOutUrl = (clientId: string, uri: string): string =>
    `${issuer}/oidc/logout?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: uri }).toString()}`;
  let editCount = 0;
  /** A copy of the edit form filled with the app as it is; saving sends every field (lists replace). */
  const editForm = (client: JsonObject): HTMLFormElement => {
    const copy = byId('app-edit', HTMLTemplateElement).content.firstElementChild?.cloneNode(true);
    if (!(copy instanceof HTMLFormElement)) throw new Error('the app-edit template holds no form');
    const form = copy;
    const clientId = String(client['clientId']);
    editCount += 1;
    const labels = form.querySelectorAll('label');
    ['name', 'redirects', 'groups', 'alg', 'logout'].forEach((name, index) => {
      const field = fieldOf(form, name);
      field.id = `app-${name}-${editCount}`;
      const label = labels[index];
      if (label !== undefined) label.htmlFor = field.id;
    });
    fieldOf(form, 'name').value = String(client['name']);
    fieldOf(form, 'redirects').value = stringsOf(client['redirectUris']).join('\n');
    fieldOf(form, 'groups').value = stringsOf(client['groups']).join(', ');
    fieldOf(form, 'alg').value = String(client['alg']);
    fieldOf(form, 'logout').value = stringsOf(client['postLogoutRedirectUris']).join('\n');
    checkboxOf(form, 'mfa').checked = client['mfa'] === true;
    onSubmit(form, () => {
      const groups = page.parseGroups(fieldOf(form, 'groups').value);
      if (groups === undefined) return;
      const body = {
        name: fieldOf(form, 'name').value.trim(), redirectUris: lines(fieldOf(form, 'redirects').value), groups, mfa: checkboxOf(form, 'mfa').checked,
        alg: fieldOf(form, 'alg').value, postLogoutRedirectUris: lines(fieldOf(form, 'logout').value),
      };
      void callBusy(form, 'PATCH', api(`clients/${encodeURIComponent(clientId)}`), body).then((answer) => {
        const saved = bodyOf(answer);
        if (saved === null) return say(problem, problemOf(answer));
        say(problem, '');
        const count = saved['endedRefreshTokens'];
        const ended = typeof count === 'number' && count > 0 ? ` ${page.plural(count, 'sign-in')} no longer let in ended.` : '';
        say(status, `Saved ${String(saved['name'])}.${ended}`, 'done');
        byId('app-created').hidden = true;
        return loadApps();
      });
    });
    return form;
  };
  const show = (clients: readonly JsonObject[]): void => {
    const list = byId('apps');
    list.textContent = '';
    byId('apps-count').textContent = `(${clients.length})`;
    byId('no-apps').hidden = clients.length > 0;
    for (const client of clients) {
      const name = String(client['name']);
      const clientId = String(client['clientId']);
      const groups = stringsOf(client['groups']);
      const item = list.appendChild(element('li', 'user'));
      item.appendChild(element('div', 'user-head')).appendChild(element('span', 'user-name', name));
      const facts = item.appendChild(element('div', 'facts'));
      facts.appendChild(client['public'] === true ? tag('public (PKCE)') : tag('with a secret'));
      facts.appendChild(tag(String(client['alg'])));
      if (client['mfa'] === true) facts.appendChild(tag('two factors', 'admin'));
      for (const group of groups) facts.appendChild(tag(group));
      if (groups.length === 0) facts.appendChild(tag('every account', 'off'));
      const id = item.appendChild(element('div', 'muted uris', 'Client id: '));
      id.appendChild(element('code', '', clientId));
      item.appendChild(element('div', 'muted uris', `Redirects to ${stringsOf(client['redirectUris']).join(', ')}`));
      for (const uri of stringsOf(client['postLogoutRedirectUris'])) {
        const line = item.appendChild(element('div', 'muted uris', issuer !== '' ? 'Sign-out URL: ' : `After sign-out, returns to ${uri}`));
        if (issuer !== '') line.appendChild(element('code', 'sign-out-url', signOutUrl(clientId, uri)));
      }
      const actions = item.appendChild(element('div', 'actions'));
      let form: HTMLFormElement | undefined;
      actions.appendChild(button('Edit', 'small secondary', () => {
        if (form !== undefined) form.hidden = !form.hidden;
        else form = item.appendChild(editForm(client));
      }));
      actions.appendChild(button('Remove', 'small danger', () => {
        if (!window.confirm(`Remove ${name}? Its users are signed out of it when their tokens next come back, and it can no longer sign anyone in.`)) return;
        void callApi('DELETE', api(`clients/${encodeURIComponent(clientId)}`)).then((answer) => {
          if (!answer.ok) return say(problem, problemOf(answer));
          say(status, `Removed ${name}.`, 'done');
          byId('app-created').hidden = true;
          return loadApps();
        });
      }));
    }
  };
  const loadApps = (): Promise<void> => callApi('GET', api('clients')).then((answer) => {
    // 401 and 403 are the users list's to explain.
    byId('apps-section').hidden = !answer.ok;
    const clients = listOf(answer);
    if (answer.ok && clients !== null) show(clients.filter(isObject));
  });
  const discovered = callApi('GET', '../.well-known/openid-configuration').then((answer) => {
    const found = bodyOf(answer)?.['issuer'];
    if (typeof found !== 'string') return;
    issuer = found;
    byId('apps-issuer-url').textContent = found;
    byId('apps-issuer').hidden = false;
  });
  onSubmit(byId('app-add', HTMLFormElement), (form) => {
    const groups = page.parseGroups(fieldOf(form, 'groups').value);
    if (groups === undefined) return;
    const body = {
      name: fieldOf(form, 'name').value.trim(),
      redirectUris: lines(fieldOf(form, 'redirects').value),
      public: fieldOf(form, 'kind').value === 'public',
      groups,
      mfa: checkboxOf(form, 'mfa').checked,
      alg: fieldOf(form, 'alg').value,
      postLogoutRedirectUris: lines(fieldOf(form, 'logout').value),
    };
    void callBusy(form, 'POST', api('clients'), body).then((answer) => {
      const created = bodyOf(answer);
      if (created === null) return say(problem, problemOf(answer));
      say(problem, '');
      const secret = typeof created['clientSecret'] === 'string' ? created['clientSecret'] : '';
      byId('app-created-name').textContent = body.name;
      byId('app-created-id').textContent = String(created['clientId']);
      byId('app-created-secret').textContent = secret;
      byId('app-created-secret-line').hidden = secret === '';
      byId('app-created').hidden = false;
      form.reset();
      return loadApps();
    });
  });
  void discovered.then(loadApps);
});
