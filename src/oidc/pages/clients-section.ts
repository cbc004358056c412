import type { PageSection } from '../../pages/shell.js';

// The users page's "Sign-in apps" section, there only when Gatehouse is an OpenID Connect provider:
// the administrators' view of POST/GET/DELETE /api/auth/clients. The secret of a new app is shown
// once, with the issuer and discovery URL to paste into the app; nothing here holds authority of its
// own: the API decides, the page shows.

export const CLIENTS_SECTION: PageSection = {
  body: `
<section id="apps-section">
<h2>Sign-in apps <span id="apps-count" class="muted"></span></h2>
<p class="muted">Apps that sign users in themselves (Grafana, Immich, Nextcloud…) sign them in with Gatehouse through OpenID Connect. Give the app the issuer below, a client id and, for a server app, its secret.</p>
<p id="apps-issuer" class="muted" hidden>Issuer: <code id="apps-issuer-url"></code></p>
<div id="app-created" class="message done" hidden>
<p><strong id="app-created-name"></strong> is registered. Copy what the app needs now: the secret is not shown again.</p>
<p>Client id: <code id="app-created-id" class="secret"></code></p>
<p id="app-created-secret-line">Client secret: <code id="app-created-secret" class="secret"></code></p>
</div>
<ul id="apps" class="items"></ul>
<p id="no-apps" class="muted" hidden>No sign-in apps yet.</p>
<form id="app-add" autocomplete="off">
<h2>Register an app</h2>
<label for="app-name">Name</label>
<input id="app-name" name="name" required maxlength="128" placeholder="Grafana">
<label for="app-redirects">Redirect URIs <span class="muted">(one per line, exactly as the app sends them)</span></label>
<textarea id="app-redirects" name="redirects" rows="2" required autocapitalize="none" spellcheck="false" placeholder="https://grafana.example.org/login/generic_oauth"></textarea>
<label for="app-kind">Kind</label>
<select id="app-kind" name="kind"><option value="confidential">Server app, with a secret</option><option value="public">Phone or browser app, no secret (PKCE)</option></select>
<label for="app-groups">Only for these groups <span class="muted">(comma-separated; empty: every account)</span></label>
<input id="app-groups" name="groups" autocapitalize="none" spellcheck="false" placeholder="family, media">
<label for="app-alg">id_token signature</label>
<select id="app-alg" name="alg"><option value="RS256">RS256 (what most apps expect)</option><option value="ES256">ES256</option></select>
<label for="app-logout">After sign-out, return to <span class="muted">(optional, one per line)</span></label>
<textarea id="app-logout" name="logout" rows="1" autocapitalize="none" spellcheck="false"></textarea>
<label class="check"><input id="app-mfa" name="mfa" type="checkbox"> Needs two factors (a code or a passkey)</label>
<button type="submit">Register app</button>
</form>
<template id="app-edit">
<form class="edit" autocomplete="off">
<label>Name</label>
<input name="name" required maxlength="128">
<label>Redirect URIs <span class="muted">(one per line)</span></label>
<textarea name="redirects" rows="2" required autocapitalize="none" spellcheck="false"></textarea>
<label>Only for these groups <span class="muted">(comma-separated; empty: every account)</span></label>
<input name="groups" autocapitalize="none" spellcheck="false">
<label>id_token signature</label>
<select name="alg"><option value="RS256">RS256</option><option value="ES256">ES256</option></select>
<label>After sign-out, return to <span class="muted">(one per line)</span></label>
<textarea name="logout" rows="1" autocapitalize="none" spellcheck="false"></textarea>
<label class="check"><input name="mfa" type="checkbox"> Needs two factors (a code or a passkey)</label>
<p class="muted">The client id and secret stay. Accounts that new groups or two factors leave out lose their refresh tokens for this app.</p>
<div class="actions"><button type="submit">Save</button></div>
</form>
</template>
</section>
`,
  style: `
textarea{display:block;width:100%;margin:0 0 1rem;padding:.55rem .65rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit;font-size:.9rem;resize:vertical;background:inherit;color:inherit}
label.check{display:flex;align-items:center;gap:.5rem;margin:0 0 1rem}
label.check input{width:auto;margin:0}
#app-add{margin-top:1rem}
.uris{font-size:.85rem;overflow-wrap:anywhere}
#apps .actions{margin-top:.4rem}
#apps select{margin-bottom:1rem}
@media (prefers-color-scheme:dark){textarea{border-color:#475063}}
`,
  // Uses the users page's helpers (api, tag, parseGroups, say, problem, status).
  script: `
(function () {
  var lines = function (text) { return text.split('\\n').map(function (line) { return line.trim(); }).filter(function (line) { return line !== ''; }); };
  var issuer = '';
  /** The ready sign-out URL for an app that takes one fixed URL: client_id and a registered return address. */
  var signOutUrl = function (client, uri) {
    return issuer + '/oidc/logout?' + new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: uri }).toString();
  };
  var editCount = 0;
  /** A copy of the edit form filled with the app as it is; saving sends every field (lists replace). */
  var editForm = function (client) {
    var form = byId('app-edit').content.firstElementChild.cloneNode(true);
    var fields = form.elements;
    editCount += 1;
    var labels = form.querySelectorAll('label');
    ['name', 'redirects', 'groups', 'alg', 'logout'].forEach(function (name, index) {
      fields[name].id = 'app-' + name + '-' + editCount;
      labels[index].htmlFor = fields[name].id;
    });
    fields.name.value = client.name;
    fields.redirects.value = client.redirectUris.join('\\n');
    fields.groups.value = (client.groups || []).join(', ');
    fields.alg.value = client.alg;
    fields.logout.value = (client.postLogoutRedirectUris || []).join('\\n');
    fields.mfa.checked = client.mfa === true;
    onSubmit(form, function () {
      var groups = parseGroups(fields.groups.value);
      if (groups === undefined) return;
      var body = {
        name: fields.name.value.trim(), redirectUris: lines(fields.redirects.value), groups: groups, mfa: fields.mfa.checked,
        alg: fields.alg.value, postLogoutRedirectUris: lines(fields.logout.value),
      };
      callBusy(form, 'PATCH', api('clients/' + encodeURIComponent(client.clientId)), body).then(function (answer) {
        var saved = bodyOf(answer);
        if (saved === null) return say(problem, problemOf(answer));
        say(problem, '');
        var ended = saved.endedRefreshTokens > 0 ? ' ' + plural(saved.endedRefreshTokens, 'sign-in') + ' no longer let in ended.' : '';
        say(status, 'Saved ' + saved.name + '.' + ended, 'done');
        byId('app-created').hidden = true;
        loadApps();
      });
    });
    return form;
  };
  var show = function (clients) {
    var list = byId('apps');
    list.textContent = '';
    byId('apps-count').textContent = '(' + clients.length + ')';
    byId('no-apps').hidden = clients.length > 0;
    clients.forEach(function (client) {
      var item = list.appendChild(element('li', 'user'));
      item.appendChild(element('div', 'user-head')).appendChild(element('span', 'user-name', client.name));
      var facts = item.appendChild(element('div', 'facts'));
      facts.appendChild(client.public ? tag('public (PKCE)') : tag('with a secret'));
      facts.appendChild(tag(client.alg));
      if (client.mfa) facts.appendChild(tag('two factors', 'admin'));
      (client.groups || []).forEach(function (name) { facts.appendChild(tag(name)); });
      if (!client.groups || client.groups.length === 0) facts.appendChild(tag('every account', 'off'));
      var id = item.appendChild(element('div', 'muted uris', 'Client id: '));
      id.appendChild(element('code', '', client.clientId));
      item.appendChild(element('div', 'muted uris', 'Redirects to ' + client.redirectUris.join(', ')));
      (client.postLogoutRedirectUris || []).forEach(function (uri) {
        var line = item.appendChild(element('div', 'muted uris', issuer ? 'Sign-out URL: ' : 'After sign-out, returns to ' + uri));
        if (issuer) line.appendChild(element('code', 'sign-out-url', signOutUrl(client, uri)));
      });
      var actions = item.appendChild(element('div', 'actions'));
      var form;
      actions.appendChild(button('Edit', 'small secondary', function () {
        if (form) form.hidden = !form.hidden;
        else form = item.appendChild(editForm(client));
      }));
      actions.appendChild(button('Remove', 'small danger', function () {
        if (!window.confirm('Remove ' + client.name + '? Its users are signed out of it when their tokens next come back, and it can no longer sign anyone in.')) return;
        callApi('DELETE', api('clients/' + encodeURIComponent(client.clientId))).then(function (answer) {
          if (!answer.ok) return say(problem, problemOf(answer));
          say(status, 'Removed ' + client.name + '.', 'done');
          byId('app-created').hidden = true;
          loadApps();
        });
      }));
    });
  };
  var loadApps = function () {
    return callApi('GET', api('clients')).then(function (answer) {
      // 401 and 403 are the users list's to explain.
      byId('apps-section').hidden = !answer.ok;
      if (answer.ok && Array.isArray(answer.body)) show(answer.body);
    });
  };
  var discovered = callApi('GET', '../.well-known/openid-configuration').then(function (answer) {
    var body = bodyOf(answer);
    if (body === null || typeof body.issuer !== 'string') return;
    issuer = body.issuer;
    byId('apps-issuer-url').textContent = body.issuer;
    byId('apps-issuer').hidden = false;
  });
  onSubmit(byId('app-add'), function (form) {
    var groups = parseGroups(form.elements.groups.value);
    if (groups === undefined) return;
    var isPublic = form.elements.kind.value === 'public';
    var body = {
      name: form.elements.name.value.trim(),
      redirectUris: lines(form.elements.redirects.value),
      public: isPublic,
      groups: groups,
      mfa: form.elements.mfa.checked,
      alg: form.elements.alg.value,
      postLogoutRedirectUris: lines(form.elements.logout.value),
    };
    callBusy(form, 'POST', api('clients'), body).then(function (answer) {
      var created = bodyOf(answer);
      if (created === null) return say(problem, problemOf(answer));
      say(problem, '');
      byId('app-created-name').textContent = body.name;
      byId('app-created-id').textContent = created.clientId;
      byId('app-created-secret').textContent = created.clientSecret || '';
      byId('app-created-secret-line').hidden = !created.clientSecret;
      byId('app-created').hidden = false;
      form.reset();
      loadApps();
    });
  });
  discovered.then(loadApps);
})();
`,
};
