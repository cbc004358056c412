// A stolen password must not become a second factor. Once an account has one (TOTP or a
// passkey), a password-only session cannot add its own factor, remove the owner's, change the
// password or mint a machine token; and the code guesses one set-up takes are capped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { hotp, totpCode, totpStep } from '../../src/totp/codes.js';
import { createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { addPasskey, HEADERS, newAuthenticator, signIn } from '../helpers/passkeys.js';
import { FLAGS } from '../helpers/soft-authenticator.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const codeOf = (response: TestResponse): unknown => (response.json as { code?: unknown } | undefined)?.code;
const amrOf = (token: string | undefined): unknown => (JSON.parse(Buffer.from((token ?? '').split('.')[1] ?? '', 'base64url').toString()) as { amr?: unknown }).amr;

function post(server: TestServer, path: string, token: string | undefined, body: unknown = {}): Promise<TestResponse> {
  return server.request({ method: 'POST', path, body, headers: HEADERS, ...(token === undefined ? {} : { token }) });
}

/** Every change of what protects the account, made with `token`; answers by name. */
async function protectionChanges(server: TestServer, user: TestUser, token: string, passkeyId: string): Promise<Record<string, TestResponse>> {
  return {
    'change the password': await post(server, '/api/auth/account/password', token, { password: user.password, newPassword: 'an attacker password' }),
    'start TOTP set-up': await post(server, '/api/auth/account/totp', token, { password: user.password }),
    'confirm TOTP set-up': await post(server, '/api/auth/account/totp/confirm', token, { code: '123456' }),
    'remove TOTP': await post(server, '/api/auth/account/totp/disable', token, { password: user.password }),
    'ask to add a passkey': await post(server, '/api/auth/account/passkeys/options', token),
    'add a passkey': await post(server, '/api/auth/account/passkeys', token, { name: 'attacker', credential: {}, password: user.password }),
    'remove a passkey': await server.request({ method: 'DELETE', path: `/api/auth/account/passkeys/${passkeyId}`, headers: HEADERS, token, body: { password: user.password } }),
    'make a machine token': await post(server, '/api/auth/account/tokens', token, { name: 'attacker', password: user.password }),
  };
}

describe('a password-only session on an account with a second factor', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('cannot change the password, second factors or machine tokens of an account with a passkey', async () => {
    const user = await createUser(server, root.token);
    const owner = newAuthenticator();
    const added = await addPasskey(server, user.token, user.password, owner);
    assert.equal(added.status, 200, added.text);
    const passkeyId = (added.json as { id: string }).id;
    // The password still signs in (the contract asks a code only of TOTP accounts), with one factor.
    const stolen = await login(server, user.username, user.password);
    assert.equal(stolen.status, 200);
    assert.deepEqual(amrOf(stolen.cookieToken), ['pwd']);
    const answers = await protectionChanges(server, user, stolen.cookieToken ?? '', passkeyId);
    for (const [what, answer] of Object.entries(answers)) {
      assert.equal(answer.status, 403, `${what}: ${answer.text}`);
      assert.equal(codeOf(answer), 'SECOND_FACTOR_SESSION_REQUIRED', what);
    }
    // The owner's passkey still signs in, and its session may change them.
    const owners = await signIn(server, owner);
    assert.equal(owners.status, 200, owners.text);
    // Revoking a machine token only closes a way in: any session of the account may.
    const made = await post(server, '/api/auth/account/tokens', owners.cookieToken, { name: 'monitor', password: user.password });
    assert.equal(made.status, 200, made.text);
    const tokenId = (made.json as { id: string }).id;
    const revoked = await server.request({ method: 'DELETE', path: `/api/auth/account/tokens/${tokenId}`, headers: HEADERS, token: stolen.cookieToken ?? '' });
    assert.equal(revoked.status, 200, revoked.text);
    const second = await addPasskey(server, owners.cookieToken ?? '', user.password, newAuthenticator(), { name: 'phone' });
    assert.equal(second.status, 200, second.text);
  });

  it('a session made with a code may change them on a TOTP account', async () => {
    const user = await createUser(server, root.token);
    const begun = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
    const seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
    const confirmed = await post(server, '/api/auth/account/totp/confirm', user.token, { code: totpCode(seed, server.clock.now()) });
    assert.equal(confirmed.status, 200, confirmed.text);
    assert.deepEqual(amrOf(confirmed.cookieToken), ['pwd', 'otp']);
    const added = await addPasskey(server, confirmed.cookieToken ?? '', user.password, newAuthenticator());
    assert.equal(added.status, 200, added.text);
  });

  it('a passkey session without user verification (one factor) cannot add a passkey that would claim it, nor mint a machine token', async () => {
    const user = await createUser(server, root.token);
    const owner = newAuthenticator();
    assert.equal((await addPasskey(server, user.token, user.password, owner, { overrides: { flags: FLAGS.UP | FLAGS.AT } })).status, 200);
    const present = await signIn(server, owner, { overrides: { flags: FLAGS.UP } });
    assert.equal(present.status, 200, present.text);
    assert.deepEqual(amrOf(present.cookieToken), ['hwk']);
    const token = present.cookieToken ?? '';
    const gate = { path: '/api/auth/forward?mfa=1', token };
    assert.equal((await server.request(gate)).status, 401);
    const refused = {
      'ask to add a passkey': await post(server, '/api/auth/account/passkeys/options', token),
      'add a passkey': await post(server, '/api/auth/account/passkeys', token, { name: 'attacker', credential: {}, password: user.password }),
      // A token passes a gate that says mfa=1&tokens=1: one factor must not make one either.
      'make a machine token': await post(server, '/api/auth/account/tokens', token, { name: 'attacker', password: user.password }),
      // Nor remove the passkey, leaving an account without a second factor to rebuild as it likes.
      'remove the passkey': await server.request({ method: 'DELETE', path: `/api/auth/account/passkeys/${owner.id}`, headers: HEADERS, token, body: { password: user.password } }),
      // Nor start TOTP: a second factor is proved by the session, not by the password in the request.
      'start TOTP set-up': await post(server, '/api/auth/account/totp', token, { password: user.password }),
    };
    for (const [what, answer] of Object.entries(refused)) {
      assert.equal(answer.status, 403, `${what}: ${answer.text}`);
      assert.equal(codeOf(answer), 'SECOND_FACTOR_SESSION_REQUIRED', what);
    }
    // A passkey that verified its user is two factors, and may add one.
    const verified = await signIn(server, owner);
    assert.deepEqual(amrOf(verified.cookieToken), ['hwk', 'user']);
    const added = await addPasskey(server, verified.cookieToken ?? '', user.password, newAuthenticator(), { name: 'phone' });
    assert.equal(added.status, 200, added.text);
  });

  it('an account with no second factor yet sets up its first with a password session (trust on first use)', async () => {
    const user = await createUser(server, root.token);
    const added = await addPasskey(server, user.token, user.password, newAuthenticator());
    assert.equal(added.status, 200, added.text);
    // That session stays one-factor: it does not become two-factor by adding one.
    assert.deepEqual(amrOf(added.cookieToken), ['pwd']);
  });
});

describe('guessing the code of a pending TOTP set-up', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('drops the set-up after five wrong codes, so the right code then finds none', async () => {
    const user = await createUser(server, root.token);
    const begun = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
    assert.equal(begun.status, 200);
    const seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
    const step = totpStep(server.clock.now());
    for (let i = 0; i < 5; i += 1) {
      const wrong = await post(server, '/api/auth/account/totp/confirm', user.token, { code: hotp(seed, step + 10 + i) });
      assert.equal(codeOf(wrong), 'WRONG_CODE');
    }
    const right = await post(server, '/api/auth/account/totp/confirm', user.token, { code: totpCode(seed, server.clock.now()) });
    assert.equal(right.status, 409, right.text);
    assert.equal(codeOf(right), 'TOTP_NOT_PENDING');
  });

  it('four wrong codes leave the set-up in place', async () => {
    const user = await createUser(server, root.token);
    const begun = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
    const seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
    const step = totpStep(server.clock.now());
    for (let i = 0; i < 4; i += 1) await post(server, '/api/auth/account/totp/confirm', user.token, { code: hotp(seed, step + 10 + i) });
    const right = await post(server, '/api/auth/account/totp/confirm', user.token, { code: totpCode(seed, server.clock.now()) });
    assert.equal(right.status, 200, right.text);
  });
});
