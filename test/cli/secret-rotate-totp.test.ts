// `gatehouse secret rotate`, the built command, on a data directory where an account has TOTP:
// every session ends, every authenticator keeps working (the seed is sealed with seal.key).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { totpCode } from '../../src/totp/codes.js';
import { createUser, verify, type TestUser } from '../helpers/api.js';
import { CLI_PATH } from '../helpers/process.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

function loginWithCode(server: TestServer, user: TestUser, code: string): Promise<TestResponse> {
  return server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password, code } });
}

async function enrol(server: TestServer, user: TestUser): Promise<Buffer> {
  const begun = await server.request({ method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
  const seed = decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
  const confirmed = await server.request({ method: 'POST', path: '/api/auth/account/totp/confirm', token: user.token, body: { code: totpCode(seed, server.clock.now()) } });
  assert.equal(confirmed.status, 200, confirmed.text);
  return seed;
}

describe('gatehouse secret rotate with TOTP accounts', () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('gatehouse secret rotate (the built command) ends sessions but keeps every authenticator working', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-seal-'));
    dirs.push(dataDir);
    // No GATEHOUSE_SECRET: the secret file in the data directory, which rotate replaces.
    let server = await startTestServer({ GATEHOUSE_SECRET: '' }, { dataDir });
    let user: TestUser;
    let seed: Buffer;
    try {
      user = await createUser(server, undefined, { level: 10 });
      seed = await enrol(server, user);
      user = { ...user, token: (await loginWithCode(server, user, totpCode(seed, server.clock.now() + 30_000))).cookieToken ?? '' };
    } finally {
      await server.close();
    }
    const rotated = spawnSync(process.execPath, [CLI_PATH, 'secret', 'rotate', '--data-dir', dataDir], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(rotated.status, 0, rotated.stderr);
    server = await startTestServer({ GATEHOUSE_SECRET: '' }, { dataDir });
    try {
      assert.equal((await verify(server, user.token)).status, 401);
      server.clock.advanceSeconds(90);
      assert.equal((await loginWithCode(server, user, totpCode(seed, server.clock.now()))).status, 200);
    } finally {
      await server.close();
    }
  });

});
