// TOTP two-step sign-in and the caller's own account API, driven over real HTTP with the test clock
// (docs/contract/accounts.md "Two-step sign-in", "The caller's own account").
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { createTokenCodec } from '../../src/auth/jwt.js';
import { hotp, totpCode, totpStep } from '../../src/totp/codes.js';
import { createUser, login, startPopulatedServer, updateUser, verify, type TestUser } from '../helpers/api.js';
import { startTestServer, TEST_SECRET, type TestResponse, type TestServer } from '../helpers/server.js';

const claimsOf = (token: string | undefined): Record<string, unknown> => JSON.parse(Buffer.from((token ?? '').split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
const codeOf = (response: TestResponse): unknown => (response.json as { code?: unknown } | undefined)?.code;

function post(server: TestServer, path: string, token: string | undefined, body: unknown = {}): Promise<TestResponse> {
  return server.request({ method: 'POST', path, body, ...(token === undefined ? {} : { token }) });
}

/** Sets up TOTP for `user` through the API; returns the seed, the recovery codes and the new session token. */
async function enrol(server: TestServer, user: TestUser): Promise<{ seed: Buffer; recoveryCodes: string[]; token: string }> {
  const begun = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
  assert.equal(begun.status, 200, begun.text);
  const { secret } = begun.json as { secret: string };
  const seed = decodeBase32(secret);
  assert.ok(seed !== undefined && seed.length === 20);
  const confirmed = await post(server, '/api/auth/account/totp/confirm', user.token, { code: totpCode(seed, server.clock.now()) });
  assert.equal(confirmed.status, 200, confirmed.text);
  assert.ok(confirmed.cookieToken !== undefined);
  return { seed, recoveryCodes: (confirmed.json as { recoveryCodes: string[] }).recoveryCodes, token: confirmed.cookieToken };
}

function loginWithCode(server: TestServer, user: TestUser, code: string | undefined): Promise<TestResponse> {
  return server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password, ...(code === undefined ? {} : { code }) } });
}

describe('two-step sign-in with TOTP', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_THROTTLE_USER: '5' }));
  });
  after(() => server.close());

  it('an account without TOTP signs in with its password as before, a code field ignored', async () => {
    const user = await createUser(server, root.token);
    const response = await loginWithCode(server, user, '123456');
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { success: true, username: user.username, level: user.level });
    assert.deepEqual(claimsOf(response.cookieToken)['amr'], ['pwd']);
  });

  it('GET /api/auth/account describes the caller, without TOTP', async () => {
    const user = await createUser(server, root.token);
    const response = await server.request({ path: '/api/auth/account', token: user.token });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { username: user.username, level: user.level, groups: [], totp: false, passkeys: [], tokens: [] });
    assert.equal((await server.request({ path: '/api/auth/account' })).status, 401);
  });

  it('setting up TOTP asks for the password, answers the seed, the otpauth URI and an SVG QR code, and is not in force until confirmed', async () => {
    const user = await createUser(server, root.token);
    const wrong = await post(server, '/api/auth/account/totp', user.token, { password: 'not it' });
    assert.equal(wrong.status, 403);
    assert.equal(codeOf(wrong), 'WRONG_PASSWORD');
    const begun = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
    assert.equal(begun.status, 200);
    assert.equal(begun.headers['cache-control'], 'no-store');
    const { secret, uri, qr } = begun.json as { secret: string; uri: string; qr: string };
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.equal(uri, `otpauth://totp/Gatehouse:${encodeURIComponent(user.username)}?secret=${secret}&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30`);
    assert.match(qr, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 \d+ \d+"/);
    // Pending: the password alone still signs in.
    assert.equal((await login(server, user.username, user.password)).status, 200);
    const seed = decodeBase32(secret) ?? Buffer.alloc(0);
    const wrongCode = await post(server, '/api/auth/account/totp/confirm', user.token, { code: hotp(seed, totpStep(server.clock.now()) + 5) });
    assert.equal(wrongCode.status, 403);
    assert.equal(codeOf(wrongCode), 'WRONG_CODE');
    // A new call replaces the pending seed: a code of the first one no longer confirms.
    const again = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
    assert.notEqual((again.json as { secret: string }).secret, secret);
    const stale = await post(server, '/api/auth/account/totp/confirm', user.token, { code: totpCode(seed, server.clock.now()) });
    assert.equal(stale.status, 403);
  });

  it('a confirmed set-up gives ten recovery codes once, keeps this session with two factors and ends the others', async () => {
    const user = await createUser(server, root.token);
    const other = (await login(server, user.username, user.password)).cookieToken;
    const { recoveryCodes, token } = await enrol(server, user);
    assert.equal(recoveryCodes.length, 10);
    assert.equal(new Set(recoveryCodes).size, 10);
    assert.deepEqual(claimsOf(token)['amr'], ['pwd', 'otp']);
    assert.equal((await verify(server, token)).status, 200);
    assert.equal((await verify(server, other)).status, 401);
    assert.equal((await verify(server, user.token)).status, 401);
    const account = await server.request({ path: '/api/auth/account', token });
    assert.equal((account.json as { totp: boolean }).totp, true);
    assert.equal(codeOf(await post(server, '/api/auth/account/totp', token, { password: user.password })), 'TOTP_ALREADY_ENABLED');
    assert.equal(codeOf(await post(server, '/api/auth/account/totp/confirm', token, { code: '000000' })), 'TOTP_ALREADY_ENABLED');
  });

  it('with TOTP: no code is 401 SECOND_FACTOR_REQUIRED pointing to the sign-in page; a wrong password stays the plain 401', async () => {
    const user = await createUser(server, root.token);
    const { seed } = await enrol(server, user);
    const noCode = await loginWithCode(server, user, undefined);
    assert.equal(noCode.status, 401);
    assert.equal(codeOf(noCode), 'SECOND_FACTOR_REQUIRED');
    assert.match((noCode.json as { message: string }).message, /sign-in page/);
    assert.equal(noCode.cookieToken, undefined);
    const wrongPassword = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: 'wrong' } });
    assert.deepEqual([wrongPassword.status, codeOf(wrongPassword)], [401, 'INVALID_CREDENTIALS']);
    const wrongPasswordRightCode = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: 'wrong', code: totpCode(seed, server.clock.now() + 30_000) } });
    assert.deepEqual([wrongPasswordRightCode.status, codeOf(wrongPasswordRightCode)], [401, 'INVALID_CREDENTIALS']);
  });

  it('the current code signs in once (amr pwd, otp); a replay is 401; one step of skew either way, not two', async () => {
    const user = await createUser(server, root.token);
    const { seed } = await enrol(server, user);
    server.clock.advanceSeconds(30);
    const code = totpCode(seed, server.clock.now());
    const first = await loginWithCode(server, user, code);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json, { success: true, username: user.username, level: user.level });
    assert.deepEqual(claimsOf(first.cookieToken)['amr'], ['pwd', 'otp']);
    const replay = await loginWithCode(server, user, code);
    assert.deepEqual([replay.status, codeOf(replay)], [401, 'INVALID_SECOND_FACTOR']);
    // The previous step's code is older than the one used: refused too.
    assert.equal((await loginWithCode(server, user, hotp(seed, totpStep(server.clock.now()) - 1))).status, 401);
    assert.equal((await loginWithCode(server, user, hotp(seed, totpStep(server.clock.now()) + 2))).status, 401);
    assert.equal((await loginWithCode(server, user, hotp(seed, totpStep(server.clock.now()) + 1))).status, 200);
    server.clock.advanceSeconds(90);
    // One step behind the clock is still taken.
    assert.equal((await loginWithCode(server, user, hotp(seed, totpStep(server.clock.now()) - 1))).status, 200);
  });

  it('two sign-ins racing with one code: exactly one succeeds', async () => {
    const user = await createUser(server, root.token);
    const { seed } = await enrol(server, user);
    server.clock.advanceSeconds(30);
    const code = totpCode(seed, server.clock.now());
    const answers = await Promise.all([1, 2, 3, 4].map(() => loginWithCode(server, user, code)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401, 401]);
  });

  it('a recovery code signs in once, typed in any case, and is then gone', async () => {
    const user = await createUser(server, root.token);
    const { recoveryCodes } = await enrol(server, user);
    const code = recoveryCodes[2] ?? '';
    const first = await loginWithCode(server, user, code.toUpperCase());
    assert.equal(first.status, 200);
    assert.deepEqual(claimsOf(first.cookieToken)['amr'], ['pwd', 'otp']);
    assert.equal((await loginWithCode(server, user, code)).status, 401);
    assert.equal((await loginWithCode(server, user, recoveryCodes[3])).status, 200);
    assert.equal(server.running.store.find(user.username)?.totp?.recoveryDigests.length, 8);
  });

  it('failed codes feed the login throttle, and asking without a code does not clear them', async () => {
    const user = await createUser(server, root.token);
    const { seed } = await enrol(server, user);
    for (let i = 0; i < 4; i++) {
      assert.equal((await loginWithCode(server, user, '000000')).status, 401);
      assert.equal(codeOf(await loginWithCode(server, user, undefined)), 'SECOND_FACTOR_REQUIRED');
    }
    assert.equal((await loginWithCode(server, user, '000001')).status, 401);
    const blocked = await loginWithCode(server, user, totpCode(seed, server.clock.now() + 30_000));
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers['retry-after']) > 0);
  });

  it('the users file holds the seed sealed, never in the clear, and seal.key is 0600', async () => {
    const user = await createUser(server, root.token);
    const { seed, recoveryCodes } = await enrol(server, user);
    const text = await readFile(join(server.dataDir, 'users.json'), 'utf8');
    for (const form of [seed.toString('hex'), seed.toString('base64'), seed.toString('base64url')]) assert.ok(!text.includes(form));
    assert.ok(!text.includes(Buffer.from(seed).toString('latin1')));
    for (const code of recoveryCodes) assert.ok(!text.includes(code) && !text.includes(code.replace(/-/g, '')));
    assert.equal((await stat(join(server.dataDir, 'seal.key'))).mode & 0o777, 0o600);
  });

  it('changing the password needs the current one, answers a new cookie and ends the other sessions', async () => {
    const user = await createUser(server, root.token);
    const other = (await login(server, user.username, user.password)).cookieToken;
    const wrong = await post(server, '/api/auth/account/password', user.token, { password: 'nope', newPassword: 'new-password' });
    assert.deepEqual([wrong.status, codeOf(wrong)], [403, 'WRONG_PASSWORD']);
    const changed = await post(server, '/api/auth/account/password', user.token, { password: user.password, newPassword: 'new-password' });
    assert.equal(changed.status, 200);
    assert.deepEqual(changed.json, {});
    assert.equal((await verify(server, changed.cookieToken)).status, 200);
    assert.equal((await verify(server, other)).status, 401);
    assert.equal((await verify(server, user.token)).status, 401);
    assert.equal((await login(server, user.username, 'new-password')).status, 200);
    assert.equal((await login(server, user.username, user.password)).status, 401);
  });

  it('removing TOTP needs the password, ends the other sessions, and a password alone signs in again', async () => {
    const user = await createUser(server, root.token);
    const { token, recoveryCodes } = await enrol(server, user);
    const otherSession = (await loginWithCode(server, user, recoveryCodes[0])).cookieToken;
    assert.equal((await verify(server, otherSession)).status, 200);
    assert.equal(codeOf(await post(server, '/api/auth/account/totp/disable', token, { password: 'nope' })), 'WRONG_PASSWORD');
    const removed = await post(server, '/api/auth/account/totp/disable', token, { password: user.password });
    assert.equal(removed.status, 200);
    assert.deepEqual(claimsOf(removed.cookieToken)['amr'], ['pwd']);
    assert.equal((await verify(server, removed.cookieToken)).status, 200);
    assert.equal((await verify(server, otherSession)).status, 401);
    assert.equal((await login(server, user.username, user.password)).status, 200);
    assert.equal(server.running.store.find(user.username)?.totp, undefined);
  });

  it('log out everywhere ends every session of the account, this one included, and clears the cookie', async () => {
    const user = await createUser(server, root.token);
    const other = (await login(server, user.username, user.password)).cookieToken;
    const response = await post(server, '/api/auth/account/logout-everywhere', user.token);
    assert.equal(response.status, 200);
    assert.match(String(response.headers['set-cookie']), /^jwt=; /);
    assert.equal((await verify(server, user.token)).status, 401);
    assert.equal((await verify(server, other)).status, 401);
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('GET /api/auth/account lists the machine tokens of the account', async () => {
    const user = await createUser(server, root.token);
    const made = await post(server, '/api/auth/account/tokens', user.token, { name: 'backup script', password: user.password });
    assert.equal(made.status, 200, made.text);
    const account = (await server.request({ path: '/api/auth/account', token: user.token })).json as { tokens: Array<{ id: string; name: string }>; passkeys: unknown[] };
    assert.deepEqual(account.tokens.map((token) => [token.id, token.name]), [[(made.json as { id: string }).id, 'backup script']]);
    assert.deepEqual(account.passkeys, []);
  });

  it('an administrator resets a lost authenticator with PATCH totp: false, which ends the account\'s sessions', async () => {
    const user = await createUser(server, root.token);
    const { token } = await enrol(server, user);
    assert.equal((await updateUser(server, token, user.username, { totp: false })).status, 403, 'not by the account itself');
    assert.equal((await updateUser(server, root.token, user.username, { totp: true })).status, 400);
    const reset = await updateUser(server, root.token, user.username, { totp: false });
    assert.equal(reset.status, 200);
    assert.equal(server.running.store.find(user.username)?.totp, undefined);
    assert.equal((await verify(server, token)).status, 401);
    assert.equal((await login(server, user.username, user.password)).status, 200);
    const summary = await server.request({ path: `/api/auth/users/${encodeURIComponent(user.username)}`, token: root.token });
    assert.equal((summary.json as { totp: boolean }).totp, false);
  });

  it('the account API refuses without a session, and refuses a form body (415)', async () => {
    for (const path of ['/api/auth/account/password', '/api/auth/account/totp', '/api/auth/account/totp/confirm', '/api/auth/account/totp/disable', '/api/auth/account/logout-everywhere']) {
      assert.equal((await post(server, path, undefined, { password: 'x', newPassword: 'y', code: '123456' })).status, 401, path);
    }
    const user = await createUser(server, root.token);
    const form = await server.request({ method: 'POST', path: '/api/auth/account/logout-everywhere', token: user.token, body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
  });
});

/** A session token for `user` as the server would sign it, made as `amr` says (undefined: an older token without amr). */
function tokenWithAmr(server: TestServer, username: string, amr: string[] | undefined): string {
  const user = server.running.store.find(username);
  assert.ok(user !== undefined);
  const iat = Math.floor(server.clock.now() / 1000);
  return createTokenCodec(Buffer.from(TEST_SECRET)).sign({ username, iat, exp: iat + 3600, sid: user.sessionKey, jti: `t${iat}${Math.random()}`, ...(amr === undefined ? {} : { amr: amr as ['pwd'] }) });
}

const BROWSER = { accept: 'text/html,application/xhtml+xml', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/files' };

function forward(server: TestServer, token: string | undefined, query: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return server.request({ path: `/api/auth/forward${query}`, headers, ...(token === undefined ? {} : { token }) });
}

describe('the gate asks for two factors where told', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('mfa=1 makes a one-factor session count as none: 401, or 302 to the login page saying to set a second factor up', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await forward(server, user.token, '')).status, 200);
    const refused = await forward(server, user.token, '?mfa=1');
    assert.deepEqual([refused.status, codeOf(refused)], [401, 'SECOND_FACTOR_REQUIRED']);
    assert.equal(refused.headers['remote-user'], undefined);
    const redirected = await forward(server, user.token, '?mfa=1&login=/login', BROWSER);
    assert.equal(redirected.status, 302);
    assert.equal(redirected.headers['location'], `/login?mfa=setup&rd=${encodeURIComponent('https://app.example/files')}`);
    // A typo in the value fails closed; 0 and false turn it off.
    assert.equal((await forward(server, user.token, '?mfa=yes')).status, 401);
    assert.equal((await forward(server, user.token, '?mfa=0')).status, 200);
    assert.equal((await forward(server, user.token, '?mfa=false')).status, 200);
  });

  it('mfa=1 passes a password-and-code session, and sends a one-factor session of a TOTP account to give its code', async () => {
    const user = await createUser(server, root.token);
    const { token } = await enrol(server, user);
    const passed = await forward(server, token, '?mfa=1');
    assert.equal(passed.status, 200);
    assert.equal(passed.headers['remote-user'], user.username);
    for (const amr of [['pwd'], ['hwk'], undefined]) {
      const oneFactor = tokenWithAmr(server, user.username, amr);
      assert.equal((await verify(server, oneFactor)).status, 200, 'the session itself is valid');
      const redirected = await forward(server, oneFactor, '?mfa=1&login=/login', BROWSER);
      assert.equal(redirected.status, 302, String(amr));
      assert.match(String(redirected.headers['location']), /^\/login\?mfa=code&rd=/);
    }
    assert.equal((await forward(server, tokenWithAmr(server, user.username, ['hwk', 'user']), '?mfa=1')).status, 200);
  });

  it('a machine token passes mfa=1 only where the forward URL also says tokens=1', async () => {
    const user = await createUser(server, root.token);
    const made = await post(server, '/api/auth/account/tokens', user.token, { name: 'ci', password: user.password });
    const bearer = { authorization: `Bearer ${(made.json as { token: string }).token}` };
    assert.equal((await forward(server, undefined, '', bearer)).status, 200);
    assert.equal((await forward(server, undefined, '?tokens=1', bearer)).status, 200);
    const refused = await forward(server, undefined, '?mfa=1', bearer);
    assert.deepEqual([refused.status, codeOf(refused)], [401, 'SECOND_FACTOR_REQUIRED']);
    assert.equal((await forward(server, undefined, '?mfa=1&basic=1', bearer)).headers['www-authenticate'], 'Basic realm="Gatehouse"');
    const passed = await forward(server, undefined, '?mfa=1&tokens=1', bearer);
    assert.equal(passed.status, 200);
    assert.equal(passed.headers['remote-user'], user.username);
  });

  it('without a session at all, mfa=1 gives the usual redirect with no hint', async () => {
    const redirected = await forward(server, undefined, '?mfa=1&login=/login', BROWSER);
    assert.equal(redirected.status, 302);
    assert.equal(redirected.headers['location'], `/login?rd=${encodeURIComponent('https://app.example/files')}`);
  });
});

describe('--require-mfa', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REQUIRE_MFA: 'true' }));
  });
  after(() => server.close());

  it('every forward check needs two factors; the Flood endpoints do not change', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await forward(server, user.token, '')).status, 401);
    assert.equal((await verify(server, user.token)).status, 200);
    const { token } = await enrol(server, user);
    assert.equal((await forward(server, token, '')).status, 200);
  });
});

describe('--require-mfa-for-admins', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true' }));
  });
  after(() => server.close());

  it("an administrator's one-factor session counts as none everywhere but the account API, where TOTP is set up", async () => {
    const admin = root;
    assert.equal((await verify(server, admin.token)).status, 401);
    assert.equal((await server.request({ path: '/api/auth/users', token: admin.token })).status, 401);
    const redirected = await forward(server, admin.token, '?login=/login', BROWSER);
    assert.match(String(redirected.headers['location']), /^\/login\?mfa=setup&rd=/);
    assert.equal((await server.request({ path: '/api/auth/account', token: admin.token })).status, 200);
    const { token } = await enrol(server, admin);
    assert.equal((await verify(server, token)).status, 200);
    assert.equal((await server.request({ path: '/api/auth/users', token })).status, 200);
    assert.equal((await forward(server, token, '')).status, 200);
    const user = await createUser(server, token);
    assert.equal((await forward(server, user.token, '')).status, 200, 'a USER session is not affected');
    assert.equal((await verify(server, user.token)).status, 200);
  });
});

describe('machine tokens under --require-mfa-for-admins', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true' }));
  });
  after(() => server.close());

  it("an administrator's one-factor session cannot make a machine token (it would pass the gate) but can revoke one", async () => {
    const { token: rootToken } = await enrol(server, root);
    const user = await createUser(server, rootToken);
    const made = await post(server, '/api/auth/account/tokens', user.token, { name: 'backup', password: user.password });
    assert.equal(made.status, 200, made.text);
    const { id, token: machineToken } = made.json as { id: string; token: string };
    assert.equal((await updateUser(server, rootToken, user.username, { level: 10 })).status, 200);
    const oneFactor = (await login(server, user.username, user.password)).cookieToken;
    assert.deepEqual(claimsOf(oneFactor)['amr'], ['pwd']);
    const bearer = { authorization: `Bearer ${machineToken}` };
    assert.equal((await forward(server, undefined, '?tokens=1', bearer)).status, 200);
    assert.equal((await post(server, '/api/auth/account/tokens', oneFactor, { name: 'more', password: user.password })).status, 401);
    const revoked = await server.request({ method: 'DELETE', path: `/api/auth/account/tokens/${id}`, ...(oneFactor === undefined ? {} : { token: oneFactor }) });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await forward(server, undefined, '?tokens=1', bearer)).status, 401);
  });
});

describe('the seal key across restarts', () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  async function enrolledDataDir(): Promise<{ dataDir: string; user: TestUser; seed: Buffer; recoveryCodes: string[] }> {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-seal-'));
    dirs.push(dataDir);
    const server = await startTestServer({}, { dataDir });
    try {
      const user = await createUser(server, undefined, { level: 10 });
      const { seed, recoveryCodes, token } = await enrol(server, user);
      return { dataDir, user: { ...user, token }, seed, recoveryCodes };
    } finally {
      await server.close();
    }
  }

  it('a new token secret (what secret rotate does) ends sessions but keeps every authenticator working', async () => {
    const { dataDir, user, seed } = await enrolledDataDir();
    const server = await startTestServer({ GATEHOUSE_SECRET: 'another-secret-that-is-also-32-characters-or-more' }, { dataDir });
    try {
      assert.equal((await verify(server, user.token)).status, 401);
      server.clock.advanceSeconds(60);
      assert.equal((await loginWithCode(server, user, totpCode(seed, server.clock.now()))).status, 200);
    } finally {
      await server.close();
    }
  });

  it('start-up stops with a message when seal.key is gone but accounts have TOTP sealed with it', async () => {
    const { dataDir } = await enrolledDataDir();
    await rm(join(dataDir, 'seal.key'));
    // A server that does start is closed again, so the assertion fails instead of the run hanging.
    await assert.rejects(startTestServer({}, { dataDir }).then((started) => started.close()), /seal\.key is missing, but accounts have TOTP/);
  });

  it('with another seal key, codes no longer sign in (logged once), recovery codes still do', async () => {
    const { dataDir, user, seed, recoveryCodes } = await enrolledDataDir();
    await rm(join(dataDir, 'seal.key'));
    const keyFile = join(dataDir, 'other.key');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(keyFile, `${Buffer.alloc(32, 7).toString('base64url')}\n`, { mode: 0o600 });
    const server = await startTestServer({ GATEHOUSE_SEAL_KEY_FILE: keyFile }, { dataDir });
    try {
      server.clock.advanceSeconds(60);
      assert.equal((await loginWithCode(server, user, totpCode(seed, server.clock.now()))).status, 401);
      server.clock.advanceSeconds(30);
      assert.equal((await loginWithCode(server, user, totpCode(seed, server.clock.now()))).status, 401);
      const logged = server.logs.filter((line) => line.includes('cannot be opened with the seal key'));
      assert.equal(logged.length, 1, 'logged once, not once per sign-in');
      assert.match(logged[0] ?? '', /"level":"error"/);
      assert.equal((await loginWithCode(server, user, recoveryCodes[0])).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe('--require-mfa-for-admins with --revoke-on-logout', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true', GATEHOUSE_REVOKE_ON_LOGOUT: 'true' }));
  });
  after(() => server.close());

  it("signing out revokes an administrator's one-factor session too, through the API and the sign-out page", async () => {
    const apiToken = (await login(server, root.username, root.password)).cookieToken;
    const pageToken = (await login(server, root.username, root.password)).cookieToken;
    for (const token of [apiToken, pageToken]) assert.equal((await server.request({ path: '/api/auth/account', ...(token === undefined ? {} : { token }) })).status, 200);
    assert.equal((await server.request({ path: '/api/auth/logout', ...(apiToken === undefined ? {} : { token: apiToken }) })).status, 200);
    assert.equal((await server.request({ path: '/logout', ...(pageToken === undefined ? {} : { token: pageToken }) })).status, 303);
    for (const token of [apiToken, pageToken]) assert.equal((await server.request({ path: '/api/auth/account', ...(token === undefined ? {} : { token }) })).status, 401);
  });
});
