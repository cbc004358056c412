// The join and reset pages as the server builds them, in Chromium (served-page.ts): the secret read
// from the fragment and taken off the address bar, a refused link, making the account, setting a
// new password.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildJoinPage } from '../../../src/invitations/join-page.js';
import { buildResetPage } from '../../../src/invitations/reset-page.js';
import { Chromium } from '../../helpers/chromium.js';
import { openServed, problemsOf, type ServedPage } from './served-page.js';

const sha256Base64 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');
const typeAndSubmit = (tab: ServedPage, formId: string, values: Record<string, string>): Promise<unknown> => tab.page.evaluate(`(() => {
  const values = ${JSON.stringify(values)};
  for (const id of Object.keys(values)) document.getElementById(id).value = values[id];
  document.getElementById(${JSON.stringify(formId)}).requestSubmit();
  return true;
})()`);

let browser: Chromium;
before(async () => {
  browser = await Chromium.launch();
});
after(() => browser.close());

describe('the join page in Chromium', () => {
  const page = (isPasskeyOffered: boolean) => buildJoinPage(sha256Base64, { minPasswordLength: 12, isPasskeyOffered });

  it('checks the secret from the fragment, takes it off the address bar, and makes the account with the name the link fixes', async () => {
    const tab = await openServed(browser, page(true), 'https://auth.example/gatehouse/join#s3cr%65t', {
      '../api/auth/join/check': { status: 200, body: { username: 'carol', expiresAt: Date.UTC(2030, 0, 2) } },
      '../api/auth/join': { status: 200, body: { username: 'carol' } },
    });
    await tab.calls(1);
    assert.deepEqual(tab.api()[0], { method: 'POST', path: '../api/auth/join/check', body: { secret: 's3cret' } });
    assert.equal(await tab.page.evaluate<string>('location.href'), 'https://auth.example/gatehouse/join');
    assert.equal(await tab.hidden('join'), false);
    assert.equal(await tab.text('invited-name'), 'carol');
    assert.equal(await tab.hidden('choose-name'), true);
    assert.match(await tab.text('expires'), /^This invitation works once, until .*2030/);
    await typeAndSubmit(tab, 'join', { password: 'a-long-password', repeat: 'another-password' });
    assert.equal(await tab.text('message'), 'The two passwords differ.');
    await typeAndSubmit(tab, 'join', { password: 'a-long-password', repeat: 'a-long-password' });
    await tab.calls(2);
    assert.deepEqual(tab.api()[1]?.body, { secret: 's3cret', password: 'a-long-password' });
    assert.equal(await tab.hidden('welcome'), false);
    assert.equal(await tab.text('welcome-name'), 'carol');
    assert.equal(await tab.hidden('passkey-offer'), false);
    assert.deepEqual(problemsOf(tab.page), []);
  });

  it('lets the person choose a name when the link fixes none, and offers no passkey when passkeys are off', async () => {
    const tab = await openServed(browser, page(false), 'https://auth.example/gatehouse/join#abc', {
      '../api/auth/join/check': { status: 200, body: { expiresAt: Date.UTC(2030, 0, 2) } },
      '../api/auth/join': { status: 200, body: { username: 'dave' } },
    });
    await tab.calls(1);
    assert.equal(await tab.hidden('choose-name'), false);
    await typeAndSubmit(tab, 'join', { username: 'dave', password: 'a-long-password', repeat: 'a-long-password' });
    await tab.calls(2);
    assert.deepEqual(tab.api()[1]?.body, { secret: 'abc', password: 'a-long-password', username: 'dave' });
    assert.equal(await tab.hidden('passkey-offer'), true);
    assert.equal(await tab.hidden('passkey-why'), true);
  });

  it('shows a refused link\'s message as text, nothing to fill in, and the way to sign in', async () => {
    const message = '<b>This invitation was withdrawn.</b>';
    const tab = await openServed(browser, page(true), 'https://auth.example/gatehouse/join#gone', {
      '../api/auth/join/check': { status: 401, body: { code: 'INVITATION_INVALID', message } },
    });
    await tab.calls(1);
    assert.equal(await tab.text('problem'), message);
    assert.equal(await tab.hidden('join'), true);
    assert.equal(await tab.hidden('loading'), true);
    assert.equal(await tab.hidden('refused-next'), false);
    const none = await openServed(browser, page(true), 'https://auth.example/gatehouse/join', {});
    assert.match(await none.text('problem'), /whole link was copied/);
    assert.deepEqual(none.api(), [], 'no secret: nothing asked');
  });

  it('says why no passkey can be made on a page that is not a secure context', async () => {
    const tab = await openServed(browser, page(true), 'http://auth.example/gatehouse/join#abc', {
      '../api/auth/join/check': { status: 200, body: { username: 'carol', expiresAt: Date.UTC(2030, 0, 2) } },
    });
    await tab.calls(1);
    assert.equal(await tab.hidden('passkey-offer'), true);
    assert.match(await tab.text('passkey-why'), /only over https .* The authenticator app works here\.$/);
  });
});

describe('the reset page in Chromium', () => {
  const built = buildResetPage(sha256Base64, { minPasswordLength: 12 });

  it('names the account, sets the new password with the secret, and leads to sign in', async () => {
    const tab = await openServed(browser, built, 'https://auth.example/gatehouse/reset#r-1', {
      '../api/auth/reset/check': { status: 200, body: { username: 'bob' } },
      '../api/auth/reset': { status: 200, body: { username: 'bob' } },
    });
    await tab.calls(1);
    assert.equal(await tab.page.evaluate<string>('location.href'), 'https://auth.example/gatehouse/reset');
    assert.equal(await tab.text('reset-name'), 'bob');
    assert.equal(await tab.page.evaluate<string>(`document.getElementById('username').value`), 'bob');
    await typeAndSubmit(tab, 'reset', { password: 'a-long-password', repeat: 'a-long-password' });
    await tab.calls(2);
    assert.deepEqual(tab.api()[1], { method: 'POST', path: '../api/auth/reset', body: { secret: 'r-1', password: 'a-long-password' } });
    assert.equal(await tab.hidden('done'), false);
    assert.equal(await tab.hidden('reset'), true);
    assert.deepEqual(problemsOf(tab.page), []);
  });

  it('after a reload, finds the secret again in the tab\'s history entry', async () => {
    const tab = await openServed(browser, built, 'https://auth.example/gatehouse/reset#r-2', {
      '../api/auth/reset/check': [{ status: 200, body: { username: 'bob' } }, { status: 200, body: { username: 'bob' } }],
    });
    await tab.calls(1);
    assert.equal(await tab.page.evaluate<string>('history.state.linkSecret'), 'r-2');
  });

  it('takes a spent link back to the refusal, and too many attempts with its own sentence', async () => {
    const tab = await openServed(browser, built, 'https://auth.example/gatehouse/reset#r-3', {
      '../api/auth/reset/check': { status: 200, body: { username: 'bob' } },
      '../api/auth/reset': { status: 429, body: { code: 'TOO_MANY_ATTEMPTS', message: 'm' } },
    });
    await tab.calls(1);
    await typeAndSubmit(tab, 'reset', { password: 'a-long-password', repeat: 'a-long-password' });
    await tab.calls(2);
    assert.equal(await tab.text('problem'), 'Too many attempts from here; try again later.');
    assert.equal(await tab.hidden('reset'), true);
    assert.equal(await tab.hidden('refused-next'), false);
  });
});
