import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertError, CLEARED_COOKIE, createUser, login, uniqueName, verify, withServer } from '../helpers/api.js';
import { CLIENT_SETTINGS } from '../helpers/server.js';

const NONE_CONFIGS = { authMethod: 'none', pollInterval: 2000 };

describe('authMethod "none"', () => {
  const settings = { GATEHOUSE_AUTH: 'none' };

  it('answers verify as the built-in administrator _config without credentials', () =>
    withServer(async (server) => {
      const res = await verify(server, undefined);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { initialUser: false, username: '_config', level: 10, configs: NONE_CONFIGS });
    }, settings));

  it('answers authenticate with the built-in administrator whatever is sent', () =>
    withServer(async (server) => {
      const res = await login(server, uniqueName('anyone'), 'any-password');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true, username: '_config', level: 10 });
    }, settings));

  it('answers logout with 200 {} and the cleared cookie', () =>
    withServer(async (server) => {
      const res = await server.request({ path: '/api/auth/logout' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, {});
      assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
    }, settings));

  it('answers 404 for register and every /users route', () =>
    withServer(async (server) => {
      const body = { username: uniqueName('nobody'), password: 'nobody-password', client: CLIENT_SETTINGS, level: 10 };
      assertError(await server.request({ method: 'POST', path: '/api/auth/register', body }), 404);
      assertError(await server.request({ path: '/api/auth/users' }), 404);
      assertError(await server.request({ method: 'PATCH', path: '/api/auth/users/_config', body: { level: 5 } }), 404);
      assertError(await server.request({ method: 'DELETE', path: '/api/auth/users/_config' }), 404);
    }, settings));
});

describe('configurable values', () => {
  it('reports a configured pollInterval in milliseconds in configs', () =>
    withServer(async (server) => {
      assert.deepEqual((await verify(server, undefined)).json, { initialUser: true, configs: { authMethod: 'default', pollInterval: 5000 } });
      const admin = await createUser(server, undefined, { level: 10 });
      assert.deepEqual((await verify(server, admin.token)).json, {
        initialUser: false,
        username: admin.username,
        level: 10,
        configs: { authMethod: 'default', pollInterval: 5000 },
      });
      assert.deepEqual((await verify(server, undefined)).json, { configs: { authMethod: 'default', pollInterval: 5000 } });
    }, { GATEHOUSE_POLL_INTERVAL: '5000' }));

  it('adds Secure to the session and logout cookies when told the service runs behind HTTPS', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const res = await login(server, admin.username, admin.password);
      const line = res.headers['set-cookie']?.[0] ?? '';
      assert.match(line, /^jwt=[^;]+; Path=\/; Max-Age=604800; Expires=[^;]+; HttpOnly; SameSite=Strict; Secure$/);
      const logout = await server.request({ path: '/api/auth/logout', token: admin.token });
      assert.deepEqual(logout.headers['set-cookie'], [`${CLEARED_COOKIE}; Secure`]);
    }, { GATEHOUSE_SECURE_COOKIE: 'true' }));

  it('adds Secure only when a trusted proxy forwards an HTTPS request', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const viaHttps = await login(server, admin.username, admin.password, { 'x-forwarded-proto': 'https' });
      assert.match(viaHttps.headers['set-cookie']?.[0] ?? '', /; Secure$/);
      const viaHttp = await login(server, admin.username, admin.password, { 'x-forwarded-proto': 'http' });
      assert.doesNotMatch(viaHttp.headers['set-cookie']?.[0] ?? '', /Secure/);
    }, { GATEHOUSE_TRUST_PROXY: '127.0.0.1' }));

  it('ignores X-Forwarded-Proto from a client that is not a trusted proxy', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const res = await login(server, admin.username, admin.password, { 'x-forwarded-proto': 'https' });
      assert.equal(res.status, 200);
      assert.doesNotMatch(res.headers['set-cookie']?.[0] ?? '', /Secure/);
    }));
});
