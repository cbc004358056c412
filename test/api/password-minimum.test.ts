// The shortest password each route takes (docs/configuration.md, --min-password-length): Gatehouse's
// own routes (join, reset, the account's password, POST /api/auth/users) refuse fewer than 12
// characters by default; the Flood endpoints that set a password (register, PATCH /api/auth/users)
// keep Flood's contract (1). When --min-password-length is set, it is the minimum of both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, login, register, startPopulatedServer, uniqueName, updateUser, type TestUser } from '../helpers/api.js';
import { CLIENT_SETTINGS, type TestResponse, type TestServer } from '../helpers/server.js';

const ELEVEN = 'eleven-char';
const TWELVE = 'twelve-chars';

function post(server: TestServer, path: string, body: unknown, token?: string): Promise<TestResponse> {
  return server.request({ method: 'POST', path, body, ...(token === undefined ? {} : { token }) });
}

function assertTooShort(response: TestResponse, field: string, minimum: number, what: string): void {
  assert.equal(response.status, 400, `${what}: ${response.text}`);
  assert.deepEqual(response.json, { code: 'VALIDATION_FAILED', message: `${field}: must be at least ${minimum} characters` }, what);
}

/** The secret of a link the API made (the part after '#'). */
function secretOf(response: TestResponse): string {
  assert.equal(response.status, 200, response.text);
  const secret = /#([A-Za-z0-9_-]{43})$/.exec((response.json as { url: string }).url)?.[1];
  assert.ok(secret !== undefined);
  return secret;
}

/** Each of Gatehouse's own routes that sets a password, tried with `password`; resolves with the answers, by route. */
async function ownRoutes(server: TestServer, root: TestUser, password: string): Promise<Record<string, TestResponse>> {
  const owner = await createUser(server, root.token);
  const forgetful = await createUser(server, root.token);
  const invitation = secretOf(await post(server, '/api/auth/invites', { level: 'USER' }, root.token));
  const reset = secretOf(await post(server, `/api/auth/users/${encodeURIComponent(forgetful.username)}/reset-link`, {}, root.token));
  return {
    'POST /api/auth/users': await post(server, '/api/auth/users', { username: uniqueName('made'), password, level: 'USER' }, root.token),
    'POST /api/auth/join': await post(server, '/api/auth/join', { secret: invitation, username: uniqueName('joined'), password }),
    'POST /api/auth/reset': await post(server, '/api/auth/reset', { secret: reset, password }),
    'POST /api/auth/account/password': await post(server, '/api/auth/account/password', { password: owner.password, newPassword: password }, owner.token),
  };
}

const FIELDS: Readonly<Record<string, string>> = { 'POST /api/auth/account/password': 'newPassword' };

describe('the password minimum by default', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it("refuses a password of 11 characters on Gatehouse's own routes, with the minimum in the message", async () => {
    for (const [route, answer] of Object.entries(await ownRoutes(server, root, ELEVEN))) {
      assertTooShort(answer, FIELDS[route] ?? 'password', 12, route);
    }
  });

  it("takes a password of 12 characters on Gatehouse's own routes", async () => {
    for (const [route, answer] of Object.entries(await ownRoutes(server, root, TWELVE))) {
      assert.equal(answer.status, 200, `${route}: ${answer.text}`);
    }
  });

  it("keeps Flood's contract on register and PATCH /api/auth/users: one character is enough", async () => {
    const name = uniqueName('flood');
    const registered = await register(server, { username: name, password: 'x', client: CLIENT_SETTINGS, level: 'USER' }, { token: root.token });
    assert.equal(registered.status, 200, registered.text);
    assert.equal((await login(server, name, 'x')).status, 200);
    const updated = await updateUser(server, root.token, name, { password: 'y' });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await login(server, name, 'y')).status, 200);
  });
});

describe('the password minimum with --min-password-length', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_MIN_PASSWORD_LENGTH: '8' }));
  });
  after(() => server.close());

  it("is the minimum of Gatehouse's own routes too, lower than 12 when set so", async () => {
    for (const [route, answer] of Object.entries(await ownRoutes(server, root, '7-chars'))) {
      assertTooShort(answer, FIELDS[route] ?? 'password', 8, route);
    }
    for (const [route, answer] of Object.entries(await ownRoutes(server, root, '8-chars!'))) {
      assert.equal(answer.status, 200, `${route}: ${answer.text}`);
    }
  });

  it('is the minimum of register and PATCH /api/auth/users', async () => {
    const name = uniqueName('flood');
    assertTooShort(await register(server, { username: name, password: '7-chars', client: CLIENT_SETTINGS, level: 'USER' }, { token: root.token }), 'password', 8, 'register');
    const user = await createUser(server, root.token, { password: '8-chars!' });
    assertTooShort(await updateUser(server, root.token, user.username, { password: '7-chars' }), 'password', 8, 'PATCH');
  });
});
