import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { addPasskey, HEADERS, newAuthenticator } from '../helpers/passkeys.js';
import type { TestServer } from '../helpers/server.js';

describe('GET /api/auth/account lists what the account page shows', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('lists the caller\'s passkeys and machine tokens by id, name and times, never a token or its digest', async () => {
    const user = await createUser(server, root.token);
    // The token first: once the account has a passkey, a password session no longer makes tokens.
    const made = await server.request({ method: 'POST', path: '/api/auth/account/tokens', token: user.token, body: { name: 'backup', days: 30, password: user.password } });
    assert.equal(made.status, 200, made.text);
    const added = await addPasskey(server, user.token, user.password, newAuthenticator(), { name: 'Laptop' });
    assert.equal(added.status, 200, added.text);
    const token = added.cookieToken ?? user.token;
    const secret = (made.json as { token: string }).token;

    const res = await server.request({ path: '/api/auth/account', token, headers: HEADERS });
    assert.equal(res.status, 200, res.text);
    const account = res.json as { passkeys: Array<Record<string, unknown>>; tokens: Array<Record<string, unknown>> };
    assert.equal(account.passkeys.length, 1);
    assert.deepEqual(Object.keys(account.passkeys[0] ?? {}).sort(), ['createdAt', 'id', 'lastUsedAt', 'name']);
    assert.equal(account.passkeys[0]?.['name'], 'Laptop');
    assert.equal(account.passkeys[0]?.['id'], (added.json as { id: string }).id);
    assert.equal(account.tokens.length, 1);
    assert.deepEqual(Object.keys(account.tokens[0] ?? {}).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name']);
    assert.equal(account.tokens[0]?.['name'], 'backup');
    assert.equal(typeof account.tokens[0]?.['expiresAt'], 'number');
    assert.ok(!res.text.includes(secret.slice(3)), 'the token is shown only when made');
  });

  it('lists nothing for an account without passkeys or tokens', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ path: '/api/auth/account', token: user.token });
    assert.deepEqual({ passkeys: (res.json as { passkeys: unknown }).passkeys, tokens: (res.json as { tokens: unknown }).tokens }, { passkeys: [], tokens: [] });
  });
});
