// A TOTP set-up before it is confirmed, and the recovery codes it gives (SECURITY.md, "Two-step
// sign-in"): pending in memory only, for 10 minutes, bound to the account's session key; the codes
// shown in the one answer that confirms it, and nowhere else.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { totpCode } from '../../src/totp/codes.js';
import { assertError, createUser, login, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

function post(server: TestServer, path: string, token: string, body: unknown): Promise<TestResponse> {
  return server.request({ method: 'POST', path, body, token });
}

/** Starts a set-up for `user` from `token`; returns the pending seed. */
async function begin(server: TestServer, user: TestUser, token: string): Promise<Buffer> {
  const begun = await post(server, '/api/auth/account/totp', token, { password: user.password });
  assert.equal(begun.status, 200, begun.text);
  return decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
}

function confirm(server: TestServer, token: string, seed: Buffer): Promise<TestResponse> {
  return post(server, '/api/auth/account/totp/confirm', token, { code: totpCode(seed, server.clock.now()) });
}

describe('a TOTP set-up that is not confirmed yet', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('is held in memory only: the users file and the account know nothing of it', async () => {
    const user = await createUser(server, root.token);
    const seed = await begin(server, user, user.token);
    const text = await readFile(join(server.dataDir, 'users.json'), 'utf8');
    for (const form of [seed.toString('hex'), seed.toString('base64'), seed.toString('base64url')]) assert.ok(!text.includes(form));
    assert.equal(server.running.store.find(user.username)?.totp, undefined);
    const account = await server.request({ path: '/api/auth/account', token: user.token });
    assert.equal((account.json as { totp: boolean }).totp, false);
  });

  it('is confirmed up to 10 minutes after it began, and no later', async () => {
    const early = await createUser(server, root.token);
    const late = await createUser(server, root.token);
    const earlySeed = await begin(server, early, early.token);
    server.clock.advanceSeconds(1);
    const lateSeed = await begin(server, late, late.token);
    // The early set-up is now 10 minutes old, the late one a second younger.
    server.clock.advanceSeconds(599);
    assertError(await confirm(server, early.token, earlySeed), 409, 'TOTP_NOT_PENDING');
    const confirmed = await confirm(server, late.token, lateSeed);
    assert.equal(confirmed.status, 200, confirmed.text);
  });

  it('ends when the account\'s credentials change, by its own hand or an administrator\'s', async () => {
    const user = await createUser(server, root.token);
    const seed = await begin(server, user, user.token);
    const changed = await post(server, '/api/auth/account/password', user.token, { password: user.password, newPassword: 'a-new-password' });
    assert.equal(changed.status, 200, changed.text);
    assertError(await confirm(server, changed.cookieToken ?? '', seed), 409, 'TOTP_NOT_PENDING');
    // An administrator's change gives the account a new session key too; the set-up was bound to the old one.
    const again = await begin(server, { ...user, password: 'a-new-password' }, changed.cookieToken ?? '');
    assert.equal((await updateUser(server, root.token, user.username, { level: 10 })).status, 200);
    const signedIn = await login(server, user.username, 'a-new-password');
    assert.equal(signedIn.status, 200, 'the password alone still signs in');
    assertError(await confirm(server, signedIn.cookieToken ?? '', again), 409, 'TOTP_NOT_PENDING');
    assert.equal(server.running.store.find(user.username)?.totp, undefined);
  });
});

describe('recovery codes', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('are shown only in the answer that confirms the set-up: never by the account, an administrator, a second confirm, the users file or the log', async () => {
    const user = await createUser(server, root.token);
    const seed = await begin(server, user, user.token);
    const confirmed = await confirm(server, user.token, seed);
    assert.equal(confirmed.status, 200, confirmed.text);
    assert.equal(confirmed.headers['cache-control'], 'no-store');
    const { recoveryCodes } = confirmed.json as { recoveryCodes: string[] };
    assert.equal(recoveryCodes.length, 10);
    const session = confirmed.cookieToken ?? '';
    const pieces = recoveryCodes.flatMap((code) => [code, code.replace(/-/g, ''), code.toUpperCase()]);
    const answers = [
      await server.request({ path: '/api/auth/account', token: session }),
      await server.request({ path: `/api/auth/users/${encodeURIComponent(user.username)}`, token: root.token }),
      await server.request({ path: '/api/auth/users', token: root.token }),
      await post(server, '/api/auth/account/totp/confirm', session, { code: totpCode(seed, server.clock.now() + 30_000) }),
    ];
    for (const answer of answers) {
      assert.ok(answer.status === 200 || answer.status === 409, answer.text);
      for (const piece of pieces) assert.ok(!answer.text.includes(piece), `${answer.text} shows a recovery code`);
    }
    const text = await readFile(join(server.dataDir, 'users.json'), 'utf8');
    for (const piece of pieces) assert.ok(!text.includes(piece), 'the users file holds a recovery code');
    for (const piece of pieces) assert.ok(!server.logs.some((line) => line.includes(piece)), 'the log holds a recovery code');
  });
});
