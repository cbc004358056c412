import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import type { TestServer } from '../helpers/server.js';

describe('--cookie-domain', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_COOKIE_DOMAIN: 'Example.org' }));
  });
  after(() => server.close());

  it('puts Domain on the session cookie of a login', async () => {
    const user = await createUser(server, root.token);
    const res = await login(server, user.username, user.password);
    assert.equal(res.status, 200);
    const [line] = res.headers['set-cookie'] ?? [];
    assert.match(line ?? '', /^jwt=[^;]+; Path=\/; Domain=example\.org; Max-Age=604800; /);
  });

  it('puts the same Domain on the cookie of a registration', async () => {
    const res = await server.request({
      method: 'POST',
      path: '/api/auth/register',
      token: root.token,
      body: { username: 'cookie-domain-new', password: 'pw-pw-pw', client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' }, level: 5 },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers['set-cookie']?.[0] ?? '', /; Domain=example\.org; /);
  });

  it('puts the same Domain on the cookie that logout clears, so the shared cookie really goes', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: '/api/auth/logout', token: user.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers['set-cookie'], ['jwt=; Path=/; Domain=example.org; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict']);
  });
});
