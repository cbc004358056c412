// The account page's machine tokens section: make one with the password (shown once, optionally
// expiring), see when each was last used, revoke one with a second click.
import type { AccountPage } from './account-page.js';
import { bodyOf, byId, fieldOf, isObject, onSubmit } from './helpers.js';

export function initTokens(page: AccountPage): void {
  const message = byId('token-message');
  page.onAccount((account) => {
    const tokens = Array.isArray(account['tokens']) ? account['tokens'].filter(isObject) : [];
    page.fill(byId('token-list'), tokens.map((token) => {
      const name = String(token['name']);
      const expiresAt = token['expiresAt'];
      const expires = expiresAt === null || expiresAt === undefined ? 'never expires' : `expires ${page.when(expiresAt)}`;
      const details = `Created ${page.when(token['createdAt'])} · ${expires} · last used ${page.when(token['lastUsedAt'])}`;
      return page.item(name, details, 'Revoke', `Revoke token ${name}`, () => {
        byId('new-token').hidden = true;
        const path = `../api/auth/account/tokens/${encodeURIComponent(String(token['id']))}`;
        void page.change(null, message, 'DELETE', path, undefined, 'Token revoked.');
      });
    }), byId('no-tokens'));
  });

  onSubmit(byId('token-add', HTMLFormElement), (form) => {
    const body: Record<string, unknown> = { name: fieldOf(form, 'name').value.trim(), password: fieldOf(form, 'password').value };
    const days = fieldOf(form, 'days').value;
    if (days !== '') body['days'] = Number(days);
    byId('new-token').hidden = true;
    void page.change(form, message, 'POST', '../api/auth/account/tokens', body, '').then((answer) => {
      const token = bodyOf(answer)?.['token'];
      if (typeof token !== 'string') return;
      byId('token-value').textContent = token;
      byId('new-token').hidden = false;
    });
  });
}
