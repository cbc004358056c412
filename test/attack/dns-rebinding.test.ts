import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertError, register, withServer } from '../helpers/api.js';
import { rawExchange } from '../helpers/raw-socket.js';
import { CLIENT_SETTINGS, registerUser, type TestServer } from '../helpers/server.js';

// With no users, the first registration needs no credentials. A web page the
// operator visits can re-point its own host name at 127.0.0.1 (DNS rebinding) and post to the
// fresh install; the browser then sends the page's own name as Host. So in the initial
// condition a registration is accepted only through an IP literal, exactly "localhost", or a
// name in --allowed-hosts.

const body = (username: string) => ({ username, password: 'first-password', client: CLIENT_SETTINGS, level: 10 });
const registerWithHost = (server: TestServer, host: string) => server.request({ method: 'POST', path: '/api/auth/register', body: body('first'), headers: { host } });

async function assertStillInitial(server: TestServer): Promise<void> {
  const res = await server.request({ path: '/api/auth/verify' });
  assert.equal(res.status, 200);
  assert.equal((res.json as { initialUser?: unknown }).initialUser, true, 'no user may have been created');
}

describe('attack: DNS rebinding against the first registration', () => {
  for (const host of ['evil.example', 'evil.example:3000', 'localhost.evil.example', 'localhost.evil.example:3000', '127.0.0.1.evil.example', 'gatehouse.example.evil.example']) {
    it(`refuses the first registration with Host ${host}: 403 HOST_NOT_ALLOWED naming --allowed-hosts and users add`, () =>
      withServer(
        async (server) => {
          const res = await registerWithHost(server, host);
          assertError(res, 403, 'HOST_NOT_ALLOWED');
          const message = (res.json as { message: string }).message;
          assert.match(message, /--allowed-hosts/);
          assert.match(message, /gatehouse users add/);
          await assertStillInitial(server);
        },
        { GATEHOUSE_ALLOWED_HOSTS: 'gatehouse.example' },
      ));
  }

  for (const host of ['127.0.0.1:3000', '[::1]:3000', 'localhost:3000', 'LOCALHOST', '192.0.2.10', 'gatehouse.example', 'Gatehouse.Example:443']) {
    it(`accepts the first registration with Host ${host}`, () =>
      withServer(
        async (server) => {
          const res = await registerWithHost(server, host);
          assert.equal(res.status, 200, res.text);
          assert.ok(res.cookieToken !== undefined);
        },
        { GATEHOUSE_ALLOWED_HOSTS: 'gatehouse.example' },
      ));
  }

  it('refuses the first registration of a request with no Host at all (HTTP/1.0)', () =>
    withServer(async (server) => {
      const payload = JSON.stringify(body('first'));
      const res = await rawExchange(server.port, `POST /api/auth/register HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
      assert.equal(res.status, 403, res.text);
      assert.equal((JSON.parse(res.body) as { code?: unknown }).code, 'HOST_NOT_ALLOWED');
      await assertStillInitial(server);
    }));

  it('refuses before reading the body, so an invalid body still gets 403', () =>
    withServer(async (server) => {
      assertError(await server.request({ method: 'POST', path: '/api/auth/register', body: { nonsense: true }, headers: { host: 'evil.example' } }), 403, 'HOST_NOT_ALLOWED');
    }));

  it('once users exist, judges Host as Gatehouse\'s own origin: an administrator registers there and on a Flood origin only', () =>
    withServer(async (server) => {
      const adminToken = await registerUser(server, 'rebind-admin', { level: 10 });
      const res = await register(server, body('second'), { token: adminToken, query: '?cookie=false' });
      assert.equal(res.status, 200);
      const viaName = await server.request({ method: 'POST', path: '/api/auth/register?cookie=false', body: body('third'), token: adminToken, headers: { host: 'gatehouse.lan:3000' } });
      assertError(viaName, 403, 'NOT_GATEHOUSE_ORIGIN');
      const viaFlood = await server.request({ method: 'POST', path: '/api/auth/register?cookie=false', body: body('fourth'), token: adminToken, headers: { host: 'flood.lan:3000' } });
      assert.equal(viaFlood.status, 200, viaFlood.text);
      // Without credentials: 401 at home, and elsewhere the origin's refusal, which says nothing of the session.
      assertError(await server.request({ method: 'POST', path: '/api/auth/register', body: body('fifth') }), 401, 'AUTH_REQUIRED');
      assertError(await registerWithHost(server, 'evil.example'), 403, 'NOT_GATEHOUSE_ORIGIN');
    }, { GATEHOUSE_FLOOD_URL: 'http://flood.lan:3000' }));

  it('accepts the first registration through --public-url\'s host, which no rebinding page can send', () =>
    withServer(async (server) => {
      const res = await registerWithHost(server, 'auth.example.org');
      assert.equal(res.status, 200, res.text);
    }, { GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
});
