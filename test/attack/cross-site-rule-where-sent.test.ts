// The cross-site rule's fallback (docs/contract/access.md "Cross-site rule"): without Sec-Fetch-Site,
// a change is refused when Origin names another host than the one the request was sent to. Over plain
// http a browser sends no Sec-Fetch-Site (not a secure context: Chromium sends Origin alone), and
// Flood is often served so (docs/contract/own-origin.md, --flood-url). With --public-url set, the rule
// compared Origin with --public-url's host, so a Flood web client on its own http origin could not sign
// in or manage users, nor a person sign in on an app's http site, though both rows answer there. The
// host compared is where the request was sent: Origin must be that same origin.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, createUser, type TestUser } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const HOME = 'auth.example.org';
const FLOOD = 'flood.lan:3000';
const APP = 'app.lan:8080';

describe('the cross-site rule without Sec-Fetch-Site, with --public-url and an http Flood origin', () => {
  let server: TestServer;
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    server = await startTestServer({
      GATEHOUSE_PUBLIC_URL: `https://${HOME}`,
      GATEHOUSE_FLOOD_URL: `http://${FLOOD}`,
      GATEHOUSE_TRUST_PROXY: '127.0.0.1',
    });
    admin = await createUser(server, undefined, { prefix: 'root', level: 10 });
    user = await createUser(server, admin.token, { prefix: 'flood' });
  });
  after(async () => server?.close());

  /** A browser's request over plain http from a page of `host`: Origin, no Sec-Fetch-Site. */
  const fromPageOf = (host: string, origin = `http://${host}`) => ({ host, origin });

  it('lets a Flood web client on its http origin sign in and manage users', async () => {
    const signIn = await server.request({
      method: 'POST', path: '/api/auth/authenticate', headers: fromPageOf(FLOOD), body: { username: user.username, password: user.password },
    });
    assert.equal(signIn.status, 200, signIn.text);
    assert.ok(signIn.cookieToken);
    const update = await server.request({
      method: 'PATCH', path: `/api/auth/users/${user.username}`, headers: fromPageOf(FLOOD), token: admin.token, body: { level: 5 },
    });
    assert.equal(update.status, 200, update.text);
    const signOut = await server.request({ path: '/api/auth/logout', headers: fromPageOf(FLOOD), token: signIn.cookieToken ?? '' });
    assert.equal(signOut.status, 200, signOut.text);
  });

  it('lets a person sign in on an app\'s http site, as the row answers there', async () => {
    const signIn = await server.request({
      method: 'POST', path: '/api/auth/authenticate', headers: fromPageOf(APP), body: { username: user.username, password: user.password },
    });
    assert.equal(signIn.status, 200, signIn.text);
  });

  it('still refuses an Origin that is not the origin the request was sent to, the home origin\'s included', async () => {
    for (const origin of ['http://evil.lan', `http://${APP}`, `https://${HOME}`, 'null']) {
      const signIn = await server.request({
        method: 'POST', path: '/api/auth/authenticate', headers: fromPageOf(FLOOD, origin), body: { username: user.username, password: user.password },
      });
      assertError(signIn, 403, 'CROSS_SITE_REQUEST');
      const update = await server.request({
        method: 'PATCH', path: `/api/auth/users/${user.username}`, headers: fromPageOf(FLOOD, origin), token: admin.token, body: { level: 5 },
      });
      assertError(update, 403, 'CROSS_SITE_REQUEST');
    }
  });

  it('keeps the home origin\'s own changes, and refuses another site\'s there', async () => {
    const own = await server.request({
      method: 'POST', path: '/api/auth/authenticate', headers: { host: HOME, origin: `https://${HOME}` }, body: { username: user.username, password: user.password },
    });
    assert.equal(own.status, 200, own.text);
    const token = own.cookieToken ?? assert.fail('the sign-in set no cookie');
    for (const origin of [`http://${FLOOD}`, `http://${APP}`]) {
      const other = await server.request({
        method: 'POST', path: '/api/auth/account/logout-everywhere', headers: { host: HOME, origin }, token, body: {},
      });
      assertError(other, 403, 'CROSS_SITE_REQUEST');
    }
  });
});
