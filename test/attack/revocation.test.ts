import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js';

// Stolen-token replay after logout. Off by default
// (docs/contract/flood-api.md "Tokens and cookies": clients log out one session and keep using a
// copy of the token); when on, a logged-out token stays refused, across a
// restart, and a full revocation list never lets one back in.

const REVOKE = { GATEHOUSE_REVOKE_ON_LOGOUT: '1' };

async function login(server: TestServer, username: string, password: string): Promise<string> {
  const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username, password } });
  assert.equal(res.status, 200, res.text);
  assert.ok(res.cookieToken !== undefined && res.cookieToken !== '');
  return res.cookieToken;
}

async function logout(server: TestServer, token: string): Promise<void> {
  const res = await server.request({ path: '/api/auth/logout', token });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.cookieToken, '', 'logout clears the cookie');
}

const verifyStatus = async (server: TestServer, token: string): Promise<number> => (await server.request({ path: '/api/auth/verify', token })).status;

describe('attack: replaying a logged-out token', () => {
  describe('with GATEHOUSE_REVOKE_ON_LOGOUT=1', () => {
    let dataDir: string;
    let server: TestServer;
    let adminToken: string;
    let first: string;
    let second: string;

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-attack-revoke-'));
      server = await startTestServer(REVOKE, { dataDir });
      adminToken = await registerUser(server, 'rv-admin', { level: 10, password: 'rv-admin-password' });
      // Tokens have whole-second iat: two logins in one second would be the same token.
      server.clock.advanceSeconds(1);
      first = await login(server, 'rv-admin', 'rv-admin-password');
      server.clock.advanceSeconds(1);
      second = await login(server, 'rv-admin', 'rv-admin-password');
      assert.notEqual(first, second);
    });
    after(async () => {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('refuses the logged-out token afterwards, in the cookie and in ?token=, on every route', async () => {
      await logout(server, first);
      assert.equal(await verifyStatus(server, first), 401);
      assert.equal((await server.request({ path: `/api/auth/verify?token=${first}` })).status, 401);
      assert.equal((await server.request({ path: '/api/auth/users', token: first })).status, 401);
      assert.equal((await server.request({ path: '/api/auth/logout', token: first })).status, 401);
    });

    it('refuses the logged-out token spelled another way (a signature character above U+00FF with the same low byte)', async () => {
      const respelled = `${first.slice(0, -1)}${encodeURIComponent(String.fromCharCode(0x100 + first.charCodeAt(first.length - 1)))}`;
      assert.equal(await verifyStatus(server, respelled), 401);
      assert.equal((await server.request({ path: `/api/auth/verify?token=${respelled}` })).status, 401);
      assert.equal((await server.request({ path: '/api/auth/users', token: respelled })).status, 401);
    });

    it("keeps the same user's other sessions working", async () => {
      assert.equal(await verifyStatus(server, second), 200);
      assert.equal(await verifyStatus(server, adminToken), 200);
    });

    it('stores only digests of revoked tokens, in a file of mode 0600', async () => {
      const path = join(dataDir, 'revoked-tokens.json');
      const text = await readFile(path, 'utf8');
      const [, payload = '', signature = ''] = first.split('.');
      assert.equal(text.includes(first), false);
      assert.equal(text.includes(payload), false, 'no payload segment');
      assert.equal(text.includes(signature), false, 'no signature segment');
      assert.equal((await stat(path)).mode & 0o777, 0o600);
    });

    it('still refuses the logged-out token after a restart on the same data directory and secret', async () => {
      await server.close();
      server = await startTestServer(REVOKE, { dataDir });
      assert.equal(await verifyStatus(server, first), 401);
      assert.equal(await verifyStatus(server, second), 200);
    });
  });

  describe('with GATEHOUSE_MAX_REVOKED_TOKENS=3', () => {
    let dataDir: string;
    let server: TestServer;
    let adminToken: string;

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-attack-revoke-cap-'));
      server = await startTestServer({ ...REVOKE, GATEHOUSE_MAX_REVOKED_TOKENS: '3' }, { dataDir });
      adminToken = await registerUser(server, 'cap-admin', { level: 10 });
    });
    after(async () => {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('still refuses all five tokens after five logouts of one user, and after a restart', async () => {
      await registerUser(server, 'cap-user', { level: 5, password: 'cap-user-password', asToken: adminToken });
      const tokens: string[] = [];
      for (let i = 0; i < 5; i++) {
        server.clock.advanceSeconds(1);
        tokens.push(await login(server, 'cap-user', 'cap-user-password'));
      }
      assert.equal(new Set(tokens).size, 5);
      for (const token of tokens) {
        // Once the list is full, the user's earlier sessions are all ended at once, so a later
        // logout may find its token already refused.
        const res = await server.request({ path: '/api/auth/logout', token });
        assert.ok(res.status === 200 || res.status === 401, `logout answered ${res.status}`);
      }
      for (const [index, token] of tokens.entries()) assert.equal(await verifyStatus(server, token), 401, `token ${index + 1} of 5 was let back in`);

      await server.close();
      server = await startTestServer({ ...REVOKE, GATEHOUSE_MAX_REVOKED_TOKENS: '3' }, { dataDir });
      for (const [index, token] of tokens.entries()) assert.equal(await verifyStatus(server, token), 401, `token ${index + 1} of 5 after the restart`);
      // The restarted server's clock starts from the real time, behind the first one's.
      server.clock.advanceSeconds(10);
      assert.equal(await verifyStatus(server, await login(server, 'cap-user', 'cap-user-password')), 200, 'a new session works');
      assert.equal(await verifyStatus(server, adminToken), 200, "another user's session is untouched");
    });

    it('still refuses every token after five different users each log out once', async () => {
      const tokens: string[] = [];
      for (let i = 0; i < 5; i++) tokens.push(await registerUser(server, `cap-many-${i}`, { level: 5, asToken: adminToken }));
      for (const token of tokens) await logout(server, token);
      for (const [index, token] of tokens.entries()) assert.equal(await verifyStatus(server, token), 401, `cap-many-${index} was let back in`);
    });
  });

  describe('by default (revocation off)', () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer();
    });
    after(() => server.close());

    it('clears the cookie on logout but keeps accepting a copy of the token, as the contract decides', async () => {
      const token = await registerUser(server, 'rv-default', { level: 10 });
      await logout(server, token);
      assert.equal(await verifyStatus(server, token), 200);
    });
  });
});
