// The users page's sign-in apps, edited as an administrator does it, in Chromium through Caddy: the
// Edit form filled with the app as it is, saved with new addresses, groups, alg and two factors; the
// app keeps its id, and its entry shows the ready sign-out URL. At desktop and phone width.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startStand, type Stand } from './behind-caddy.js';
import { saveScreenshots, unexpectedProblems } from './screens.js';

describe('editing a sign-in app on the users page, in Chromium through Caddy', () => {
  let stand: Stand;
  before(async () => {
    stand = await startStand();
  });
  after(() => stand?.close());

  it('opens the app in an Edit form, saves the changes, keeps the id and shows the sign-out URL', async () => {
    const made = await stand.api('POST', '/api/auth/clients', { name: 'Grafana', redirectUris: ['https://grafana.example.org/login/generic_oauth'] });
    assert.equal(made.status, 200, made.text);
    const { clientId } = made.json as { clientId: string };
    const page = await stand.signedIn('/gatehouse/users');
    await page.waitFor(`document.querySelectorAll('#apps li').length === 1`);
    await page.evaluate(`(() => { Array.from(document.querySelectorAll('#apps button')).find((b) => b.textContent === 'Edit').click(); return true; })()`);
    await page.waitFor(`document.querySelector('#apps form.edit') !== null`);
    assert.deepEqual(await page.evaluate(`(() => {
      const fields = document.querySelector('#apps form.edit').elements;
      return [fields.name.value, fields.redirects.value, fields.groups.value, fields.alg.value, fields.mfa.checked];
    })()`), ['Grafana', 'https://grafana.example.org/login/generic_oauth', '', 'RS256', false]);
    await saveScreenshots(page, 'oidc-users-app-edit');
    await page.evaluate(`(() => {
      const form = document.querySelector('#apps form.edit');
      form.elements.name.value = 'Grafana prod';
      form.elements.redirects.value = 'https://grafana.example.org/login/generic_oauth\\nhttps://grafana2.example.org/login/generic_oauth';
      form.elements.logout.value = 'https://grafana.example.org/login';
      form.elements.groups.value = 'ops';
      form.elements.alg.value = 'ES256';
      form.elements.mfa.checked = true;
      form.requestSubmit();
      return true;
    })()`);
    await page.waitFor(`document.getElementById('status').textContent.startsWith('Saved Grafana prod.')`);
    const listed = ((await stand.api('GET', '/api/auth/clients')).json as Array<Record<string, unknown>>)[0];
    assert.deepEqual(
      [listed?.['clientId'], listed?.['name'], listed?.['redirectUris'], listed?.['postLogoutRedirectUris'], listed?.['groups'], listed?.['alg'], listed?.['mfa']],
      [clientId, 'Grafana prod', ['https://grafana.example.org/login/generic_oauth', 'https://grafana2.example.org/login/generic_oauth'],
        ['https://grafana.example.org/login'], ['ops'], 'ES256', true],
    );
    const expected = `${stand.issuer}/oidc/logout?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: 'https://grafana.example.org/login' }).toString()}`;
    await page.waitFor(`(document.querySelector('#apps .sign-out-url') || {}).textContent === ${JSON.stringify(expected)}`);
    await saveScreenshots(page, 'oidc-users-app-saved');
    // A bad address: the API's message, nothing changed.
    await page.evaluate(`(() => { Array.from(document.querySelectorAll('#apps button')).find((b) => b.textContent === 'Edit').click(); return true; })()`);
    await page.waitFor(`document.querySelector('#apps form.edit') !== null`);
    await page.evaluate(`(() => {
      const form = document.querySelector('#apps form.edit');
      form.elements.redirects.value = 'http://evil.example/cb';
      form.requestSubmit();
      return true;
    })()`);
    assert.match(await page.waitFor<string>(`(() => { const m = document.getElementById('problem'); return m.hidden ? '' : m.textContent; })()`), /https/);
    const unchanged = ((await stand.api('GET', '/api/auth/clients')).json as Array<Record<string, unknown>>)[0];
    assert.equal((unchanged?.['redirectUris'] as string[]).length, 2);
    assert.deepEqual(unexpectedProblems(page, [400]), []);
  });
});
