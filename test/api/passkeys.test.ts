// Passkeys over real HTTP with a software authenticator: registering from the account, signing
// in with a discoverable credential or after a username, and every refusal docs/contract/accounts.md "Passkeys" lists.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertError, assertTokenRefused, assertTokenWorks, claimsOf, createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { addPasskey, creationOptions, HEADERS, newAuthenticator, ORIGIN, requestOptions, signIn } from '../helpers/passkeys.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
import { encodeCbor, FLAGS, type CreateOverrides, type GetOverrides, type SoftAuthenticator, type SoftAlgorithm } from '../helpers/soft-authenticator.js';

describe('passkeys', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const account = (): Promise<TestUser> => createUser(server, root.token, { level: 5 });

  /** A user with one registered passkey; returns the user (with the cookie the registration gave) and the authenticator. */
  const withPasskey = async (options: { algorithm?: SoftAlgorithm; hasCounter?: boolean } = {}): Promise<{ user: TestUser; authenticator: SoftAuthenticator }> => {
    const user = await account();
    const authenticator = newAuthenticator(options);
    const res = await addPasskey(server, user.token, user.password, authenticator);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.cookieToken !== undefined);
    return { user: { ...user, token: res.cookieToken }, authenticator };
  };

  /** Asserts a 401 PASSKEY_REFUSED whose logged reason is `reason`. */
  const assertRefused = (res: TestResponse, reason: string): void => {
    assertError(res, 401, 'PASSKEY_REFUSED');
    const line = server.logs.filter((entry) => entry.includes('passkey_refused')).pop() ?? '';
    assert.ok(line.includes(JSON.stringify(reason)), `expected the refusal "${reason}" in the log, got ${line}`);
  };

  const storedPasskeys = async (username: string): Promise<Array<Record<string, unknown>>> => {
    const file = JSON.parse(await readFile(join(server.dataDir, 'users.json'), 'utf8')) as { users: Array<{ username: string; passkeys?: Array<Record<string, unknown>> }> };
    return file.users.find((user) => user.username === username)?.passkeys ?? [];
  };

  describe('registering from the account', () => {
    it('offers creation options as the contract says', async () => {
      const user = await account();
      const options = await creationOptions(server, user.token);
      assert.deepEqual(options['rp'], { id: 'localhost', name: 'Gatehouse' });
      assert.equal(options['attestation'], 'none');
      assert.deepEqual(options['authenticatorSelection'], { residentKey: 'preferred', requireResidentKey: false, userVerification: 'preferred' });
      assert.deepEqual(options['pubKeyCredParams'], [-8, -7, -257].map((alg) => ({ type: 'public-key', alg })));
      assert.deepEqual(options['excludeCredentials'], []);
      assert.equal(Buffer.from(options.challenge, 'base64url').length, 32);
      const userEntry = options['user'] as { id: string; name: string };
      assert.equal(userEntry.name, user.username);
      assert.equal(Buffer.from(userEntry.id, 'base64url').length, 16);
    });

    for (const algorithm of ['ES256', 'EdDSA', 'RS256'] as const) {
      it(`adds a ${algorithm} passkey, stores its key and count, and ends the account's other sessions`, async () => {
        const user = await account();
        const other = await createUser(server, root.token, { level: 5 });
        const authenticator = newAuthenticator({ algorithm });
        const res = await addPasskey(server, user.token, user.password, authenticator, { name: 'my key' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { id: authenticator.id, name: 'my key' });
        await assertTokenRefused(server, user.token);
        await assertTokenWorks(server, res.cookieToken ?? '', user.username);
        await assertTokenWorks(server, other.token, other.username);
        const [stored] = await storedPasskeys(user.username);
        assert.equal(stored?.['id'], authenticator.id);
        assert.equal(stored?.['publicKey'], authenticator.coseKey().toString('base64url'));
        assert.equal(stored?.['algorithm'], { ES256: -7, EdDSA: -8, RS256: -257 }[algorithm]);
        assert.equal(stored?.['signCount'], 0);
      });
    }

    it('keeps the amr of the session that added the passkey in its new cookie', async () => {
      const user = await account();
      const res = await addPasskey(server, user.token, user.password, newAuthenticator());
      assert.deepEqual(claimsOf(res.cookieToken ?? '')['amr'], ['pwd']);
    });

    it('lists the account passkeys in excludeCredentials and reuses one user handle', async () => {
      const { authenticator } = await withPasskey();
      // Once the account has a passkey, only a session made with a second factor may add another.
      const options = await creationOptions(server, (await signIn(server, authenticator)).cookieToken ?? '');
      assert.deepEqual(options['excludeCredentials'], [{ type: 'public-key', id: authenticator.id }]);
      assert.equal((options['user'] as { id: string }).id, authenticator.userHandle);
    });

    it('needs a session: 401 without one, for options, adding and removing', async () => {
      assertError(await server.request({ method: 'POST', path: '/api/auth/account/passkeys/options', headers: HEADERS, body: {} }), 401, 'AUTH_REQUIRED');
      assertError(await server.request({ method: 'POST', path: '/api/auth/account/passkeys', headers: HEADERS, body: { name: 'x', credential: {} } }), 401, 'AUTH_REQUIRED');
      assertError(await server.request({ method: 'DELETE', path: '/api/auth/account/passkeys/abc', headers: HEADERS }), 401, 'AUTH_REQUIRED');
    });

    const refusals: Array<[string, CreateOverrides, string]> = [
      ['the origin is another site', { clientData: { origin: 'https://evil.example' } }, 'origin'],
      ['the rp id hash is of another name', { rpId: 'evil.example' }, 'rp id hash'],
      ['the user was not present', { flags: FLAGS.UV | FLAGS.AT }, 'user not present'],
      ['the ceremony type is webauthn.get', { clientData: { type: 'webauthn.get' } }, 'client data type'],
      ['the none statement is not empty', { attStmt: new Map([['sig', Buffer.alloc(8)]]) }, 'none attestation with a statement'],
      ['the attestation object is hostile CBOR', { attestationObject: Buffer.from('9f9f9f9f9f9fff', 'hex') }, 'indefinite length'],
      ['the attestation object declares a huge byte string', { attestationObject: Buffer.from('5affffffff', 'hex') }, 'truncated'],
      ['the COSE key is nested too deeply', { coseKey: encodeCbor([[[[[1]]]]]) }, 'nested too deeply'],
    ];
    for (const [what, overrides, reason] of refusals) {
      it(`refuses a registration with 400 when ${what}`, async () => {
        const user = await account();
        const res = await addPasskey(server, user.token, user.password, newAuthenticator(), { overrides });
        assertError(res, 400, 'PASSKEY_INVALID');
        assert.ok((res.json as { message: string }).message.includes(reason), res.text);
        await assertTokenWorks(server, user.token, user.username);
        assert.deepEqual(await storedPasskeys(user.username), []);
      });
    }

    it('refuses a registration whose challenge was issued to another account, or already used', async () => {
      const user = await account();
      const other = await account();
      const authenticator = newAuthenticator();
      const options = await creationOptions(server, other.token);
      const credential = authenticator.create(options);
      const stolen = await server.request({ method: 'POST', path: '/api/auth/account/passkeys', token: user.token, headers: HEADERS, body: { name: 'x', credential, password: user.password } });
      assertError(stolen, 400, 'PASSKEY_INVALID');
      // The attempt spent the challenge: its owner cannot use it either.
      const spent = await server.request({ method: 'POST', path: '/api/auth/account/passkeys', token: other.token, headers: HEADERS, body: { name: 'x', credential, password: other.password } });
      assertError(spent, 400, 'PASSKEY_INVALID');
    });

    it('refuses a credential another account already registered (409)', async () => {
      const { authenticator } = await withPasskey();
      const user = await account();
      assertError(await addPasskey(server, user.token, user.password, authenticator), 409, 'PASSKEY_ALREADY_REGISTERED');
    });

    it('refuses a seventeenth passkey (409)', async () => {
      let { token } = await account();
      const user = await account();
      token = user.token;
      const first = newAuthenticator({ algorithm: 'EdDSA' });
      for (let i = 0; i < 16; i++) {
        const res = await addPasskey(server, token, user.password, i === 0 ? first : newAuthenticator({ algorithm: 'EdDSA' }), { name: `key ${i}` });
        assert.equal(res.status, 200, res.text);
        // From the second on, a session made with the first passkey adds them.
        token = i === 0 ? ((await signIn(server, first)).cookieToken ?? '') : (res.cookieToken ?? '');
      }
      assertError(await server.request({ method: 'POST', path: '/api/auth/account/passkeys/options', token, headers: HEADERS, body: {} }), 409, 'TOO_MANY_PASSKEYS');
      assert.equal((await storedPasskeys(user.username)).length, 16);
    });

    it('refuses bad names and malformed credential JSON with 400, and an oversized body with 413', async () => {
      const user = await account();
      const options = await creationOptions(server, user.token);
      const credential = newAuthenticator().create(options);
      for (const body of [
        { name: '', credential },
        { name: 'x'.repeat(65), credential },
        { name: 'a\u0000b', credential },
        { name: 'ok', credential: { ...credential, type: 'private-key' } },
        { name: 'ok', credential: { ...credential, rawId: 'AAAA' } },
        { name: 'ok', credential: { ...credential, response: { ...credential.response, clientDataJSON: 'not base64url!' } } },
        { name: 'ok', credential: { ...credential, response: { ...credential.response, attestationObject: 'A'.repeat(30_000) } } },
        { name: 'ok', credential: 'nope' },
      ]) {
        assertError(await server.request({ method: 'POST', path: '/api/auth/account/passkeys', token: user.token, headers: HEADERS, body }), 400, 'VALIDATION_FAILED');
      }
      const huge = { name: 'ok', credential: { ...credential, response: { ...credential.response, attestationObject: 'A'.repeat(70_000) } } };
      assertError(await server.request({ method: 'POST', path: '/api/auth/account/passkeys', token: user.token, headers: HEADERS, body: huge }), 413, 'BODY_TOO_LARGE');
    });
  });

  describe('the account listing', () => {
    it('lists the passkeys in GET /api/auth/account with times in milliseconds, lastUsedAt null until used', async () => {
      const { user, authenticator } = await withPasskey();
      const listed = async (): Promise<unknown> => ((await server.request({ path: '/api/auth/account', token: user.token })).json as { passkeys: unknown }).passkeys;
      const createdAt = Math.floor(server.clock.now() / 1000) * 1000;
      assert.deepEqual(await listed(), [{ id: authenticator.id, name: 'laptop', createdAt, lastUsedAt: null }]);
      server.clock.advanceSeconds(60);
      assert.equal((await signIn(server, authenticator)).status, 200);
      assert.deepEqual(await listed(), [{ id: authenticator.id, name: 'laptop', createdAt, lastUsedAt: Math.floor(server.clock.now() / 1000) * 1000 }]);
    });
  });

  describe('removing', () => {
    it('removes a passkey, ends the other sessions, and the passkey no longer signs in', async () => {
      const { user, authenticator } = await withPasskey();
      const signedIn = (await signIn(server, authenticator)).cookieToken ?? '';
      const res = await server.request({ method: 'DELETE', path: `/api/auth/account/passkeys/${authenticator.id}`, token: signedIn, headers: HEADERS, body: { password: user.password } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, {});
      // The session proved the password and a passkey the account no longer has.
      assert.deepEqual(claimsOf(res.cookieToken ?? '')['amr'], ['pwd']);
      await assertTokenRefused(server, user.token);
      await assertTokenWorks(server, res.cookieToken ?? '', user.username);
      assert.deepEqual(await storedPasskeys(user.username), []);
      assertRefused(await signIn(server, authenticator), 'unknown credential');
    });

    it('answers 404 for a passkey the account does not have, also another account one', async () => {
      const { authenticator } = await withPasskey();
      const user = await account();
      for (const id of [authenticator.id, randomBytes(16).toString('base64url'), '%00', 'a.b']) {
        assertError(await server.request({ method: 'DELETE', path: `/api/auth/account/passkeys/${id}`, token: user.token, headers: HEADERS, body: { password: user.password } }), 404, 'PASSKEY_NOT_FOUND');
      }
    });
  });

  describe('signing in', () => {
    for (const algorithm of ['ES256', 'EdDSA', 'RS256'] as const) {
      it(`signs in with a discoverable ${algorithm} passkey: 200 {success, username, level}, a cookie with amr hwk and user`, async () => {
        const { user, authenticator } = await withPasskey({ algorithm });
        const res = await signIn(server, authenticator);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { success: true, username: user.username, level: 5 });
        const token = res.cookieToken ?? '';
        assert.deepEqual(claimsOf(token)['amr'], ['hwk', 'user']);
        await assertTokenWorks(server, token, user.username);
        const [stored] = await storedPasskeys(user.username);
        assert.equal(stored?.['signCount'], 1);
        assert.equal(typeof stored?.['lastUsedAt'], 'number');
      });
    }

    it('passes the gate with mfa=1 after a verified passkey sign-in; a password session of that account is sent to give its second factor', async () => {
      const { user, authenticator } = await withPasskey();
      const gate = (token: string): Promise<TestResponse> =>
        server.request({ path: '/api/auth/forward?mfa=1&login=/login', token, headers: { accept: 'text/html', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/' } });
      const signedIn = await signIn(server, authenticator);
      assert.equal((await gate(signedIn.cookieToken ?? '')).status, 200);
      const presentOnly = await gate((await signIn(server, authenticator, { overrides: { flags: FLAGS.UP } })).cookieToken ?? '');
      assert.equal(presentOnly.status, 302);
      assert.match(String(presentOnly.headers['location']), /^\/login\?mfa=code&/);
      const password = await gate(user.token);
      assert.match(String(password.headers['location']), /^\/login\?mfa=code&/);
    });

    it('gives amr hwk alone when the authenticator did not verify the user', async () => {
      const { authenticator } = await withPasskey();
      const res = await signIn(server, authenticator, { overrides: { flags: FLAGS.UP } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(claimsOf(res.cookieToken ?? '')['amr'], ['hwk']);
    });

    it('signs in after a username, whose options list the account passkeys', async () => {
      const { user, authenticator } = await withPasskey();
      const options = await requestOptions(server, user.username);
      assert.deepEqual(options['allowCredentials'], [{ type: 'public-key', id: authenticator.id }]);
      assert.equal(options['userVerification'], 'preferred');
      assert.equal(options['rpId'], 'localhost');
      const res = await server.request({ method: 'POST', path: '/api/auth/passkey', headers: HEADERS, body: { credential: authenticator.get(options) } });
      assert.equal(res.status, 200, res.text);
    });

    it('signs in again and again with an authenticator without a counter', async () => {
      const { authenticator } = await withPasskey({ hasCounter: false });
      for (let i = 0; i < 3; i++) assert.equal((await signIn(server, authenticator)).status, 200);
    });

    it('answers an unknown username as it answers a real one without passkeys: decoys, the same each time', async () => {
      const unknown = await requestOptions(server, 'nobody-by-this-name');
      const again = await requestOptions(server, 'nobody-by-this-name');
      assert.deepEqual(unknown['allowCredentials'], again['allowCredentials']);
      assert.notEqual(unknown.challenge, again.challenge);
      const decoys = unknown['allowCredentials'] as Array<{ type: string; id: string }>;
      assert.ok(decoys.length >= 1 && decoys.every((entry) => entry.type === 'public-key' && Buffer.from(entry.id, 'base64url').length >= 16));
      assert.deepEqual(Object.keys(unknown).sort(), Object.keys(await requestOptions(server, root.username)).sort());
      const noPasskeys = await requestOptions(server, root.username);
      assert.ok(((noPasskeys['allowCredentials'] as unknown[]) ?? []).length >= 1, 'an account without passkeys gets decoys too');
      assert.deepEqual((await requestOptions(server))['allowCredentials'], []);
    });

    it('gives unknown names 1 to 16 decoys, 3 or more to many, so an account with 3 passkeys looks like an unknown name', async () => {
      const { user, authenticator } = await withPasskey();
      let token = (await signIn(server, authenticator)).cookieToken ?? '';
      for (const next of [newAuthenticator(), newAuthenticator()]) {
        const added = await addPasskey(server, token, user.password, next);
        assert.equal(added.status, 200, added.text);
        token = added.cookieToken ?? '';
      }
      assert.equal(((await requestOptions(server, user.username))['allowCredentials'] as unknown[]).length, 3);
      const counts: number[] = [];
      for (let i = 0; i < 40; i++) counts.push(((await requestOptions(server, `nobody-${i}`))['allowCredentials'] as unknown[]).length);
      assert.ok(counts.every((n) => n >= 1 && n <= 16), counts.join(','));
      assert.ok(counts.filter((n) => n === 3).length >= 2, `unknown names with 3 decoys: ${counts.join(',')}`);
      assert.ok(counts.some((n) => n > 3), counts.join(','));
    });

    it('refuses a challenge that is unknown, used or expired', async () => {
      const { authenticator } = await withPasskey();
      const post = (credential: unknown): Promise<TestResponse> => server.request({ method: 'POST', path: '/api/auth/passkey', headers: HEADERS, body: { credential } });
      assertRefused(await post(authenticator.get({ challenge: randomBytes(32).toString('base64url') })), 'challenge unknown, used or expired');
      const options = await requestOptions(server);
      const credential = authenticator.get(options);
      assert.equal((await post(credential)).status, 200);
      assertRefused(await post(credential), 'challenge unknown, used or expired');
      const late = await requestOptions(server);
      server.clock.advanceSeconds(301);
      assertRefused(await post(authenticator.get(late)), 'challenge unknown, used or expired');
    });

    it('refuses a registration challenge used to sign in', async () => {
      const { authenticator } = await withPasskey();
      const creation = await creationOptions(server, (await signIn(server, authenticator)).cookieToken ?? '');
      const res = await server.request({ method: 'POST', path: '/api/auth/passkey', headers: HEADERS, body: { credential: authenticator.get({ challenge: creation.challenge }) } });
      assertRefused(res, 'challenge unknown, used or expired');
    });

    const refusals: Array<[string, GetOverrides, string]> = [
      ['the origin is another site', { clientData: { origin: 'https://evil.example' } }, 'origin'],
      ['the origin is the host over https on another port', { clientData: { origin: 'https://localhost:3001' } }, 'origin'],
      ['the rp id hash is of another name', { rpId: 'evil.example' }, 'rp id hash'],
      ['the user was not present', { flags: FLAGS.UV }, 'user not present'],
      ['the signature is wrong', { signature: randomBytes(71) }, 'signature'],
      ['the ceremony type is webauthn.create', { clientData: { type: 'webauthn.create' } }, 'client data type'],
      ['the user handle is another one', { userHandle: randomBytes(16).toString('base64url') }, 'user handle'],
      ['the credential is unknown', { id: randomBytes(32).toString('base64url') }, 'unknown credential'],
      ['the authenticator data is made up (a zero rp id hash)', { authenticatorData: Buffer.concat([Buffer.alloc(32), Buffer.from([0x81, 0, 0, 0, 9]), Buffer.from('bfbfbfbf', 'hex')]) }, 'rp id hash'],
    ];
    for (const [what, overrides, reason] of refusals) {
      it(`refuses a sign-in when ${what} (401)`, async () => {
        const { authenticator } = await withPasskey();
        assertRefused(await signIn(server, authenticator, { overrides }), reason);
      });
    }

    it('refuses extension bytes that are not CBOR it accepts, never a 500', async () => {
      const { authenticator } = await withPasskey();
      const options = await requestOptions(server);
      const data = Buffer.concat([authenticator.assertionData('localhost', FLAGS.UP | FLAGS.ED, 5), Buffer.from('9f9f9f', 'hex')]);
      const res = await server.request({ method: 'POST', path: '/api/auth/passkey', headers: HEADERS, body: { credential: authenticator.get(options, { authenticatorData: data }) } });
      assertRefused(res, 'indefinite length');
    });

    it('refuses a sign count that went backwards or did not move, and accepts 0 from then on', async () => {
      const { user, authenticator } = await withPasskey();
      assert.equal((await signIn(server, authenticator, { overrides: { signCount: 10 } })).status, 200);
      assertRefused(await signIn(server, authenticator, { overrides: { signCount: 9 } }), 'sign count did not advance');
      assertRefused(await signIn(server, authenticator, { overrides: { signCount: 10 } }), 'sign count did not advance');
      assert.equal((await signIn(server, authenticator, { overrides: { signCount: 11 } })).status, 200);
      assert.equal((await signIn(server, authenticator, { overrides: { signCount: 0 } })).status, 200);
      assert.equal((await storedPasskeys(user.username))[0]?.['signCount'], 11);
    });

    it('refuses a credential of another account than the username the options were asked for', async () => {
      const { authenticator } = await withPasskey();
      const { user: other } = await withPasskey();
      assertRefused(await signIn(server, authenticator, { username: other.username }), 'credential of another account than the options named');
    });

    it('answers hostile or oversized credential JSON with 400 or 413, never 500', async () => {
      const { authenticator } = await withPasskey();
      const options = await requestOptions(server);
      const good = authenticator.get(options);
      const post = (body: unknown): Promise<TestResponse> => server.request({ method: 'POST', path: '/api/auth/passkey', headers: HEADERS, body });
      for (const body of [
        {},
        { credential: null },
        { credential: { ...good, id: 'x'.repeat(2000), rawId: 'x'.repeat(2000) } },
        { credential: { ...good, response: { ...good.response, signature: 'A'.repeat(1000) } } },
        { credential: { ...good, response: { ...good.response, clientDataJSON: 'A'.repeat(3000) } } },
        { credential: { ...good, response: { ...good.response, userHandle: 7 } } },
      ]) {
        assertError(await post(body), 400, 'VALIDATION_FAILED');
      }
      assertError(await post({ credential: { ...good, padding: 'x'.repeat(70_000) } }), 413, 'BODY_TOO_LARGE');
    });

    it('answers randomly mutated responses with 400 or 401 only', async () => {
      const { authenticator } = await withPasskey();
      let seed = 7;
      const next = (): number => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      for (let i = 0; i < 60; i++) {
        const options = await requestOptions(server);
        const credential = authenticator.get(options);
        const field = (['clientDataJSON', 'authenticatorData', 'signature'] as const)[i % 3] ?? 'signature';
        const bytes = Buffer.from(credential.response[field], 'base64url');
        for (let m = 0; m < 3; m++) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
        const mutated = { ...credential, response: { ...credential.response, [field]: bytes.toString('base64url') } };
        const res = await server.request({ method: 'POST', path: '/api/auth/passkey', headers: HEADERS, body: { credential: mutated } });
        assert.ok(res.status === 400 || res.status === 401, `mutation ${i} of ${field}: ${res.status} ${res.text}`);
      }
    });
  });

  describe('relying party', () => {
    it('uses https:// and the Host the browser used as the expected origin', async () => {
      const headers = { host: 'gate.example' };
      const user = await account();
      // Registered on Gatehouse's own origin (localhost here), where the account's ways in answer.
      const authenticator = newAuthenticator({ origin: ORIGIN });
      const added = await addPasskey(server, user.token, user.password, authenticator);
      assert.equal(added.status, 200, added.text);
      authenticator.origin = 'https://gate.example';
      assert.equal((await signIn(server, authenticator, { headers })).status, 200);
      authenticator.origin = 'http://gate.example';
      assertRefused(await signIn(server, authenticator, { headers }), 'origin');
      authenticator.origin = ORIGIN;
      assert.equal((await requestOptions(server, undefined, headers))['rpId'], 'gate.example');
    });

    it('ignores X-Forwarded-Host from a peer that is not a trusted proxy', async () => {
      const options = await requestOptions(server, undefined, { host: 'localhost:3000', 'x-forwarded-host': 'evil.example' });
      assert.equal(options['rpId'], 'localhost');
    });

    it('answers 400 when the Host is not a host name', async () => {
      const res = await server.request({ method: 'POST', path: '/api/auth/passkey/options', headers: { host: 'a b' }, body: {} });
      assertError(res, 400, 'VALIDATION_FAILED');
    });
  });
});

describe('passkeys with two factors required of administrators', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true' }));
  });
  after(() => server.close());

  it('lets an administrator with a password session add a passkey, whose verified sign-in then counts as two factors', async () => {
    assertError(await server.request({ path: '/api/auth/users', token: root.token }), 401, 'AUTH_REQUIRED');
    const authenticator = newAuthenticator();
    const added = await addPasskey(server, root.token, root.password, authenticator);
    assert.equal(added.status, 200, added.text);
    const verified = await signIn(server, authenticator);
    assert.equal(verified.status, 200, verified.text);
    assert.equal((await server.request({ path: '/api/auth/users', token: verified.cookieToken ?? '' })).status, 200);
    const presentOnly = await signIn(server, authenticator, { overrides: { flags: FLAGS.UP } });
    assert.equal(presentOnly.status, 200, presentOnly.text);
    assertError(await server.request({ path: '/api/auth/users', token: presentOnly.cookieToken ?? '' }), 401, 'AUTH_REQUIRED');
  });
});
