import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js';

describe('GET /api/auth/verify', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('reports the initial condition with configs when no user exists', async () => {
    const res = await server.request({ path: '/api/auth/verify' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { initialUser: true, configs: { authMethod: 'default', pollInterval: 2000 } });
  });

  it('ignores a bare cache-busting number in the query', async () => {
    const res = await server.request({ path: '/api/auth/verify?1763752800123' });
    assert.equal(res.status, 200);
  });

  describe('once users exist', () => {
    let adminToken: string;
    before(async () => {
      adminToken = await registerUser(server, 'verify-admin', { level: 10 });
    });

    it('answers the caller and level for a valid cookie', async () => {
      const res = await server.request({ path: '/api/auth/verify', token: adminToken });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { initialUser: false, username: 'verify-admin', level: 10, configs: { authMethod: 'default', pollInterval: 2000 } });
    });

    it('accepts the token in the ?token= query parameter', async () => {
      const res = await server.request({ path: `/api/auth/verify?token=${adminToken}` });
      assert.equal(res.status, 200);
      assert.equal((res.json as { username: string }).username, 'verify-admin');
    });

    it('answers 401 with exactly {configs} when there is no credential', async () => {
      const res = await server.request({ path: '/api/auth/verify' });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { configs: { authMethod: 'default', pollInterval: 2000 } });
    });

    it('uses the cookie and ignores an invalid query token when both are sent', async () => {
      const res = await server.request({ path: '/api/auth/verify?token=garbage.token.here', token: adminToken });
      assert.equal(res.status, 200);
    });

    it('refuses a valid query token when the cookie is invalid, because only the cookie counts', async () => {
      const res = await server.request({ path: `/api/auth/verify?token=${adminToken}`, token: 'not-a-token' });
      assert.equal(res.status, 401);
    });

    it('refuses a token once its seven days have passed', async () => {
      const token = await registerUser(server, 'verify-expiring', { level: 5, asToken: adminToken });
      server.clock.advanceSeconds(7 * 24 * 3600);
      try {
        const res = await server.request({ path: '/api/auth/verify', token });
        assert.equal(res.status, 401);
      } finally {
        server.clock.advanceSeconds(-7 * 24 * 3600);
      }
    });
  });
});
