// The account page's "Name and e-mail" section (oidc/pages/profile-section.ts has its markup): what
// apps signed in through Gatehouse receive as `name` and `email`. An empty field removes the value.
import { onAccountPage } from '../../../pages/browser/account-page.js';
import { byId, fieldOf, onSubmit } from '../../../pages/browser/helpers.js';

onAccountPage((page) => {
  const form = byId('profile-form', HTMLFormElement);
  const name = fieldOf(form, 'name');
  const email = fieldOf(form, 'email');
  page.onAccount((account) => {
    name.value = typeof account['name'] === 'string' ? account['name'] : '';
    email.value = typeof account['email'] === 'string' ? account['email'] : '';
    byId('profile-verified').hidden = account['emailVerified'] !== true;
  });
  onSubmit(form, () => {
    const body = { name: name.value.trim() === '' ? null : name.value.trim(), email: email.value.trim() === '' ? null : email.value.trim() };
    void page.change(form, byId('profile-message'), 'PATCH', '../api/auth/account', body, 'Saved.');
  });
});
