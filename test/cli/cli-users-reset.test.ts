// `gatehouse users reset NAME --totp --passkeys --tokens`: an administrator's offline way to take every
// way in away from an account (docs/contract/access.md "Administrators and two factors"), checked on
// a data directory a real service filled, then by starting that service again.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { totpCode } from '../../src/totp/codes.js';
import { createUser, login } from '../helpers/api.js';
import { addPasskey, newAuthenticator, signIn } from '../helpers/passkeys.js';
import { assertBuilt, removeTempDirs, runCli, tempDir, type RunResult } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('gatehouse users reset', () => {
  let dataDir = '';
  let password = '';
  let username = '';
  const key = newAuthenticator();
  let machineToken = '';
  const reset = (...flags: string[]): Promise<RunResult> => runCli(['users', 'reset', username, ...flags, '--data-dir', dataDir]);
  const stored = (): Record<string, unknown> =>
    (JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8')) as { users: Array<Record<string, unknown>> }).users
      .find((user) => user['username'] === username) ?? {};
  const withServer = async <T>(use: (server: TestServer) => Promise<T>): Promise<T> => {
    const server = await startTestServer({}, { dataDir });
    try {
      return await use(server);
    } finally {
      await server.close();
    }
  };

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
    await withServer(async (server) => {
      const root = await createUser(server, undefined, { level: 10 });
      const user = await createUser(server, root.token);
      ({ username, password } = user);
      assert.equal((await addPasskey(server, user.token, password, key)).status, 200);
      const twoFactor = (await signIn(server, key)).cookieToken ?? '';
      const begun = await server.request({ method: 'POST', path: '/api/auth/account/totp', token: twoFactor, body: { password } });
      const seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
      const confirmed = await server.request({ method: 'POST', path: '/api/auth/account/totp/confirm', token: twoFactor, body: { code: totpCode(seed, server.clock.now()) } });
      assert.equal(confirmed.status, 200, confirmed.text);
      const made = await server.request({ method: 'POST', path: '/api/auth/account/tokens', token: confirmed.cookieToken ?? '', body: { name: 'sync', password } });
      assert.equal(made.status, 200, made.text);
      machineToken = (made.json as { token: string }).token;
    });
  });
  after(() => removeTempDirs());

  it('needs at least one of --totp, --passkeys, --tokens, and changes nothing without one', async () => {
    const before = stored();
    const result = await reset();
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--totp, --passkeys or --tokens/);
    assert.deepEqual(stored(), before);
  });

  it('exits 1 for an unknown account', async () => {
    const result = await runCli(['users', 'reset', 'nobody-here', '--tokens', '--data-dir', dataDir]);
    assert.equal(result.code, 1, result.stderr);
  });

  it('--tokens revokes the machine tokens alone; --totp --passkeys take the rest, and the password alone signs in again', async () => {
    const tokensOnly = await reset('--tokens');
    assert.equal(tokensOnly.code, 0, tokensOnly.stderr);
    assert.equal(stored()['tokens'], undefined);
    assert.notEqual(stored()['totp'], undefined);
    assert.notEqual(stored()['passkeys'], undefined);
    const rest = await reset('--totp', '--passkeys');
    assert.equal(rest.code, 0, rest.stderr);
    assert.match(rest.stdout, /sessions have ended/);
    assert.equal(stored()['totp'], undefined);
    assert.equal(stored()['passkeys'], undefined);
    await withServer(async (server) => {
      assert.equal((await login(server, username, password)).status, 200);
      assert.equal((await signIn(server, key)).status, 401);
      assert.equal((await server.request({ path: '/api/auth/forward', headers: { authorization: `Bearer ${machineToken}` } })).status, 401);
    });
  });
});
