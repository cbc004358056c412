import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertTokenRefused, CLEARED_COOKIE, createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('GET {base}/logout (the sign-out address a browser opens)', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('clears the cookie and sends the browser to the sign-in page beside it, which says so, with no body', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: '/logout', token: user.token, headers: { accept: BROWSER } });
    assert.equal(res.status, 303, res.text);
    assert.equal(res.headers['location'], 'login?signed_out=1');
    assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.text, '');
  });

  it('ends the session by default: a copy of its token is refused elsewhere (its record ends)', async () => {
    const user = await createUser(server, root.token);
    await server.request({ path: '/logout', token: user.token });
    await assertTokenRefused(server, user.token);
  });

  it('still clears the cookie and redirects without a session or with a bad one', async () => {
    for (const token of [undefined, 'not.a.token']) {
      const res = await server.request({ path: '/logout', ...(token === undefined ? {} : { token }) });
      assert.equal(res.status, 303);
      assert.equal(res.headers['location'], 'login?signed_out=1');
      assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
    }
  });

  it('passes rd on to the sign-in page, encoded, and drops one that is too long or not visible ASCII', async () => {
    const rd = 'https://app.example/admin?x=1&y=2';
    assert.equal((await server.request({ path: `/logout?rd=${encodeURIComponent(rd)}` })).headers['location'], `login?signed_out=1&rd=${encodeURIComponent(rd)}`);
    for (const bad of ['a b', 'x\r\nSet-Cookie: jwt=evil', `/${'a'.repeat(2_100)}`, '']) {
      const res = await server.request({ path: `/logout?rd=${encodeURIComponent(bad)}` });
      assert.equal(res.headers['location'], 'login?signed_out=1', JSON.stringify(bad.slice(0, 40)));
      assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
    }
  });

  it('takes only GET', async () => {
    assert.equal((await server.request({ method: 'POST', path: '/logout', body: {} })).status, 405);
  });
});

describe('GET {base}/logout with --revoke-on-logout and a Secure cookie', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REVOKE_ON_LOGOUT: 'true', GATEHOUSE_SECURE_COOKIE: 'true' }));
  });
  after(() => server.close());

  it('revokes the token it signs out, and clears the cookie as Secure', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: '/logout', token: user.token });
    assert.equal(res.status, 303);
    assert.deepEqual(res.headers['set-cookie'], [`${CLEARED_COOKIE}; Secure`]);
    await assertTokenRefused(server, user.token);
  });
});

describe('GET {base}/logout under a base URI', () => {
  it('answers under the base, sends the browser to the sign-in page beside it and clears the cookie on the base path', async () => {
    const server = await startTestServer({ GATEHOUSE_BASE_URI: '/auth' });
    try {
      const res = await server.request({ path: '/auth/logout' });
      assert.equal(res.status, 303);
      assert.equal(new URL(String(res.headers['location']), 'http://x.invalid/auth/logout').pathname, '/auth/login');
      assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE.replace('Path=/', 'Path=/auth')]);
      assert.equal((await server.request({ path: '/logout' })).status, 404);
    } finally {
      await server.close();
    }
  });
});

describe('GET {base}/logout with --auth none', () => {
  it('does not exist: there is no sign-in to go back to', async () => {
    const server = await startTestServer({ GATEHOUSE_AUTH: 'none' });
    try {
      assert.equal((await server.request({ path: '/logout' })).status, 404);
    } finally {
      await server.close();
    }
  });
});
