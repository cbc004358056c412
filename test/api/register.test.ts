import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  assertError,
  assertJsonContentType,
  assertNoCookie,
  assertSessionCookie,
  assertTokenWorks,
  CONFIGS,
  createUser,
  deleteUser,
  listUsers,
  login,
  register,
  startPopulatedServer,
  uniqueName,
  updateUser,
  verify,
  withServer,
  type TestUser,
} from '../helpers/api.js';
import { CLIENT_SETTINGS, type TestResponse, type TestServer } from '../helpers/server.js';

// docs/contract/flood-api.md "Responses": the first user may be a USER; the service warns that no administrator exists.
const NO_ADMINISTRATOR_WARNING = /administrator/i;

function warnings(server: TestServer): Array<Record<string, unknown>> {
  return server.logs.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry['level'] === 'warn' ? [entry] : [];
    } catch {
      return [];
    }
  });
}

function body(username: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { username, password: `${username}-pw`, client: CLIENT_SETTINGS, level: 5, ...overrides };
}

describe('POST /api/auth/register in the initial condition', () => {
  it('registers the first user without credentials, answers {success, username, level} and sets the session cookie', () =>
    withServer(async (server) => {
      const username = uniqueName('first');
      const res = await register(server, body(username, { level: 10 }));
      assert.equal(res.status, 200);
      assertJsonContentType(res);
      assert.deepEqual(res.json, { success: true, username, level: 10 });
      const token = assertSessionCookie(res, server);
      const check = await verify(server, token);
      assert.deepEqual(check.json, { initialUser: false, username, level: 10, configs: CONFIGS });
    }));

  it('leaves the initial condition once the first user exists', () =>
    withServer(async (server) => {
      assert.deepEqual((await verify(server, undefined)).json, { initialUser: true, configs: CONFIGS });
      assert.equal((await register(server, body(uniqueName('first'), { level: 10 }))).status, 200);
      const res = await verify(server, undefined);
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { configs: CONFIGS });
    }));

  it('answers exactly {username} and sets no cookie for the first user with ?cookie=false', () =>
    withServer(async (server) => {
      const username = uniqueName('first');
      const res = await register(server, body(username, { level: 10 }), { query: '?cookie=false' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { username });
      assertNoCookie(res);
      const loggedIn = await login(server, username, `${username}-pw`);
      assert.equal(loggedIn.status, 200);
    }));

  it('accepts a first user with level USER and logs a warning that no administrator exists', () =>
    withServer(async (server) => {
      const username = uniqueName('first-user');
      const res = await register(server, body(username, { level: 'USER' }));
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true, username, level: 'USER' });
      await nextTurn();
      const found = warnings(server).filter((entry) => NO_ADMINISTRATOR_WARNING.test(String(entry['msg'])));
      assert.equal(found.length, 1, `warnings were: ${JSON.stringify(warnings(server))}`);
    }));

  it('logs no such warning when the first user is an administrator', () =>
    withServer(async (server) => {
      assert.equal((await register(server, body(uniqueName('first-admin'), { level: 'ADMINISTRATOR' }))).status, 200);
      await nextTurn();
      assert.deepEqual(warnings(server).filter((entry) => NO_ADMINISTRATOR_WARNING.test(String(entry['msg']))), []);
    }));

  it('returns 400 with no cookie for an invalid first user and stays in the initial condition', () =>
    withServer(async (server) => {
      const res = await register(server, body(uniqueName('first'), { level: 'SUPERUSER' }));
      assertError(res, 400);
      assert.deepEqual((await verify(server, undefined)).json, { initialUser: true, configs: CONFIGS });
    }));
});

describe('POST /api/auth/register once users exist', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const isStored = (username: string): boolean => server.running.store.find(username) !== undefined;

  /** Registers as root with one field changed and expects 400 {code, message}, no cookie, nothing stored. */
  async function assertRefused(overrides: Record<string, unknown>, expectedStatus = 400): Promise<void> {
    const username = typeof overrides['username'] === 'string' ? overrides['username'] : uniqueName('refused');
    const res = await register(server, body(username, overrides), { token: root.token });
    assertError(res, expectedStatus);
    assert.equal(isStored(username), false, `${JSON.stringify(username)} was stored anyway`);
  }

  it('returns 401 with no cookie when a later registration has no credentials', async () => {
    const username = uniqueName('anon');
    const res = await register(server, body(username));
    assertError(res, 401);
    assert.equal(isStored(username), false);
  });

  it('returns 401 with no cookie when the credential is not a valid token', async () => {
    const username = uniqueName('forged');
    assertError(await register(server, body(username), { token: 'eyJhbGciOiJIUzI1NiJ9.e30.bad' }), 401);
    assert.equal(isStored(username), false);
  });

  it('returns 403 with no cookie when a non-admin registers a user', async () => {
    for (const level of [5, 'USER'] as const) {
      const user = await createUser(server, root.token, { level });
      const username = uniqueName('by-user');
      const res = await register(server, body(username, { level: 10 }), { token: user.token });
      assertError(res, 403);
      assert.equal(isStored(username), false);
    }
  });

  // docs/contract/flood-api.md "Authentication", rule 7: once users exist, the credential decides
  // first; a caller who may not register learns nothing about what a valid body would look like.
  it('returns 401 or 403, not 400, for an invalid body from a caller who may not register', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const invalid = body(uniqueName('invalid'), { level: 'SUPERUSER', client: { client: 'uTorrent' } });
    assertError(await register(server, invalid), 401);
    assertError(await register(server, invalid, { token: user.token }), 403);
  });

  it('registers a user for an admin and hands out the NEW user\'s session cookie', async () => {
    const username = uniqueName('added');
    const res = await register(server, body(username, { level: 'USER' }), { token: root.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { success: true, username, level: 'USER' });
    const token = assertSessionCookie(res, server);
    assert.notEqual(token, root.token);
    await assertTokenWorks(server, token, username);
    await assertTokenWorks(server, root.token, root.username);
  });

  it('lets an admin registered with "ADMINISTRATOR" register users', async () => {
    const admin = await createUser(server, root.token, { level: 'ADMINISTRATOR' });
    const res = await register(server, body(uniqueName('by-string-admin')), { token: admin.token });
    assert.equal(res.status, 200);
  });

  it('answers exactly {username} and leaves the admin\'s cookie alone with ?cookie=false', async () => {
    const username = uniqueName('quiet');
    const res = await register(server, body(username), { token: root.token, query: '?cookie=false' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username });
    assertNoCookie(res);
    assert.equal(isStored(username), true);
    await assertTokenWorks(server, root.token, root.username);
  });

  it('sets the cookie when cookie is anything other than false', async () => {
    for (const query of ['?cookie=true', '?cookie=1', '?cookie=', '?cookie', '?1763752800123']) {
      const username = uniqueName('cookie');
      const res = await register(server, body(username), { token: root.token, query });
      assert.equal(res.status, 200, query);
      assert.deepEqual(res.json, { success: true, username, level: 5 }, query);
      assertSessionCookie(res, server);
    }
  });

  it('returns 500 USERNAME_TAKEN with no cookie for a duplicate username', async () => {
    const user = await createUser(server, root.token);
    const res = await register(server, body(user.username, { password: 'another-password', level: 10 }), { token: root.token });
    assertError(res, 500, 'USERNAME_TAKEN');
    const stillOld = await login(server, user.username, user.password);
    assert.deepEqual(stillOld.json, { success: true, username: user.username, level: 5 });
  });

  it('returns 500 USERNAME_TAKEN with no cookie for a duplicate even with ?cookie=false', async () => {
    const user = await createUser(server, root.token);
    assertError(await register(server, body(user.username), { token: root.token, query: '?cookie=false' }), 500, 'USERNAME_TAKEN');
  });

  it('keeps usernames exactly as sent: names differing in spaces are different users; one differing only in case is taken', async () => {
    const base = uniqueName('Exact');
    for (const username of [base, ` ${base}`, `${base} `]) {
      const res = await register(server, body(username), { token: root.token, query: '?cookie=false' });
      assert.equal(res.status, 200, JSON.stringify(username));
      assert.deepEqual(res.json, { username });
    }
    assertError(await register(server, body(base.toLowerCase()), { token: root.token, query: '?cookie=false' }), 500, 'USERNAME_TAKEN');
    const list = (await listUsers(server, root.token)).json as Array<{ username: string }>;
    for (const username of [base, ` ${base}`, `${base} `]) {
      assert.equal(list.filter((entry) => entry.username === username).length, 1, JSON.stringify(username));
    }
    assert.equal(list.filter((entry) => entry.username === base.toLowerCase()).length, 0);
  });

  it('accepts unicode, spaces and punctuation in a username', async () => {
    const username = uniqueName('Zoë 名前 o\'brien+tag@example.com');
    const res = await register(server, body(username), { token: root.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { success: true, username, level: 5 });
  });

  it('strips unknown top-level fields: they do not fail and show up nowhere', async () => {
    const username = uniqueName('stripped');
    const marker = uniqueName('MARKER');
    const res = await register(
      server,
      { ...body(username), isAdmin: true, role: marker, [marker]: marker, success: false, credentialsChangedAt: 0 },
      { token: root.token },
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { success: true, username, level: 5 });
    const token = assertSessionCookie(res, server);
    const answers: TestResponse[] = [
      res,
      await verify(server, token),
      await login(server, username, `${username}-pw`),
      await listUsers(server, root.token),
    ];
    for (const answer of answers) {
      assert.equal(answer.text.includes(marker), false, answer.text);
      assert.equal(answer.text.includes('isAdmin'), false, answer.text);
    }
    assert.equal((await listUsers(server, token)).status, 403);
    for (const file of await readdir(server.dataDir)) {
      const text = await readFile(join(server.dataDir, file), 'utf8').catch(() => '');
      assert.equal(text.includes(marker), false, `${file} holds a stripped field`);
    }
  });

  const CLIENT_SHAPES: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ['rTorrent over a socket', { client: 'rTorrent', type: 'socket', version: 1, socket: '/run/rtorrent.sock' }],
    ['rTorrent over tcp', { client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 5000 }],
    ['rTorrent over tcp on port 1', { client: 'rTorrent', type: 'tcp', version: 1, host: '10.0.0.2', port: 1 }],
    ['rTorrent over tcp on port 65535', { client: 'rTorrent', type: 'tcp', version: 1, host: 'seedbox', port: 65535 }],
    ['qBittorrent over http', { client: 'qBittorrent', type: 'web', version: 1, url: 'http://localhost:8080', username: 'admin', password: 'adminadmin' }],
    ['qBittorrent over https with empty credentials', { client: 'qBittorrent', type: 'web', version: 1, url: 'https://qb.example.com/', username: '', password: '' }],
    ['Transmission', { client: 'Transmission', type: 'rpc', version: 1, url: 'http://localhost:9091/transmission/rpc', username: 'u', password: 'p' }],
    ['Deluge', { client: 'Deluge', type: 'rpc', version: 1, host: 'localhost', port: 58846, username: 'localclient', password: 'secret' }],
  ];
  for (const [name, client] of CLIENT_SHAPES) {
    it(`accepts client settings for ${name}`, async () => {
      const username = uniqueName('client-ok');
      const res = await register(server, body(username, { client }), { token: root.token });
      assert.equal(res.status, 200, res.text);
      assert.equal(isStored(username), true);
    });
  }

  const BAD_CLIENTS: ReadonlyArray<readonly [string, unknown]> = [
    ['an unknown key inside client', { ...CLIENT_SETTINGS, extra: 'x' }],
    ['an unknown key from another shape', { ...CLIENT_SETTINGS, host: 'localhost' }],
    ['version 2', { ...CLIENT_SETTINGS, version: 2 }],
    ['version "1" as a string', { ...CLIENT_SETTINGS, version: '1' }],
    ['no version', { client: 'rTorrent', type: 'socket', socket: '/run/rtorrent.sock' }],
    ['a client kind outside the allowed set', { ...CLIENT_SETTINGS, client: 'uTorrent' }],
    ['a client kind in the wrong case', { ...CLIENT_SETTINGS, client: 'rtorrent' }],
    ['no client kind', { type: 'socket', version: 1, socket: '/run/rtorrent.sock' }],
    ['a type the kind does not have', { ...CLIENT_SETTINGS, type: 'web' }],
    ['a type that is not a string', { ...CLIENT_SETTINGS, type: 1 }],
    ['a missing required field', { client: 'rTorrent', type: 'socket', version: 1 }],
    ['an empty socket path', { ...CLIENT_SETTINGS, socket: '' }],
    ['an empty tcp host', { client: 'rTorrent', type: 'tcp', version: 1, host: '', port: 5000 }],
    ['port 0', { client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 0 }],
    ['port 65536', { client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 65536 }],
    ['a fractional port', { client: 'Deluge', type: 'rpc', version: 1, host: 'localhost', port: 58846.5, username: 'u', password: 'p' }],
    ['a port as a string', { client: 'Deluge', type: 'rpc', version: 1, host: 'localhost', port: '58846', username: 'u', password: 'p' }],
    ['an ftp url', { client: 'qBittorrent', type: 'web', version: 1, url: 'ftp://localhost:8080', username: 'u', password: 'p' }],
    ['a file url', { client: 'Transmission', type: 'rpc', version: 1, url: 'file:///etc/passwd', username: 'u', password: 'p' }],
    ['a javascript url', { client: 'qBittorrent', type: 'web', version: 1, url: 'javascript:alert(1)', username: 'u', password: 'p' }],
    ['a url that does not parse', { client: 'qBittorrent', type: 'web', version: 1, url: 'not a url', username: 'u', password: 'p' }],
    ['a web client without its password', { client: 'qBittorrent', type: 'web', version: 1, url: 'http://localhost:8080', username: 'u' }],
    ['a string instead of an object', 'rTorrent'],
    ['null', null],
    ['an array', [CLIENT_SETTINGS]],
  ];
  for (const [name, client] of BAD_CLIENTS) {
    it(`returns 400 with no cookie for client settings with ${name}`, () => assertRefused({ client }));
  }

  it('returns 400 when client is missing', async () => {
    const username = uniqueName('no-client');
    const { client: _omitted, ...rest } = body(username);
    assertError(await register(server, rest, { token: root.token }), 400);
    assert.equal(isStored(username), false);
  });

  for (const level of [1, 0, 10.5, '10', '5', 'admin', 'Administrator', 'user', 'SUPERUSER', null, true, [10], { level: 10 }]) {
    it(`returns 400 for level ${JSON.stringify(level)}`, () => assertRefused({ level }));
  }

  it('returns 400 when level is missing', async () => {
    const username = uniqueName('no-level');
    const { level: _omitted, ...rest } = body(username);
    assertError(await register(server, rest, { token: root.token }), 400);
    assert.equal(isStored(username), false);
  });

  it('returns 400 for an empty username', () => assertRefused({ username: '' }));

  it('returns 400 for a 257-character username and accepts one of 256', async () => {
    await assertRefused({ username: 'u'.repeat(257) });
    const username = `${uniqueName('long')}-`.padEnd(256, 'u');
    assert.equal(username.length, 256);
    const res = await register(server, body(username), { token: root.token });
    assert.equal(res.status, 200);
  });

  for (const [name, character] of [
    ['NUL', '\u0000'],
    ['a newline', '\n'],
    ['a tab', '\t'],
    ['U+001F', '\u001f'],
    ['DEL (U+007F)', '\u007f'],
  ] as const) {
    it(`returns 400 for a username containing ${name}`, () => assertRefused({ username: `${uniqueName('ctl')}${character}x` }));
  }

  it('returns 400 for a username that is not a string', async () => {
    await assertRefused({ username: 12345 });
    await assertRefused({ username: null });
  });

  it('returns 400 when username is missing', async () => {
    const { username: _omitted, ...rest } = body('unused');
    assertError(await register(server, rest, { token: root.token }), 400);
  });

  it('returns 400 for an empty password', () => assertRefused({ password: '' }));

  it('returns 400 for a 1,025-character password and accepts one of 1,024', async () => {
    await assertRefused({ password: 'p'.repeat(1025) });
    const username = uniqueName('long-pw');
    const password = 'p'.repeat(1024);
    assert.equal((await register(server, body(username, { password }), { token: root.token })).status, 200);
    assert.equal((await login(server, username, password)).status, 200);
  });

  it('accepts a one-character password', async () => {
    const username = uniqueName('short-pw');
    assert.equal((await register(server, body(username, { password: 'x' }), { token: root.token })).status, 200);
    assert.equal((await login(server, username, 'x')).status, 200);
  });

  it('returns 400 for a password that is not a string', () => assertRefused({ password: 12345678 }));

  it('returns 400 when password is missing', async () => {
    const username = uniqueName('no-pw');
    const { password: _omitted, ...rest } = body(username);
    assertError(await register(server, rest, { token: root.token }), 400);
    assert.equal(isStored(username), false);
  });

  it('returns 400 for an empty object, an array, and a JSON string as the body', async () => {
    assertError(await register(server, {}, { token: root.token }), 400);
    assertError(await register(server, [body(uniqueName('in-array'))], { token: root.token }), 400);
    assertError(await register(server, JSON.stringify(JSON.stringify(body(uniqueName('in-string')))), { token: root.token }), 400);
  });

  it('never returns client settings from any endpoint', async () => {
    const marker = uniqueName('torrent-client-secret');
    const client = { client: 'qBittorrent', type: 'web', version: 1, url: `http://${marker}.example:8080`, username: marker, password: marker };
    const username = uniqueName('secretive');
    const registered = await register(server, body(username, { client, level: 10 }), { token: root.token });
    assert.equal(registered.status, 200);
    const token = assertSessionCookie(registered, server);
    const renamed = uniqueName('secretive-renamed');
    const answers: TestResponse[] = [
      registered,
      await register(server, body(uniqueName('quiet'), { client }), { token: root.token, query: '?cookie=false' }),
      await login(server, username, `${username}-pw`),
      await verify(server, token),
      await listUsers(server, token),
      await updateUser(server, root.token, username, { client: { ...client, password: `${marker}-2` } }),
      await updateUser(server, root.token, username, { username: renamed }),
      await deleteUser(server, root.token, renamed),
    ];
    for (const answer of answers) {
      assert.ok(answer.status === 200, answer.text);
      assert.equal(answer.text.includes(marker), false, answer.text);
      assert.equal(answer.text.includes('"client"'), false, answer.text);
      assert.equal(JSON.stringify(answer.headers).includes(marker), false);
    }
  });
});

describe('POST /api/auth/register with a configured minimum password length', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_MIN_PASSWORD_LENGTH: '8' }));
  });
  after(() => server.close());

  it('returns 400 for a password shorter than the minimum and accepts one of exactly the minimum', async () => {
    const short = uniqueName('short');
    assertError(await register(server, body(short, { password: '1234567' }), { token: root.token }), 400);
    assert.equal(server.running.store.find(short), undefined);
    const exact = uniqueName('exact');
    assert.equal((await register(server, body(exact, { password: '12345678' }), { token: root.token })).status, 200);
  });
});
