// Reset links are listed and withdrawn like invitations (docs/contract/links-and-sessions.md "Links
// and their maker"): POST /api/auth/users/{name}/reset-link answers its id, GET /api/auth/invites lists
// open reset links beside invitations (`kind`), and DELETE /api/auth/invites/{id} withdraws either.
// A data directory from before links named their maker by account holds links named by their maker's
// name only: it still loads, those links are withdrawn (which account made them cannot be known), and
// nothing else is lost.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAdmin, createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const secretOf = (url: string): string => /#([A-Za-z0-9_-]{43})$/.exec(url)?.[1] ?? '';

describe('reset links beside invitations', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const post = (path: string, body: unknown, token?: string): Promise<TestResponse> =>
    server.request({ method: 'POST', path, body, ...(token === undefined ? {} : { token }) });
  const listed = async (): Promise<Array<Record<string, unknown>>> => {
    const answer = await server.request({ path: '/api/auth/invites', token: root.token });
    assert.equal(answer.status, 200, answer.text);
    return answer.json as Array<Record<string, unknown>>;
  };

  it('answers a reset link\'s id, and lists it beside invitations with its kind and account', async () => {
    const maker = await createAdmin(server, root.token);
    const user = await createUser(server, root.token);
    const made = await post(`/api/auth/users/${user.username}/reset-link`, {}, maker.token);
    assert.equal(made.status, 200, made.text);
    const reset = made.json as { id: string; url: string; expiresAt: number };
    assert.deepEqual(Object.keys(reset).sort(), ['expiresAt', 'id', 'url']);
    assert.match(reset.id, /^[A-Za-z0-9_-]{16}$/);
    const invited = (await post('/api/auth/invites', { level: 'USER', username: `${user.username}-friend` }, maker.token)).json as { id: string; expiresAt: number };

    const now = Math.floor(server.clock.now() / 1000) * 1000;
    const links = await listed();
    assert.deepEqual(links.find((link) => link['id'] === reset.id), {
      id: reset.id, kind: 'reset', username: user.username, createdAt: now, expiresAt: reset.expiresAt, createdBy: maker.username,
    });
    assert.deepEqual(links.find((link) => link['id'] === invited.id), {
      id: invited.id, kind: 'invitation', username: `${user.username}-friend`, level: 'USER', groups: [], createdAt: now,
      expiresAt: invited.expiresAt, createdBy: maker.username,
    });
    for (const link of links) assert.equal(JSON.stringify(link).includes(secretOf(reset.url)), false, 'never a secret');
  });

  it('withdraws a reset link by DELETE /api/auth/invites/{id}: it answers withdrawn and leaves the list', async () => {
    const user = await createUser(server, root.token);
    const made = (await post(`/api/auth/users/${user.username}/reset-link`, {}, root.token)).json as { id: string; url: string };
    const withdrawn = await server.request({ method: 'DELETE', path: `/api/auth/invites/${made.id}`, token: root.token });
    assert.equal(withdrawn.status, 200, withdrawn.text);
    assert.deepEqual(withdrawn.json, {});
    const used = await post('/api/auth/reset', { secret: secretOf(made.url), password: 'attacker-password' });
    assert.equal(used.status, 401, used.text);
    assert.match((used.json as { message: string }).message, /withdrawn/);
    assert.equal((await listed()).some((link) => link['id'] === made.id), false);
    const again = await server.request({ method: 'DELETE', path: `/api/auth/invites/${made.id}`, token: root.token });
    assert.equal(again.status, 404);
    assert.equal((await login(server, user.username, user.password)).status, 200);
  });

  it('lists neither a reset link whose account changed since, nor one a newer link replaced', async () => {
    const user = await createUser(server, root.token);
    const first = (await post(`/api/auth/users/${user.username}/reset-link`, {}, root.token)).json as { id: string };
    const second = (await post(`/api/auth/users/${user.username}/reset-link`, {}, root.token)).json as { id: string };
    assert.deepEqual((await listed()).filter((link) => link['username'] === user.username).map((link) => link['id']), [second.id]);
    const changed = await server.request({ method: 'POST', path: '/api/auth/account/password', token: user.token, body: { password: user.password, newPassword: 'owner-changed-it' } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual((await listed()).filter((link) => link['id'] === first.id || link['id'] === second.id), []);
  });
});

describe('a data directory whose links name their maker by name only (before links named an account)', () => {
  let dataDir = '';
  let server: TestServer | undefined;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-old-links-'));
  });
  after(async () => {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('loads; its links with a maker\'s name are withdrawn for good, a command line\'s stays good, and no account is lost', async () => {
    const first = await startTestServer({}, { dataDir });
    const root = await createUser(first, undefined, { prefix: 'root', level: 10 });
    const user = await createUser(first, root.token);
    await first.close();
    const users = JSON.parse(await readFile(join(dataDir, 'users.json'), 'utf8')) as { users: Array<{ username: string; sessionKey: string }> };
    const sessionKey = users.users.find((entry) => entry.username === user.username)?.sessionKey ?? '';

    const now = Math.floor(Date.now() / 1000);
    const secrets = { named: randomBytes(32).toString('base64url'), reset: randomBytes(32).toString('base64url'), offline: randomBytes(32).toString('base64url') };
    const digest = (secret: string): string => createHash('sha256').update(secret, 'latin1').digest('base64url');
    const common = (id: string, secret: string) => ({ id, digest: digest(secret), createdAt: now, expiresAt: now + 86_400 });
    await writeFile(join(dataDir, 'invitations.json'), JSON.stringify({
      format: 1,
      links: [
        { kind: 'invitation', ...common('aaaaaaaaaaaaaaaa', secrets.named), createdBy: root.username, username: 'heir', level: 'ADMINISTRATOR' },
        { kind: 'reset', ...common('bbbbbbbbbbbbbbbb', secrets.reset), createdBy: root.username, username: user.username, sessionKey },
        { kind: 'invitation', ...common('cccccccccccccccc', secrets.offline), level: 'USER' },
      ],
    }), { mode: 0o600 });

    server = await startTestServer({}, { dataDir });
    const post = (path: string, body: unknown): Promise<TestResponse> => (server as TestServer).request({ method: 'POST', path, body });
    for (const [path, secret] of [['/api/auth/join/check', secrets.named], ['/api/auth/reset/check', secrets.reset]] as const) {
      const answer = await post(path, { secret });
      assert.equal(answer.status, 401, `${path}: ${answer.text}`);
      assert.match((answer.json as { message: string }).message, /withdrawn/);
    }
    const rootSession = (await login(server, root.username, root.password)).cookieToken ?? '';
    assert.ok(rootSession !== '', 'the administrator still signs in');
    const open = (await server.request({ path: '/api/auth/invites', token: rootSession })).json as Array<{ id: string }>;
    assert.deepEqual(open.map((link) => link.id), ['cccccccccccccccc']);
    const joined = await post('/api/auth/join', { secret: secrets.offline, username: 'newcomer', password: 'newcomer-password' });
    assert.equal(joined.status, 200, joined.text);
    assert.equal((await login(server, user.username, user.password)).status, 200, 'the other account is untouched');
  });
});
