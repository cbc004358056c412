// Offline commands for accounts beyond the Flood API: `users add` without client settings and
// `users groups`, checked by starting `serve` on the data directory and asking the gate.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, httpCall, killAllChildren, removeTempDirs, runCli, startServe, tempDir, type RunResult } from '../helpers/process.js';

function assertOk(result: RunResult, what: string): void {
  assert.equal(result.code, 0, `${what} should exit 0\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

describe('gatehouse users for accounts behind the gate', () => {
  let dataDir = '';
  const users = (args: string[], stdin?: string): Promise<RunResult> => runCli(['users', ...args, '--data-dir', dataDir], stdin === undefined ? {} : { stdin });
  const storedUser = (name: string): Record<string, unknown> | undefined =>
    (JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8')) as { users: Array<Record<string, unknown>> }).users.find((user) => user['username'] === name);
  const format = (): unknown => (JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8')) as { format: unknown }).format;

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('users add without a client flag makes an account with no client settings (format 2)', async () => {
    assertOk(await users(['add', 'admin', '--level', 'ADMINISTRATOR', '--password-stdin'], 'admin-password\n'), 'users add admin');
    const stored = storedUser('admin');
    assert.ok(stored !== undefined);
    assert.equal(Object.hasOwn(stored, 'client'), false);
    assert.equal(format(), 2);
  });

  it('users groups sets, replaces and clears groups', async () => {
    assertOk(await users(['add', 'wiki', '--level', 'USER', '--password-stdin'], 'wiki-password\n'), 'users add wiki');
    const set = await users(['groups', 'wiki', 'family,media']);
    assertOk(set, 'users groups wiki family,media');
    assert.match(set.stdout, /family, media/);
    assert.deepEqual(storedUser('wiki')?.['groups'], ['family', 'media']);
    assertOk(await users(['groups', 'wiki', '']), "users groups wiki ''");
    assert.equal(Object.hasOwn(storedUser('wiki') ?? {}, 'groups'), false);
    assertOk(await users(['groups', 'wiki', 'media']), 'users groups wiki media');
  });

  for (const [what, list] of [
    ['an upper-case name', 'Media'],
    ['an empty name in the list', 'a,,b'],
    ['a repeated name', 'a,a'],
    ['33 names', Array.from({ length: 33 }, (_, index) => `g${index}`).join(',')],
    ['10,000 names', Array.from({ length: 10_000 }, () => 'a').join(',')],
  ] as const) {
    it(`users groups with ${what} exits 2 and changes nothing`, async () => {
      const result = await users(['groups', 'wiki', list]);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /GROUPS/);
      assert.ok(result.stderr.length < 1024);
      assert.deepEqual(storedUser('wiki')?.['groups'], ['media']);
    });
  }

  it('users groups on a user that does not exist exits 1', async () => {
    const result = await users(['groups', 'ghost', 'media']);
    assert.equal(result.code, 1, result.stderr);
  });

  it('the service reads the file: the account signs in and the gate admits it by group', async () => {
    const server = await startServe(['--port', '0', '--data-dir', dataDir]);
    try {
      const signedIn = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'wiki', password: 'wiki-password' } });
      assert.equal(signedIn.status, 200);
      const token = signedIn.cookieToken ?? '';
      const allowed = await httpCall(server.port, { path: '/api/auth/forward?group=media', token });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers['remote-groups'], 'media');
      const refused = await httpCall(server.port, { path: '/api/auth/forward?group=family', token });
      assert.equal(refused.status, 403);
    } finally {
      await server.stop();
    }
  });

  describe('gatehouse tokens', () => {
    const tokens = (args: string[]): Promise<RunResult> => runCli(['tokens', ...args, '--data-dir', dataDir]);
    let made = '';
    let kept = '';

    it('tokens add prints the token once on stdout and stores only its digest', async () => {
      const result = await tokens(['add', 'wiki', 'backup script', '--days', '30']);
      assertOk(result, 'tokens add');
      made = result.stdout.trim();
      assert.match(made, /^gh_[A-Za-z0-9_-]{43}$/);
      assert.match(result.stderr, /shown only now/);
      assert.ok(!readFileSync(join(dataDir, 'users.json'), 'utf8').includes(made));
      const stored = storedUser('wiki')?.['tokens'] as Array<Record<string, unknown>>;
      assert.equal(stored.length, 1);
      assert.equal(stored[0]?.['name'], 'backup script');
      assert.equal((stored[0]?.['expiresAt'] as number) - (stored[0]?.['createdAt'] as number), 30 * 86_400);
      kept = (await tokens(['add', 'wiki', 'monitor'])).stdout.trim();
    });

    it('tokens list shows id, name and times, never the token or its digest', async () => {
      const result = await tokens(['list', 'wiki']);
      assertOk(result, 'tokens list');
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 2);
      assert.match(lines[0] ?? '', /^[A-Za-z0-9_-]{16}\tbackup script\t\d{4}-.*Z\t\d{4}-.*Z\t-$/);
      assert.match(lines[1] ?? '', /\tmonitor\t.*\t-\t-$/);
      const digests = (storedUser('wiki')?.['tokens'] as Array<{ digest: string }>).map((token) => token.digest);
      for (const secret of [made, kept, ...digests]) assert.ok(!result.stdout.includes(secret));
    });

    it('the service lets the tokens through the gate, Bearer and Basic', async () => {
      const server = await startServe(['--port', '0', '--data-dir', dataDir]);
      try {
        const bearer = await httpCall(server.port, { path: '/api/auth/forward?group=media', headers: { authorization: `Bearer ${made}` } });
        assert.equal(bearer.status, 200);
        assert.equal(bearer.headers['remote-user'], 'wiki');
        const viaBasic = await httpCall(server.port, { path: '/api/auth/forward', headers: { authorization: `Basic ${Buffer.from(`wiki:${kept}`).toString('base64')}` } });
        assert.equal(viaBasic.status, 200);
      } finally {
        await server.stop();
      }
    });

    it('tokens revoke removes one token, and the gate refuses it', async () => {
      const id = (await tokens(['list', 'wiki'])).stdout.split('\t')[0] ?? '';
      assertOk(await tokens(['revoke', 'wiki', id]), 'tokens revoke');
      assert.equal((await tokens(['list', 'wiki'])).stdout.trim().split('\n').length, 1);
      const server = await startServe(['--port', '0', '--data-dir', dataDir]);
      try {
        assert.equal((await httpCall(server.port, { path: '/api/auth/forward', headers: { authorization: `Bearer ${made}` } })).status, 401);
        assert.equal((await httpCall(server.port, { path: '/api/auth/forward', headers: { authorization: `Bearer ${kept}` } })).status, 200);
      } finally {
        await server.stop();
      }
    });

    for (const [what, args, code] of [
      ['no name', ['add', 'wiki'], 2],
      ['--days 0', ['add', 'wiki', 'n', '--days', '0'], 2],
      ['--days ten', ['add', 'wiki', 'n', '--days', 'ten'], 2],
      ['an empty name', ['add', 'wiki', ''], 2],
      ['a malformed id', ['revoke', 'wiki', 'nope'], 2],
      ['an unknown id', ['revoke', 'wiki', 'AAAAAAAAAAAAAAAA'], 1],
      ['an unknown user', ['add', 'ghost', 'n'], 1],
      ['an unknown command', ['show', 'wiki'], 2],
    ] as const) {
      it(`tokens with ${what} exits ${code} and changes nothing`, async () => {
        const before = readFileSync(join(dataDir, 'users.json'), 'utf8');
        const result = await tokens([...args]);
        assert.equal(result.code, code, `${result.stdout} ${result.stderr}`);
        assert.notEqual(result.stderr.trim(), '');
        assert.equal(readFileSync(join(dataDir, 'users.json'), 'utf8'), before);
      });
    }
  });
});
