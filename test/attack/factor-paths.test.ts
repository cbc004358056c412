// Paths between factors that reviews found, each closed by the access table's rules on ways in
// (docs/contract/access.md "Ways in"): the session cookie of the account, the current password in the
// body, and a two-factor session once the account has a second factor; `?token=` only on the Flood
// endpoints and the gate; no change started by another site; administrators no way around it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { totpCode } from '../../src/totp/codes.js';
import { BUILT_SCRIPTS } from '../../src/pages/built-scripts.js';
import { assertError, claimsOf, createUser, login, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import { addPasskey, HEADERS, newAuthenticator, signIn } from '../helpers/passkeys.js';
import { FLAGS } from '../helpers/soft-authenticator.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

function post(server: TestServer, path: string, token: string | undefined, body: unknown = {}): Promise<TestResponse> {
  return server.request({ method: 'POST', path, body, headers: HEADERS, ...(token === undefined ? {} : { token }) });
}

function removePasskey(server: TestServer, token: string, id: string, body: unknown): Promise<TestResponse> {
  return server.request({ method: 'DELETE', path: `/api/auth/account/passkeys/${id}`, headers: HEADERS, token, body });
}

/** Sets TOTP up for `user` from `token`; returns the seed and the two-factor session confirming it gave. */
async function enrolTotp(server: TestServer, user: TestUser, token: string): Promise<{ seed: Buffer; session: string }> {
  const begun = await post(server, '/api/auth/account/totp', token, { password: user.password });
  assert.equal(begun.status, 200, begun.text);
  const seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
  const confirmed = await post(server, '/api/auth/account/totp/confirm', token, { code: totpCode(seed, server.clock.now()) });
  assert.equal(confirmed.status, 200, confirmed.text);
  return { seed, session: confirmed.cookieToken ?? '' };
}

describe('a one-factor passkey session on an account whose only second factor is that passkey', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('cannot remove the passkey, make a machine token or add a passkey, even with the password', async () => {
    const user = await createUser(server, root.token);
    const key = newAuthenticator();
    assert.equal((await addPasskey(server, user.token, user.password, key, { overrides: { flags: FLAGS.UP | FLAGS.AT } })).status, 200);
    const present = await signIn(server, key, { overrides: { flags: FLAGS.UP } });
    assert.deepEqual(claimsOf(present.cookieToken ?? '')['amr'], ['hwk']);
    const token = present.cookieToken ?? '';
    assertError(await removePasskey(server, token, key.id, { password: user.password }), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
    assertError(await post(server, '/api/auth/account/tokens', token, { name: 'x', password: user.password }), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
    assertError(await post(server, '/api/auth/account/passkeys/options', token), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
    assertError(await post(server, '/api/auth/account/passkeys', token, { name: 'x', credential: {}, password: user.password }), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
    // The passkey is still there, and still the only way past mfa=1.
    const verified = await signIn(server, key);
    assert.equal(verified.status, 200);
    assert.equal((await server.request({ path: '/api/auth/forward?mfa=1', token: present.cookieToken ?? '' })).status, 401);
  });

  it('the cookie after a change claims only factors the account still has: removing the last passkey leaves pwd', async () => {
    const user = await createUser(server, root.token);
    const first = newAuthenticator();
    const second = newAuthenticator();
    assert.equal((await addPasskey(server, user.token, user.password, first)).status, 200);
    const verified = (await signIn(server, first)).cookieToken ?? '';
    const added = await addPasskey(server, verified, user.password, second, { name: 'phone' });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(claimsOf(added.cookieToken ?? '')['amr'], ['pwd', 'hwk', 'user']);
    const one = await removePasskey(server, added.cookieToken ?? '', first.id, { password: user.password });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(claimsOf(one.cookieToken ?? '')['amr'], ['pwd', 'hwk', 'user'], 'a passkey is left');
    const last = await removePasskey(server, one.cookieToken ?? '', second.id, { password: user.password });
    assert.equal(last.status, 200, last.text);
    assert.deepEqual(claimsOf(last.cookieToken ?? '')['amr'], ['pwd'], 'no passkey is left');
    assert.equal((await server.request({ path: '/api/auth/forward?mfa=1', token: last.cookieToken ?? '' })).status, 401);
  });

  it('turning TOTP off leaves pwd, as removing a passkey does', async () => {
    const user = await createUser(server, root.token);
    const { session } = await enrolTotp(server, user, user.token);
    assert.deepEqual(claimsOf(session)['amr'], ['pwd', 'otp']);
    const off = await post(server, '/api/auth/account/totp/disable', session, { password: user.password });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(claimsOf(off.cookieToken ?? '')['amr'], ['pwd']);
  });
});

describe('under --require-mfa-for-admins, an administrator whose only second factor is a passkey without user verification', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true' }));
  });
  after(() => server.close());

  it('cannot turn a one-factor passkey session into an administrator', async () => {
    const key = newAuthenticator();
    assert.equal((await addPasskey(server, root.token, root.password, key, { overrides: { flags: FLAGS.UP | FLAGS.AT } })).status, 200);
    const present = (await signIn(server, key, { overrides: { flags: FLAGS.UP } })).cookieToken ?? '';
    assertError(await server.request({ path: '/api/auth/users', token: present }), 401);
    assertError(await removePasskey(server, present, key.id, { password: root.password }), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
    assertError(await post(server, '/api/auth/account/tokens', present, { name: 'x', password: root.password }), 401);
    assertError(await post(server, '/api/auth/account/passkeys', present, { name: 'x', credential: {}, password: root.password }), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
  });
});

describe('a stolen password-only cookie of an account without a second factor', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('cannot add a passkey or make a machine token without the password; a wrong one is 403 WRONG_PASSWORD', async () => {
    const user = await createUser(server, root.token);
    const options = await post(server, '/api/auth/account/passkeys/options', user.token);
    assert.equal(options.status, 200, 'the options change nothing');
    const credential = newAuthenticator().create(options.json as never);
    assertError(await post(server, '/api/auth/account/passkeys', user.token, { name: 'attacker', credential }), 400, 'VALIDATION_FAILED');
    assertError(await post(server, '/api/auth/account/passkeys', user.token, { name: 'attacker', credential, password: 'a guess' }), 403, 'WRONG_PASSWORD');
    assertError(await post(server, '/api/auth/account/tokens', user.token, { name: 'attacker' }), 400, 'VALIDATION_FAILED');
    assertError(await post(server, '/api/auth/account/tokens', user.token, { name: 'attacker', password: 'a guess' }), 403, 'WRONG_PASSWORD');
    const account = (await server.request({ path: '/api/auth/account', token: user.token })).json as { passkeys: unknown[]; tokens: unknown[] };
    assert.deepEqual([account.passkeys, account.tokens], [[], []]);
  });

  it('an administrator takes every passkey and machine token away with PATCH passkeys: false, tokens: false', async () => {
    const user = await createUser(server, root.token);
    const key = newAuthenticator();
    assert.equal((await addPasskey(server, user.token, user.password, key)).status, 200);
    const verified = (await signIn(server, key)).cookieToken ?? '';
    const made = await post(server, '/api/auth/account/tokens', verified, { name: 'sync', password: user.password });
    assert.equal(made.status, 200, made.text);
    const bearer = { authorization: `Bearer ${(made.json as { token: string }).token}` };
    assert.equal((await server.request({ path: '/api/auth/forward', headers: bearer })).status, 200);

    assert.equal((await updateUser(server, root.token, user.username, { tokens: false })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/forward', headers: bearer })).status, 401);
    assert.equal((await server.request({ path: '/api/auth/verify', token: verified })).status, 200, 'revoking tokens ends no session');

    assert.equal((await updateUser(server, root.token, user.username, { passkeys: false })).status, 200);
    const shown = (await server.request({ path: `/api/auth/users/${user.username}`, token: root.token })).json as { passkeys: number; tokens: number };
    assert.deepEqual([shown.passkeys, shown.tokens], [0, 0]);
    assert.equal((await signIn(server, key)).status, 401);
    assert.equal((await server.request({ path: '/api/auth/verify', token: verified })).status, 401, 'removing passkeys ends the sessions');
    for (const body of [{ passkeys: true }, { tokens: true }, { passkeys: 0 }, { tokens: [] }]) {
      assertError(await updateUser(server, root.token, user.username, body), 400, 'VALIDATION_FAILED');
    }
  });
});

describe('?token= beyond the Flood endpoints and the gate, and an app\'s script on the same origin', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('a token in the URL counts on no account, passkey or administrators\' extension route', async () => {
    const user = await createUser(server, root.token);
    const withToken = (path: string, token: string): string => `${path}?token=${encodeURIComponent(token)}`;
    assertError(await server.request({ path: withToken('/api/auth/account', user.token) }), 401);
    assertError(await server.request({ method: 'POST', path: withToken('/api/auth/account/tokens', user.token), body: { name: 'x', password: user.password } }), 401);
    assertError(await server.request({ method: 'POST', path: withToken('/api/auth/account/passkeys/options', user.token), headers: HEADERS, body: {} }), 401);
    assertError(await server.request({ method: 'POST', path: withToken('/api/auth/account/password', user.token), body: { password: user.password, newPassword: 'taken-over-now' } }), 401);
    assertError(await server.request({ method: 'POST', path: withToken('/api/auth/account/logout-everywhere', user.token), body: {} }), 401);
    assertError(await server.request({ path: withToken(`/api/auth/users/${user.username}`, root.token) }), 401);
    assertError(await server.request({ method: 'POST', path: withToken('/api/auth/users', root.token), body: { username: 'x', password: 'y', level: 5 } }), 401);
    // The seven Flood endpoints keep it (docs/contract/flood-api.md "Authentication"), and so does the gate.
    assert.equal((await server.request({ path: withToken('/api/auth/verify', user.token) })).status, 200);
    assert.equal((await server.request({ path: withToken('/api/auth/users', root.token) })).status, 200);
    assert.equal((await server.request({ path: withToken('/api/auth/forward', user.token) })).status, 200);
  });

  it('a script with the user\'s cookie but without the password makes no token, passkey or password change', async () => {
    const user = await createUser(server, root.token);
    const sameOrigin = { ...HEADERS, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };
    const call = (path: string, body: unknown): Promise<TestResponse> =>
      server.request({ method: 'POST', path, headers: sameOrigin, token: user.token, body });
    assertError(await call('/api/auth/account/tokens', { name: 'exfiltrated' }), 400, 'VALIDATION_FAILED');
    assertError(await call('/api/auth/account/tokens', { name: 'exfiltrated', password: 'guess' }), 403, 'WRONG_PASSWORD');
    assertError(await call('/api/auth/account/password', { password: 'guess', newPassword: 'mine now, all mine' }), 403, 'WRONG_PASSWORD');
    assertError(await call('/api/auth/account/totp', { password: 'guess' }), 403, 'WRONG_PASSWORD');
    // A text body, which a page may send without asking: 415 before anything is read.
    const text = await server.request({ method: 'POST', path: '/api/auth/account/tokens', headers: { ...sameOrigin, 'content-type': 'text/plain' }, token: user.token, body: '{"name":"x"}' });
    assertError(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('changes another site starts', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('log out everywhere with no body and no content type is 415, and from a sibling site 403', async () => {
    const user = await createUser(server, root.token);
    assertError(await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: user.token }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    for (const site of ['same-site', 'cross-site']) {
      const answer = await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: user.token, headers: { 'sec-fetch-site': site }, body: {} });
      assertError(answer, 403, 'CROSS_SITE_REQUEST');
    }
    assert.equal((await server.request({ path: '/api/auth/verify', token: user.token })).status, 200, 'still signed in');
    const own = await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: user.token, headers: { 'sec-fetch-site': 'same-origin' }, body: {} });
    assert.equal(own.status, 200, own.text);
  });

  it('every change under /api/auth/ refuses a same-site or cross-site request; the gate and the probe do not', async () => {
    const user = await createUser(server, root.token);
    const sibling = { 'sec-fetch-site': 'same-site' };
    const changes: Array<[string, string, unknown]> = [
      ['POST', '/api/auth/authenticate', { username: user.username, password: user.password }],
      ['POST', '/api/auth/register', {}],
      ['GET', '/api/auth/logout', undefined],
      ['PATCH', `/api/auth/users/${user.username}`, { groups: ['x'] }],
      ['DELETE', `/api/auth/users/${user.username}`, undefined],
      ['POST', '/api/auth/users', { username: 'x', password: 'y', level: 5 }],
      ['POST', '/api/auth/passkey/options', {}],
      ['POST', '/api/auth/passkey', {}],
      ['POST', '/api/auth/account/password', {}],
      ['POST', '/api/auth/account/tokens', {}],
    ];
    for (const [method, path, body] of changes) {
      const answer = await server.request({ method, path, headers: sibling, token: root.token, ...(body === undefined ? {} : { body }) });
      assertError(answer, 403, 'CROSS_SITE_REQUEST');
    }
    assert.equal((await server.request({ path: '/api/auth/forward', headers: { 'sec-fetch-site': 'cross-site' }, token: user.token })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/probe', headers: { 'sec-fetch-site': 'cross-site' } })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/verify', headers: sibling, token: user.token })).status, 200);
  });

  it('GET {base}/logout from another site answers a page with a Sign out button and signs nothing out', async () => {
    const user = await createUser(server, root.token);
    for (const site of ['cross-site', 'same-site']) {
      const page = await server.request({ path: '/logout', token: user.token, headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate', accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.text, /<button[^>]*id="sign-out"/);
      // Its script is the one built from pages/browser/sign-out.entry.ts, allowed by its build-time hash.
      assert.ok(page.text.includes(`<script>${BUILT_SCRIPTS['pages/sign-out'].code}</script>`));
      assert.ok(String(page.headers['content-security-policy']).includes(`script-src '${BUILT_SCRIPTS['pages/sign-out'].hash}';`));
      assert.equal(page.headers['set-cookie'], undefined);
      assert.equal((await server.request({ path: '/api/auth/verify', token: user.token })).status, 200);
    }
    const own = await server.request({ path: '/logout', token: user.token, headers: { 'sec-fetch-site': 'same-origin' } });
    assert.equal(own.status, 303);
    assert.match(String(own.headers['set-cookie']), /^jwt=;/);
  });
});

describe('administrators with a second factor', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('change no account\'s ways in from a password-only session, their own included; other fields keep the Flood contract', async () => {
    const admin = await createUser(server, root.token, { level: 10 });
    const user = await createUser(server, root.token);
    const key = newAuthenticator();
    assert.equal((await addPasskey(server, admin.token, admin.password, key)).status, 200);
    const passwordOnly = (await login(server, admin.username, admin.password)).cookieToken ?? '';
    for (const [target, body] of [
      [admin.username, { password: 'changed-by-a-thief' }],
      [user.username, { password: 'changed-by-a-thief' }],
      [user.username, { totp: false }],
      [user.username, { passkeys: false }],
      [user.username, { tokens: false }],
      [user.username, { level: 5, password: 'changed-by-a-thief' }],
    ] as const) {
      assertError(await updateUser(server, passwordOnly, target, body), 403, 'SECOND_FACTOR_SESSION_REQUIRED');
    }
    assert.equal((await login(server, user.username, user.password)).status, 200, 'the password is unchanged');
    assert.equal((await updateUser(server, passwordOnly, user.username, { groups: ['media'] })).status, 200);
    // With two factors the administrator may; an administrator without a second factor always may.
    const twoFactor = (await signIn(server, key)).cookieToken ?? '';
    assert.equal((await updateUser(server, twoFactor, user.username, { password: 'reset-by-admin' })).status, 200);
    assert.equal((await updateUser(server, root.token, user.username, { password: 'reset-by-root' })).status, 200);
  });
});
