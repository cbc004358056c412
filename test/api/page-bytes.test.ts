// Gatehouse's pages write nothing from the request: the sign-in, account and users pages and the
// sign-out page another site's navigation gets are the same bytes whoever asks, however (the 403
// page at the gate, which names the account, is test/unit/forbidden-page.test.ts's).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const HOSTILE_QUERY = '?rd=%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&mfa=%22%3E%3Cb%3E&login=%3Ci%3E';
const HOSTILE_HEADERS = {
  'user-agent': '<script>alert(1)</script>',
  'accept-language': '"><b>x</b>',
  'x-forwarded-host': 'evil.example',
  referer: 'https://evil.example/<b>',
};

describe('pages are the same bytes for every request', () => {
  let server: TestServer;
  let root: TestUser;
  let user: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
    user = await createUser(server, root.token);
  });
  after(() => server.close());

  const same = (first: TestResponse, other: TestResponse, label: string): void => {
    assert.equal(other.status, 200, label);
    assert.equal(other.text, first.text, label);
    assert.equal(other.headers['content-security-policy'], first.headers['content-security-policy'], label);
  };

  for (const path of ['/login', '/gatehouse/account', '/gatehouse/users']) {
    it(`${path}: without a session, with a user's or an administrator's, and with a hostile query and headers`, async () => {
      const first = await server.request({ path, headers: { accept: 'text/html' } });
      assert.equal(first.status, 200);
      same(first, await server.request({ path, token: user.token }), 'a user');
      same(first, await server.request({ path, token: root.token }), 'an administrator');
      same(first, await server.request({ path: `${path}${HOSTILE_QUERY}`, headers: HOSTILE_HEADERS, token: user.token }), 'hostile');
    });
  }

  it('the sign-out page another site\'s navigation gets: with or without a session, rd or hostile headers', async () => {
    const crossSite = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', accept: 'text/html' };
    const first = await server.request({ path: '/logout', headers: crossSite });
    assert.equal(first.status, 200);
    assert.match(first.text, /id="sign-out"/);
    same(first, await server.request({ path: '/logout', headers: crossSite, token: user.token }), 'a user');
    same(first, await server.request({ path: `/logout${HOSTILE_QUERY}`, headers: { ...crossSite, ...HOSTILE_HEADERS, 'sec-fetch-site': 'same-site' }, token: user.token }), 'hostile');
  });
});
