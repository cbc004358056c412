// `gatehouse users links` and `gatehouse users withdraw ID`: the open invitations and reset links of a
// data directory a real service filled, listed and withdrawn offline as the users page does
// (docs/contract/links-and-sessions.md "Links and their maker"); then the service, started again, agrees.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser } from '../helpers/api.js';
import { assertBuilt, removeTempDirs, runCli, tempDir, type RunResult } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('gatehouse users links and withdraw', () => {
  let dataDir = '';
  let rootName = '';
  let userName = '';
  const links: Record<'invitation' | 'reset' | 'fallen', { id: string; secret: string }> = {
    invitation: { id: '', secret: '' }, reset: { id: '', secret: '' }, fallen: { id: '', secret: '' },
  };
  const cli = (...args: string[]): Promise<RunResult> => runCli(['users', ...args, '--data-dir', dataDir]);
  const withServer = async <T>(use: (server: TestServer) => Promise<T>): Promise<T> => {
    const server = await startTestServer({}, { dataDir });
    try {
      return await use(server);
    } finally {
      await server.close();
    }
  };
  const made = (answer: { json: unknown }): { id: string; secret: string } => {
    const { id, url } = answer.json as { id: string; url: string };
    return { id, secret: url.slice(url.indexOf('#') + 1) };
  };

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
    await withServer(async (server) => {
      const root = await createUser(server, undefined, { level: 10 });
      rootName = root.username;
      const user = await createUser(server, root.token);
      userName = user.username;
      const other = await createUser(server, root.token, { level: 10 });
      links.invitation = made(await server.request({ method: 'POST', path: '/api/auth/invites', token: root.token, body: { level: 'USER', username: 'newcomer' } }));
      links.reset = made(await server.request({ method: 'POST', path: `/api/auth/users/${user.username}/reset-link`, token: root.token, body: {} }));
      // A link whose maker is deleted is withdrawn: never listed.
      links.fallen = made(await server.request({ method: 'POST', path: '/api/auth/invites', token: other.token, body: { level: 'ADMINISTRATOR' } }));
      assert.equal((await server.request({ method: 'DELETE', path: `/api/auth/users/${other.username}`, token: root.token })).status, 200);
    });
  });
  after(removeTempDirs);

  it('lists the open invitations and reset links, one a line, and as JSON', async () => {
    const listed = await cli('links');
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n').map((line) => line.split('\t'));
    assert.deepEqual(lines.map((fields) => [fields[0], fields[1], fields[2], fields[3], fields[5]]), [
      [links.invitation.id, 'invitation', 'newcomer', 'USER', rootName],
      [links.reset.id, 'reset', userName, '-', rootName],
    ]);
    for (const fields of lines) assert.match(fields[4] ?? '', /^\d{4}-\d\d-\d\dT/);
    const json = await cli('links', '--json');
    assert.equal(json.code, 0, json.stderr);
    const entries = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(entries.map((entry) => [entry['id'], entry['kind'], entry['username']]), [
      [links.invitation.id, 'invitation', 'newcomer'], [links.reset.id, 'reset', userName],
    ]);
    assert.equal(json.stdout.includes(links.reset.secret), false);
  });

  it('withdraws a reset link by its id; an unknown, fallen or malformed id fails', async () => {
    const withdrawn = await cli('withdraw', links.reset.id);
    assert.equal(withdrawn.code, 0, withdrawn.stderr);
    assert.match(withdrawn.stdout, new RegExp(`withdrew ${links.reset.id}`));
    assert.notEqual((await cli('withdraw', links.reset.id)).code, 0, 'already withdrawn');
    assert.notEqual((await cli('withdraw', links.fallen.id)).code, 0, 'its maker is gone');
    assert.notEqual((await cli('withdraw', 'not-an-id')).code, 0);
    const listed = await cli('links');
    assert.deepEqual(listed.stdout.trim().split('\n').map((line) => line.split('\t')[0]), [links.invitation.id]);
    await withServer(async (server) => {
      const reset = await server.request({ method: 'POST', path: '/api/auth/reset', body: { secret: links.reset.secret, password: 'attacker-password' } });
      assert.equal(reset.status, 401, reset.text);
      assert.match((reset.json as { message: string }).message, /withdrawn/);
      assert.equal((await server.request({ method: 'POST', path: '/api/auth/join/check', body: { secret: links.invitation.secret } })).status, 200);
    });
  });
});
