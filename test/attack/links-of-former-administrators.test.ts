// An invitation or reset link speaks for the administrator who made it, tied to that account by its
// stable id, never its name (docs/contract/links-and-sessions.md "Links and their maker"): once that
// account is demoted, deleted or renamed, its open links are withdrawn for good, and stay withdrawn
// when the account is promoted again or an account of its name is made again. Otherwise a stolen
// administrator's session leaves behind, after the account is taken back, an invitation that makes a
// new administrator or a reset link that sets another account's password.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openLinkStore } from '../../src/invitations/links.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { createAdmin, createUser, deleteUser, login, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const secretOf = (response: TestResponse): string => {
  assert.equal(response.status, 200, response.text);
  const secret = /#([A-Za-z0-9_-]{43})$/.exec((response.json as { url: string }).url)?.[1];
  assert.ok(secret !== undefined, response.text);
  return secret;
};

describe('links made by an administrator who is one no longer', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_THROTTLE_ADDRESS: '1000', GATEHOUSE_THROTTLE_USER: '1000' }));
  });
  after(() => server.close());

  const post = (path: string, body: unknown, token?: string): Promise<TestResponse> =>
    server.request({ method: 'POST', path, body, ...(token === undefined ? {} : { token }) });

  const ways: ReadonlyArray<readonly [string, (maker: TestUser) => Promise<void>]> = [
    ['demoted', async (maker) => assert.equal((await updateUser(server, root.token, maker.username, { level: 'USER' })).status, 200)],
    ['deleted', async (maker) => assert.equal((await deleteUser(server, root.token, maker.username)).status, 200)],
  ];

  for (const [how, undo] of ways) {
    it(`an administrator's invitation of an administrator opens nothing once its maker is ${how}`, async () => {
      const maker = await createAdmin(server, root.token);
      const secret = secretOf(await post('/api/auth/invites', { username: `heir-${how}`, level: 'ADMINISTRATOR' }, maker.token));
      await undo(maker);
      const checked = await post('/api/auth/join/check', { secret });
      assert.equal(checked.status, 401, checked.text);
      assert.equal((checked.json as { code: string }).code, 'INVITATION_INVALID');
      const joined = await post('/api/auth/join', { secret, password: 'attacker-password' });
      assert.equal(joined.status, 401, joined.text);
      assert.equal((await login(server, `heir-${how}`, 'attacker-password')).status, 401, 'no account was made');
    });

    it(`an administrator's reset link sets no password once its maker is ${how}`, async () => {
      const maker = await createAdmin(server, root.token);
      const victim = await createUser(server, root.token, { level: 'ADMINISTRATOR' });
      const secret = secretOf(await post(`/api/auth/users/${victim.username}/reset-link`, {}, maker.token));
      await undo(maker);
      const checked = await post('/api/auth/reset/check', { secret });
      assert.equal(checked.status, 401, checked.text);
      assert.equal((checked.json as { code: string }).code, 'RESET_LINK_INVALID');
      const reset = await post('/api/auth/reset', { secret, password: 'attacker-password' });
      assert.equal(reset.status, 401, reset.text);
      assert.equal((await login(server, victim.username, victim.password)).status, 200, 'the password is the owner\'s still');
    });
  }

  /** Undoes the maker, then brings an administrator of that name back: links must not come back with it. */
  const revivals: ReadonlyArray<readonly [string, (maker: TestUser) => Promise<void>]> = [
    ['demoted, its password changed, then promoted again', async (maker) => {
      assert.equal((await updateUser(server, root.token, maker.username, { level: 'USER' })).status, 200);
      assert.equal((await updateUser(server, root.token, maker.username, { password: 'taken-back-password' })).status, 200);
      assert.equal((await updateUser(server, root.token, maker.username, { level: 'ADMINISTRATOR' })).status, 200);
    }],
    ['deleted, then an administrator of its name made again', async (maker) => {
      assert.equal((await deleteUser(server, root.token, maker.username)).status, 200);
      await createUser(server, root.token, { username: maker.username, level: 'ADMINISTRATOR' });
    }],
    ['renamed, then renamed back', async (maker) => {
      assert.equal((await updateUser(server, root.token, maker.username, { username: `${maker.username}-moved` })).status, 200);
      assert.equal((await updateUser(server, root.token, `${maker.username}-moved`, { username: maker.username })).status, 200);
    }],
  ];

  for (const [how, revive] of revivals) {
    it(`an administrator's invitation and reset link stay withdrawn once their maker is ${how}`, async () => {
      const maker = await createAdmin(server, root.token);
      const heir = `heir-${maker.username}`;
      const invitation = secretOf(await post('/api/auth/invites', { username: heir, level: 'ADMINISTRATOR' }, maker.token));
      const victim = await createUser(server, root.token, { level: 'ADMINISTRATOR' });
      const reset = secretOf(await post(`/api/auth/users/${victim.username}/reset-link`, {}, maker.token));
      await revive(maker);

      for (const [path, body, code] of [
        ['/api/auth/join/check', { secret: invitation }, 'INVITATION_INVALID'],
        ['/api/auth/join', { secret: invitation, password: 'attacker-password' }, 'INVITATION_INVALID'],
        ['/api/auth/reset/check', { secret: reset }, 'RESET_LINK_INVALID'],
        ['/api/auth/reset', { secret: reset, password: 'attacker-password' }, 'RESET_LINK_INVALID'],
      ] as const) {
        const answer = await post(path, body);
        assert.equal(answer.status, 401, `${path}: ${answer.text}`);
        assert.equal((answer.json as { code: string }).code, code);
        assert.match((answer.json as { message: string }).message, /withdrawn/, path);
      }
      assert.equal((await login(server, heir, 'attacker-password')).status, 401, 'no account was made');
      assert.equal((await login(server, victim.username, victim.password)).status, 200, 'the password is the owner\'s still');
      const listed = await server.request({ path: '/api/auth/invites', token: root.token });
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual((listed.json as Array<{ username: unknown }>).filter((link) => link.username === heir || link.username === victim.username), [],
        'neither is listed as open');
    });
  }

  it('an administrator named as the command line\'s links are marked still loses its links once demoted', async () => {
    const maker = await createUser(server, root.token, { username: '(command line)', level: 'ADMINISTRATOR' });
    const secret = secretOf(await post('/api/auth/invites', { username: 'heir-named', level: 'ADMINISTRATOR' }, maker.token));
    assert.equal((await updateUser(server, root.token, maker.username, { level: 'USER' })).status, 200);
    const joined = await post('/api/auth/join', { secret, password: 'attacker-password' });
    assert.equal(joined.status, 401, joined.text);
    assert.equal((joined.json as { code: string }).code, 'INVITATION_INVALID');
  });

  it('links made by an administrator who still is one stay good', async () => {
    const maker = await createAdmin(server, root.token);
    const secret = secretOf(await post('/api/auth/invites', { level: 'USER' }, maker.token));
    assert.equal((await updateUser(server, root.token, maker.username, { groups: ['ops'] })).status, 200);
    assert.equal((await post('/api/auth/join/check', { secret })).status, 200);
    const joined = await post('/api/auth/join', { secret, username: 'kept-invitee', password: 'invitee-password' });
    assert.equal(joined.status, 200, joined.text);
  });
});

it('an invitation made on the command line (no account behind it) stays good', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-links-'));
  try {
    const links = await openLinkStore({ fs: realFileSystem, dataDir, nowSeconds: () => Math.floor(Date.now() / 1000), stands: () => true });
    const made = await links.makeInvitation({
      level: 'ADMINISTRATOR', expiresAt: Math.floor(Date.now() / 1000) + 3600, createdBy: undefined,
    });
    await links.close();
    const server = await startTestServer({}, { dataDir });
    try {
      const joined = await server.request({ method: 'POST', path: '/api/auth/join', body: { secret: made.secret, username: 'first', password: 'first-password' } });
      assert.equal(joined.status, 200, joined.text);
    } finally {
      await server.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
