import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTokenCodec } from '../../src/auth/jwt.js';
import { CLIENT_SETTINGS, registerUser, startTestServer, TEST_SECRET, type TestServer } from '../helpers/server.js';

// A token names one session of one account. These attacks happen within a single second of
// the server's (frozen) clock, where a whole-second iat comparison alone cannot tell old from new.
describe('attack: a token outliving its account within the same second', () => {
  let server: TestServer;
  let adminToken: string;

  before(async () => {
    server = await startTestServer();
    adminToken = await registerUser(server, 'si-admin', { level: 10 });
  });
  after(() => server.close());

  const status = async (token: string, path = '/api/auth/verify'): Promise<number> => (await server.request({ path, token })).status;

  it('refuses the token of a deleted user once an administrator re-creates the name as an administrator', async () => {
    const oldToken = await registerUser(server, 'si-bob', { level: 5, asToken: adminToken });
    assert.equal((await server.request({ method: 'DELETE', path: '/api/auth/users/si-bob', token: adminToken })).status, 200);
    await registerUser(server, 'si-bob', { level: 10, asToken: adminToken });
    assert.equal(await status(oldToken), 401);
    assert.equal(await status(oldToken, '/api/auth/users'), 401);
  });

  it('refuses a token after two users swap names by renames', async () => {
    const carolToken = await registerUser(server, 'si-carol', { level: 5, asToken: adminToken });
    await registerUser(server, 'si-dave', { level: 10, asToken: adminToken });
    const rename = async (from: string, to: string): Promise<void> => {
      const res = await server.request({ method: 'PATCH', path: `/api/auth/users/${from}`, token: adminToken, body: { username: to } });
      assert.equal(res.status, 200, res.text);
    };
    await rename('si-dave', 'si-tmp');
    await rename('si-carol', 'si-dave');
    await rename('si-tmp', 'si-carol');
    // carol's old token names "si-carol", now the former administrator dave.
    assert.equal(await status(carolToken), 401);
    assert.equal(await status(carolToken, '/api/auth/users'), 401);
  });

  it('refuses a token issued in the same second just before a password change, and accepts the login after it', async () => {
    await registerUser(server, 'si-erin', { level: 5, password: 'erin-old-password', asToken: adminToken });
    const login = (password: string) => server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'si-erin', password } });
    const before = await login('erin-old-password');
    assert.equal(before.status, 200);
    const change = await server.request({ method: 'PATCH', path: '/api/auth/users/si-erin', token: adminToken, body: { password: 'erin-new-password' } });
    assert.equal(change.status, 200);
    assert.equal(await status(before.cookieToken ?? ''), 401);
    const after = await login('erin-new-password');
    assert.equal(await status(after.cookieToken ?? ''), 200);
  });

  it('still accepts a content token minted with the secret (no sid) for its username, by the iat rule', async () => {
    await registerUser(server, 'si-frank', { level: 5, asToken: adminToken });
    const iat = Math.floor(server.clock.now() / 1000);
    const codec = createTokenCodec(Buffer.from(TEST_SECRET));
    const contentToken = codec.sign({ username: 'si-frank', iat, exp: iat + 60, hash: 'abc', indices: '1,2' });
    assert.equal(await status(contentToken), 200);
    server.clock.advanceSeconds(2);
    try {
      const change = await server.request({ method: 'PATCH', path: '/api/auth/users/si-frank', token: adminToken, body: { password: 'frank-new-password', client: CLIENT_SETTINGS } });
      assert.equal(change.status, 200);
      assert.equal(await status(contentToken), 401, 'a content token from before the change is refused');
    } finally {
      server.clock.advanceSeconds(-2);
    }
  });

  it('refuses a token whose sid claim is not a string', async () => {
    await registerUser(server, 'si-gina', { level: 5, asToken: adminToken });
    const iat = Math.floor(server.clock.now() / 1000);
    const codec = createTokenCodec(Buffer.from(TEST_SECRET));
    assert.equal(await status(codec.sign({ username: 'si-gina', iat, exp: iat + 60, sid: 42 as unknown as string })), 401);
  });
});

describe('attack: two sessions of one user in the same second', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ GATEHOUSE_REVOKE_ON_LOGOUT: '1' });
    await registerUser(server, 'si-twice', { level: 10, password: 'si-twice-password' });
  });
  after(() => server.close());

  it('issues different tokens, so logging out one device leaves the other signed in', async () => {
    const login = () => server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'si-twice', password: 'si-twice-password' } });
    const [first, second] = await Promise.all([login(), login()]);
    const firstToken = first?.cookieToken ?? '';
    const secondToken = second?.cookieToken ?? '';
    assert.notEqual(firstToken, secondToken);
    assert.equal((await server.request({ path: '/api/auth/logout', token: firstToken })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/verify', token: firstToken })).status, 401);
    assert.equal((await server.request({ path: '/api/auth/verify', token: secondToken })).status, 200);
  });
});
