// The administrators' routes are no way around the ways-in rule
// (docs/contract/access.md "Administrators and two factors"): an administrator whose account has a second factor needs a two-factor session to touch any account's
// ways in. Making a new administrator is such a way round: a one-factor session (the password of an
// account whose only second factor is a passkey) made an administrator with a password it chose, signed
// in as it (no second factor, so the Flood contract) and set the first administrator's password.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claimsOf, createUser, login, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import { addPasskey, HEADERS, newAuthenticator } from '../helpers/passkeys.js';
import { CLIENT_SETTINGS, type TestResponse, type TestServer } from '../helpers/server.js';

describe('a one-factor session of an administrator with a second factor makes no administrator', () => {
  let server: TestServer;
  let root: TestUser;
  let oneFactor: string;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PASSKEY_ORIGINS: 'http://localhost:3000' }));
    assert.equal((await addPasskey(server, root.token, root.password, newAuthenticator())).status, 200);
    oneFactor = (await login(server, root.username, root.password, HEADERS)).cookieToken ?? '';
    assert.deepEqual(claimsOf(oneFactor)['amr'], ['pwd']);
  });
  after(() => server.close());

  const refused = (response: TestResponse, what: string): void => {
    assert.equal(response.status, 403, `${what}: ${response.text}`);
    assert.equal((response.json as { code?: string }).code, 'SECOND_FACTOR_SESSION_REQUIRED', what);
  };
  const request = (method: string, path: string, body: unknown): Promise<TestResponse> =>
    server.request({ method, path, token: oneFactor, headers: HEADERS, body });

  it('refuses a new administrator (users API, register, invitation) and a level raised to one', async () => {
    refused(await request('POST', '/api/auth/users', { username: 'minion-a', password: 'minion-password', level: 'ADMINISTRATOR' }), 'POST users');
    refused(await request('POST', '/api/auth/register', { username: 'minion-b', password: 'minion-password', level: 10, client: CLIENT_SETTINGS }), 'register');
    refused(await request('POST', '/api/auth/invites', { level: 'ADMINISTRATOR' }), 'invitation');
    const plain = await createUser(server, oneFactor, { level: 'USER' });
    refused(await updateUser(server, oneFactor, plain.username, { level: 'ADMINISTRATOR' }), 'PATCH level');
    assert.equal((await login(server, 'minion-a', 'minion-password')).status, 401);
    assert.equal((await login(server, 'minion-b', 'minion-password')).status, 401);
    assert.equal((await login(server, root.username, root.password, HEADERS)).status, 200, 'the first administrator\'s password is its own');
  });

  it('still makes accounts that are not administrators, under the Flood contract', async () => {
    const made = await request('POST', '/api/auth/users', { username: 'plain-user', password: 'plain-password', level: 'USER' });
    assert.equal(made.status, 200, made.text);
    assert.equal((await request('POST', '/api/auth/invites', { level: 'USER' })).status, 200);
  });
});
