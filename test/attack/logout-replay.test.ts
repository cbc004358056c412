import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REVOCATIONS_FILE } from '../../src/auth/revocations.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';
import { assertTokenRefused, createUser } from '../helpers/api.js';
import { startTestServer } from '../helpers/server.js';

// With --revoke-on-logout, 1,000 logouts replaying one token each rewrote
// and fsynced revoked-tokens.json; another user's logout waited behind them. Now they share
// one write, and a token already revoked costs none.

describe('attack: replaying one logout 1,000 times with --revoke-on-logout', () => {
  it('costs at most one write of the revocation file, and another user logs out normally', async () => {
    let writes = 0;
    const fileSystem: StoreFileSystem = {
      ...realFileSystem,
      async rename(from, to) {
        await realFileSystem.rename(from, to);
        if (to.endsWith(REVOCATIONS_FILE)) writes++;
      },
    };
    const server = await startTestServer({ GATEHOUSE_REVOKE_ON_LOGOUT: 'true' }, { fileSystem });
    try {
      const admin = await createUser(server, undefined, { level: 10 });
      const other = await createUser(server, admin.token);
      const replays = Array.from({ length: 1000 }, () => server.request({ path: '/api/auth/logout', token: admin.token }));
      const otherLogout = server.request({ path: '/api/auth/logout', token: other.token });
      const statuses = (await Promise.all(replays)).map((res) => res.status);
      // A replay that arrives after the revocation is on disk is refused (401): no write either.
      assert.ok(statuses.every((status) => status === 200 || status === 401), `statuses: ${[...new Set(statuses)].join(',')}`);
      assert.equal((await otherLogout).status, 200);
      assert.ok(writes <= 2, `${writes} writes of ${REVOCATIONS_FILE} (one per batch: the admin's token and the other user's)`);
      await assertTokenRefused(server, admin.token);
      await assertTokenRefused(server, other.token);
    } finally {
      await server.close();
    }
  });
});
