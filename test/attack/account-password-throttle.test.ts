// The account routes confirm the current password under the same login throttle as sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const codeOf = (response: TestResponse): unknown => (response.json as { code?: unknown } | undefined)?.code;
const post = (server: TestServer, path: string, token: string, body: unknown) => server.request({ method: 'POST', path, body, token });

describe('the current password on the account routes, under the login throttle', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_THROTTLE_USER: '3' }));
  });
  after(() => server.close());

  it('wrong current passwords count; then even the right one gets 429, and so does sign-in', async () => {
    const user = await createUser(server, root.token);
    for (let i = 0; i < 3; i++) {
      const wrong = await post(server, '/api/auth/account/totp', user.token, { password: 'nope' });
      assert.deepEqual([wrong.status, codeOf(wrong)], [403, 'WRONG_PASSWORD']);
    }
    const right = await post(server, '/api/auth/account/totp', user.token, { password: user.password });
    assert.equal(right.status, 429);
    assert.ok(Number(right.headers['retry-after']) > 0);
    assert.equal((await login(server, user.username, user.password)).status, 429);
  });

  it('a right current password does not clear earlier failures (sign-in failures included)', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await login(server, user.username, 'nope')).status, 401);
    assert.equal((await login(server, user.username, 'nope')).status, 401);
    assert.equal((await post(server, '/api/auth/account/totp', user.token, { password: user.password })).status, 200);
    assert.equal((await post(server, '/api/auth/account/totp', user.token, { password: 'nope' })).status, 403);
    assert.equal((await login(server, user.username, user.password)).status, 429);
  });
});
