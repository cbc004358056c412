// Accounts made outside the Flood API (no client settings) and groups: POST /api/auth/users,
// GET and PATCH /api/auth/users/{name}, and the gate's ?group= with Remote-Groups.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, assertTokenWorks, createUser, login, register, startPopulatedServer, uniqueName, updateUser, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

function addAccount(server: TestServer, token: string | undefined, body: unknown): Promise<TestResponse> {
  return server.request({ method: 'POST', path: '/api/auth/users', body, ...(token === undefined ? {} : { token }) });
}

function getAccount(server: TestServer, token: string | undefined, username: string): Promise<TestResponse> {
  return server.request({ path: `/api/auth/users/${encodeURIComponent(username)}`, ...(token === undefined ? {} : { token }) });
}

function forward(server: TestServer, token: string, query: string): Promise<TestResponse> {
  return server.request({ path: `/api/auth/forward${query}`, token });
}

describe('accounts without client settings and groups', () => {
  let server: TestServer;
  let root: TestUser;
  let plain: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
    plain = await createUser(server, root.token, { level: 5 });
  });
  after(() => server.close());

  async function newAccount(body: Record<string, unknown> = {}): Promise<{ username: string; password: string; token: string }> {
    const username = uniqueName('wiki');
    const password = `${username}-pw`;
    const res = await addAccount(server, root.token, { username, password, level: 'USER', ...body });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { username });
    const signedIn = await login(server, username, password);
    assert.equal(signedIn.status, 200, signedIn.text);
    return { username, password, token: signedIn.cookieToken ?? '' };
  }

  describe('POST /api/auth/users', () => {
    it('makes an account without client settings that signs in and verifies like any other', async () => {
      const account = await newAccount();
      await assertTokenWorks(server, account.token, account.username);
      const listed = await server.request({ path: '/api/auth/users', token: root.token });
      assert.ok((listed.json as Array<{ username: string }>).some((entry) => entry.username === account.username));
    });

    it('keeps the level in the form it was written', async () => {
      const username = uniqueName('numeric');
      assert.equal((await addAccount(server, root.token, { username, password: 'pw-numeric-level', level: 10 })).status, 200);
      assert.equal((await getAccount(server, root.token, username)).json && ((await getAccount(server, root.token, username)).json as { level: unknown }).level, 10);
    });

    it('strips a client key like any unknown top-level key: the account still has no client settings', async () => {
      const username = uniqueName('stripped');
      const res = await addAccount(server, root.token, { username, password: 'pw-stripped-client', level: 'USER', client: { nonsense: true } });
      assert.equal(res.status, 200, res.text);
    });

    it('answers 401 without a session and 403 to a USER, and makes no account', async () => {
      const username = uniqueName('nobody');
      assertError(await addAccount(server, undefined, { username, password: 'long-enough-pw', level: 'USER' }), 401);
      assertError(await addAccount(server, plain.token, { username, password: 'long-enough-pw', level: 'USER' }), 403, 'NOT_ADMINISTRATOR');
      assertError(await getAccount(server, root.token, username), 500, 'USER_NOT_FOUND');
    });

    it('answers 500 USERNAME_TAKEN for a taken name, as register does', async () => {
      assertError(await addAccount(server, root.token, { username: plain.username, password: 'long-enough-pw', level: 'USER' }), 500, 'USERNAME_TAKEN');
    });

    it('refuses "." and "..", a missing password, a bad level and bad groups with 400', async () => {
      for (const body of [
        { username: '.', password: 'long-enough-pw', level: 'USER' },
        { username: '..', password: 'long-enough-pw', level: 'USER' },
        { username: uniqueName('x'), level: 'USER' },
        { username: uniqueName('x'), password: 'long-enough-pw', level: 7 },
        { username: uniqueName('x'), password: 'long-enough-pw', level: 'USER', groups: ['Staff'] },
        { username: uniqueName('x'), password: 'long-enough-pw', level: 'USER', groups: 'staff' },
      ]) {
        assertError(await addAccount(server, root.token, body), 400, 'VALIDATION_FAILED');
      }
    });

    it('still requires client settings on POST /api/auth/register, as the Flood contract says', async () => {
      const res = await register(server, { username: uniqueName('flood'), password: 'pw-flood', level: 5 }, { token: root.token, query: '?cookie=false' });
      assertError(res, 400, 'VALIDATION_FAILED');
    });
  });

  describe('groups', () => {
    it('GET /api/auth/users/{name} answers the shape the contract gives, groups included', async () => {
      const account = await newAccount({ groups: ['family', 'media_2'] });
      const res = await getAccount(server, root.token, account.username);
      assert.equal(res.status, 200, res.text);
      const { lastSignInAt, ...summary } = res.json as { lastSignInAt: unknown };
      assert.deepEqual(summary, { username: account.username, level: 'USER', groups: ['family', 'media_2'], totp: false, passkeys: 0, tokens: 0 });
      // The account signed in when it was made here: its last sign-in, in milliseconds (null: never).
      assert.ok(typeof lastSignInAt === 'number' && lastSignInAt % 1000 === 0, String(lastSignInAt));
      const none = await getAccount(server, root.token, plain.username);
      assert.deepEqual((none.json as { groups: unknown }).groups, []);
    });

    it('GET /api/auth/users/{name} is for administrators only', async () => {
      assertError(await getAccount(server, plain.token, root.username), 403, 'NOT_ADMINISTRATOR');
      assertError(await getAccount(server, undefined, root.username), 401);
    });

    it('PATCH sets and clears groups without ending the account\'s sessions', async () => {
      const account = await newAccount();
      assert.equal((await updateUser(server, root.token, account.username, { groups: ['staff'] })).status, 200);
      const { lastSignInAt: _lastSignInAt, ...summary } = (await getAccount(server, root.token, account.username)).json as { lastSignInAt: unknown };
      assert.deepEqual(summary, { username: account.username, level: 'USER', groups: ['staff'], totp: false, passkeys: 0, tokens: 0 });
      await assertTokenWorks(server, account.token, account.username);
      assert.equal((await updateUser(server, root.token, account.username, { groups: [] })).status, 200);
      assert.deepEqual(((await getAccount(server, root.token, account.username)).json as { groups: unknown }).groups, []);
      await assertTokenWorks(server, account.token, account.username);
    });

    it('a USER cannot set groups, not even their own', async () => {
      assertError(await updateUser(server, plain.token, plain.username, { groups: ['admins'] }), 403, 'NOT_ADMINISTRATOR');
      assert.deepEqual(((await getAccount(server, root.token, plain.username)).json as { groups: unknown }).groups, []);
    });

    it('refuses hostile group lists with one 400 each and changes nothing', async () => {
      const account = await newAccount({ groups: ['kept'] });
      // Short names, so the list fits under the 64 KiB body cap and reaches the checker.
      const tenThousand = Array.from({ length: 10_000 }, (_, index) => String.fromCharCode(97 + (index % 26)));
      const bodies: unknown[] = [
        { groups: tenThousand },
        { groups: Array.from({ length: 33 }, (_, index) => `g${index}`) },
        { groups: ['ok', 'ok'] },
        { groups: [''] },
        { groups: ['x'.repeat(65)] },
        { groups: ['UPPER'] },
        { groups: ['a,b'] },
        { groups: ['space here'] },
        { groups: ['ünï'] },
        { groups: [1] },
        { groups: [null] },
        { groups: { 0: 'a' } },
      ];
      for (const body of bodies) {
        const res = await updateUser(server, root.token, account.username, body);
        assertError(res, 400, 'VALIDATION_FAILED');
        assert.ok(res.text.length < 1024, `one problem, not one per name: ${res.text.length} bytes`);
      }
      assert.deepEqual(((await getAccount(server, root.token, account.username)).json as { groups: unknown }).groups, ['kept']);
    });

    it('accepts 32 groups of 64 characters', async () => {
      const groups = Array.from({ length: 32 }, (_, index) => `${String(index).padStart(2, '0')}${'x'.repeat(62)}`);
      const account = await newAccount({ groups });
      assert.deepEqual(((await getAccount(server, root.token, account.username)).json as { groups: unknown }).groups, groups);
    });
  });

  describe('the gate with ?group=', () => {
    it('admits a member of any listed group and says its groups in Remote-Groups', async () => {
      const account = await newAccount({ groups: ['media', 'family'] });
      for (const query of ['?group=family', '?group=wiki,family', '?group=media,family']) {
        const res = await forward(server, account.token, query);
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        assert.equal(res.headers['remote-user'], account.username);
        assert.equal(res.headers['remote-groups'], 'media,family');
      }
    });

    it('refuses a non-member with 403 NOT_IN_GROUP, and an account without groups too', async () => {
      const account = await newAccount({ groups: ['media'] });
      const res = await forward(server, account.token, '?group=wiki,admins');
      assertError(res, 403, 'NOT_IN_GROUP');
      assert.equal(res.headers['remote-user'], undefined);
      assertError(await forward(server, plain.token, '?group=media'), 403, 'NOT_IN_GROUP');
    });

    it('sends Remote-Groups empty when the account has none', async () => {
      const res = await forward(server, plain.token, '');
      assert.equal(res.status, 200);
      assert.equal(res.headers['remote-groups'], '');
    });

    it('with level=ADMINISTRATOR both must hold', async () => {
      const member = await newAccount({ groups: ['ops'] });
      assertError(await forward(server, member.token, '?group=ops&level=ADMINISTRATOR'), 403, 'NOT_ADMINISTRATOR');
      assertError(await forward(server, root.token, '?group=ops&level=ADMINISTRATOR'), 403, 'NOT_IN_GROUP');
      assert.equal((await updateUser(server, root.token, root.username, { groups: ['ops'] })).status, 200);
      assert.equal((await forward(server, root.token, '?group=ops&level=ADMINISTRATOR')).status, 200);
      assert.equal((await updateUser(server, root.token, root.username, { groups: [] })).status, 200);
    });

    it('takes a change of groups at once, with no new sign-in', async () => {
      const account = await newAccount();
      assertError(await forward(server, account.token, '?group=late'), 403, 'NOT_IN_GROUP');
      assert.equal((await updateUser(server, root.token, account.username, { groups: ['late'] })).status, 200);
      const res = await forward(server, account.token, '?group=late');
      assert.equal(res.status, 200);
      assert.equal(res.headers['remote-groups'], 'late');
      assert.equal((await updateUser(server, root.token, account.username, { groups: ['other'] })).status, 200);
      assertError(await forward(server, account.token, '?group=late'), 403, 'NOT_IN_GROUP');
    });

    it('fails closed with 403 INVALID_GROUP_FILTER for a group list that cannot be meant, even for a member', async () => {
      const account = await newAccount({ groups: ['a'] });
      for (const query of ['?group=', '?group=a,', '?group=A', '?group=a,,b', `?group=${'a'.repeat(10 * 1024)}`, `?group=${Array.from({ length: 2000 }, () => 'a').join(',')}`, '?group=a%00']) {
        const res = await forward(server, account.token, query);
        assertError(res, 403, 'INVALID_GROUP_FILTER');
        assert.equal(res.headers['remote-user'], undefined);
      }
    });

    it('answers 401, not 403, to a request without a session whatever the group', async () => {
      assertError(await server.request({ path: '/api/auth/forward?group=a' }), 401);
    });
  });
});
