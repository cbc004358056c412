// An administrator sets an account's display name and e-mail address on the users page, in Chromium
// through Caddy: the account's Edit form holds them beside the level and groups, the list shows
// them, and a second save with an empty field removes one. At desktop and phone width.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startStand, type Stand } from './behind-caddy.js';
import { saveScreenshots, unexpectedProblems } from './screens.js';

describe('an account\'s name and e-mail address on the users page, in Chromium through Caddy', () => {
  let stand: Stand;
  before(async () => {
    stand = await startStand();
  });
  after(() => stand?.close());

  it('sets them in the account\'s Edit form, shows them in the list, and removes one with an empty field', async () => {
    assert.equal((await stand.api('POST', '/api/auth/users', { username: 'ada', password: 'ada-password-3x', level: 'USER', groups: ['media'] })).status, 200);
    const page = await stand.signedIn('/gatehouse/users');
    const editOf = (name: string) => `(() => {
      const item = Array.from(document.querySelectorAll('#users li.user')).find((li) => li.querySelector('.user-name').textContent === ${JSON.stringify(name)});
      Array.from(item.querySelectorAll('button')).find((b) => b.textContent === 'Edit').click();
      return true;
    })()`;
    await page.waitFor(`document.querySelectorAll('#users li.user').length === 2`);
    await page.evaluate(editOf('ada'));
    await page.waitFor(`document.querySelector('#users form.edit') !== null`);
    await page.evaluate(`(() => {
      const form = document.querySelector('#users form.edit');
      form.elements.name.value = 'Ada Lovelace';
      form.elements.email.value = 'ada@example.org';
      return true;
    })()`);
    await saveScreenshots(page, 'users-edit-profile');
    await page.evaluate(`(document.querySelector('#users form.edit').requestSubmit(), true)`);
    await page.waitFor(`document.getElementById('status').textContent === 'Saved ada.'`);
    const stored = (await stand.api('GET', '/api/auth/users/ada')).json as Record<string, unknown>;
    assert.deepEqual([stored['name'], stored['email'], stored['groups']], ['Ada Lovelace', 'ada@example.org', ['media']]);
    // The list shows who the account is, not only its username.
    await page.waitFor(`(() => {
      const item = Array.from(document.querySelectorAll('#users li.user')).find((li) => li.querySelector('.user-name').textContent === 'ada');
      return item !== undefined && item.querySelector('.display-name') !== null && item.querySelector('.display-name').textContent === 'Ada Lovelace'
        && item.textContent.includes('ada@example.org');
    })()`);
    await saveScreenshots(page, 'users-profile-listed');
    // A name the API refuses (a script can set what the field's maxlength would stop): its message,
    // nothing saved; then an empty field removes the address.
    await page.evaluate(editOf('ada'));
    await page.waitFor(`document.querySelector('#users form.edit') !== null`);
    await page.evaluate(`(() => {
      const form = document.querySelector('#users form.edit');
      form.elements.name.value = 'x'.repeat(129);
      form.requestSubmit();
      return true;
    })()`);
    await page.waitFor(`!document.getElementById('problem').hidden`);
    assert.equal(((await stand.api('GET', '/api/auth/users/ada')).json as Record<string, unknown>)['name'], 'Ada Lovelace');
    await page.evaluate(`(() => {
      const form = document.querySelector('#users form.edit');
      form.elements.name.value = 'Ada Lovelace';
      form.elements.email.value = '';
      form.requestSubmit();
      return true;
    })()`);
    await page.waitFor(`document.getElementById('status').textContent === 'Saved ada.' && document.getElementById('problem').hidden`);
    const after = (await stand.api('GET', '/api/auth/users/ada')).json as Record<string, unknown>;
    assert.deepEqual([after['name'], after['email']], ['Ada Lovelace', undefined]);
    assert.deepEqual(unexpectedProblems(page, [400]), []);
  });
});
