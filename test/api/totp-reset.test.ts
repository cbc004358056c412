// An administrator resets a lost authenticator: PATCH /api/auth/users/{name} {totp: false}
// (docs/contract/accounts.md "Administrators' routes"). The seed and recovery codes go, the account's sessions end,
// its machine tokens stay, and a password alone signs in again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { totpCode } from '../../src/totp/codes.js';
import { assertError, createUser, login, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import type { TestServer } from '../helpers/server.js';

describe('PATCH /api/auth/users/{name} with totp: false', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  /** A USER with TOTP in force and a machine token; returns the two-factor session and the token. */
  async function enrolled(): Promise<{ user: TestUser; session: string; machineToken: string }> {
    const user = await createUser(server, root.token, { level: 5 });
    const begun = await server.request({ method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
    const seed = decodeBase32((begun.json as { secret: string }).secret);
    assert.ok(seed !== undefined);
    const confirmed = await server.request({ method: 'POST', path: '/api/auth/account/totp/confirm', token: user.token, body: { code: totpCode(seed, server.clock.now()) } });
    assert.equal(confirmed.status, 200, confirmed.text);
    const session = confirmed.cookieToken ?? '';
    const made = await server.request({ method: 'POST', path: '/api/auth/account/tokens', token: session, body: { name: 'kept', password: user.password } });
    assert.equal(made.status, 200, made.text);
    return { user, session, machineToken: (made.json as { token: string }).token };
  }

  it('removes TOTP: the password alone signs in again, old sessions end, machine tokens stay', async () => {
    const { user, session, machineToken } = await enrolled();
    assertError(await login(server, user.username, user.password), 401, 'SECOND_FACTOR_REQUIRED');
    assert.equal((await server.request({ path: `/api/auth/users/${user.username}`, token: root.token }).then((res) => res.json as { totp: boolean })).totp, true);

    assert.equal((await updateUser(server, root.token, user.username, { totp: false })).status, 200);

    assert.equal((await server.request({ path: `/api/auth/users/${user.username}`, token: root.token }).then((res) => res.json as { totp: boolean })).totp, false);
    assert.equal((await login(server, user.username, user.password)).status, 200);
    assertError(await server.request({ path: '/api/auth/account', token: session }), 401);
    assert.equal((await server.request({ path: '/api/auth/forward', headers: { authorization: `Bearer ${machineToken}` } })).status, 200);
  });

  it('is a no-op for an account without TOTP, and its sessions stay', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    assert.equal((await updateUser(server, root.token, user.username, { totp: false })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/account', token: user.token })).status, 200);
  });

  it('takes only false, and only from an administrator', async () => {
    const { user, session } = await enrolled();
    for (const totp of [true, 'false', 0, null, {}]) assertError(await updateUser(server, root.token, user.username, { totp }), 400, 'VALIDATION_FAILED');
    assertError(await updateUser(server, session, user.username, { totp: false }), 403, 'NOT_ADMINISTRATOR');
    assertError(await login(server, user.username, user.password), 401, 'SECOND_FACTOR_REQUIRED');
  });
});
