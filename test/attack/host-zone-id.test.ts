// A Host, X-Forwarded-Host or Origin naming an IPv6 literal with a zone id ("[fe80::1%25eth0]",
// RFC 6874) is no host a browser sends, and Node's isIP takes it while its URL parser refuses it.
// Reading such a request's origin (docs/contract/own-origin.md "Origins") must refuse it as an app's
// or another site's, as any malformed host is, never answer 500 and log an error: any client can send
// one, without a session, at every row that judges the origin or the cross-site rule.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../helpers/api.js';
import { errorLogLines } from '../helpers/attack.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ZONED = ['[fe80::1%25eth0]', '[::1%25lo]', '[::1%lo]', '[fe80::1%25eth0]:3000'];

describe('a host or Origin with an IPv6 zone id', () => {
  let loopbackHome: TestServer;
  let publicHome: TestServer;

  before(async () => {
    loopbackHome = await startTestServer();
    publicHome = await startTestServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org', GATEHOUSE_TRUST_PROXY: '127.0.0.1' });
  });
  after(async () => {
    await loopbackHome?.close();
    await publicHome?.close();
  });

  it('is an app\'s host as Host: a home row answers 403 NOT_GATEHOUSE_ORIGIN, never 500', async () => {
    for (const server of [loopbackHome, publicHome]) {
      for (const host of ZONED) {
        const res = await server.request({ path: '/api/auth/account', headers: { host } });
        assertError(res, 403, 'NOT_GATEHOUSE_ORIGIN');
      }
    }
    assert.deepEqual(errorLogLines(loopbackHome), []);
    assert.deepEqual(errorLogLines(publicHome), []);
  });

  it('is an app\'s host as a trusted proxy\'s X-Forwarded-Host', async () => {
    for (const host of ZONED) {
      const res = await publicHome.request({ path: '/api/auth/users', headers: { host: 'auth.example.org', 'x-forwarded-host': host } });
      assertError(res, 403, 'NOT_GATEHOUSE_ORIGIN');
    }
    assert.deepEqual(errorLogLines(publicHome), []);
  });

  it('is another site as Origin: a change is refused 403 CROSS_SITE_REQUEST before any session, never 500', async () => {
    for (const server of [loopbackHome, publicHome]) {
      const host = server === publicHome ? 'auth.example.org' : `127.0.0.1:${server.port}`;
      for (const zoned of ZONED) {
        const origin = `http://${zoned}`;
        const signIn = await server.request({
          method: 'POST', path: '/api/auth/authenticate', headers: { host, origin }, body: { username: 'someone', password: 'whatever-it-is' },
        });
        assertError(signIn, 403, 'CROSS_SITE_REQUEST');
        const everywhere = await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', headers: { host, origin }, body: {} });
        assertError(everywhere, 403, 'CROSS_SITE_REQUEST');
      }
    }
    assert.deepEqual(errorLogLines(loopbackHome), []);
    assert.deepEqual(errorLogLines(publicHome), []);
  });
});
