import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { streamBody } from '../helpers/attack.js';
import { CLIENT_SETTINGS, startTestServer, TEST_SECRET, type RequestOptions, type TestResponse, type TestServer } from '../helpers/server.js';

// A whole session with successes and every kind of error, recording every response and every
// log line; then none of them may hold a password, a hash, an issued token, the secret, or the
// torrent client's settings.

const PASSWORDS = {
  admin: 'Leak-Admin-Pass-7f3a9c',
  user: 'Leak-User-Pass-2b8e41',
  userChanged: 'Leak-User-Changed-91d0aa',
  wrong: 'Leak-Wrong-Guess-5c6d7e',
  overlong: `Leak-Overlong-${'z'.repeat(1100)}`,
};
const SOCKET_PATH = '/srv/leak-check/rtorrent-socket-4d2f.sock';
const QBIT_PASSWORD = 'Leak-Qbit-Pass-c0ffee';
const QBIT_URL = 'http://leak-user:Leak-Url-Pass-abcdef@127.0.0.1:8080';
const ADMIN_CLIENT = { ...CLIENT_SETTINGS, socket: SOCKET_PATH };
const USER_CLIENT = { client: 'qBittorrent', type: 'web', version: 1, url: QBIT_URL, username: 'qbit-user', password: QBIT_PASSWORD };

describe('attack: secrets leaking into responses or logs', () => {
  let server: TestServer;
  const responses: TestResponse[] = [];
  const issuedTokens = new Set<string>();

  const call = async (options: RequestOptions): Promise<TestResponse> => {
    const res = await server.request(options);
    responses.push(res);
    if (res.cookieToken !== undefined && res.cookieToken !== '') issuedTokens.add(res.cookieToken);
    return res;
  };

  before(async () => {
    server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '3', GATEHOUSE_LOG_LEVEL: 'debug' });

    const first = await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-admin', password: PASSWORDS.admin, client: ADMIN_CLIENT, level: 10 } });
    assert.equal(first.status, 200);
    const admin = first.cookieToken ?? '';
    const asAdmin = { token: admin };
    const second = await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-user', password: PASSWORDS.user, client: USER_CLIENT, level: 5 }, ...asAdmin });
    assert.equal(second.status, 200);
    server.clock.advanceSeconds(1);

    const session = await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'leak-user', password: PASSWORDS.user } });
    assert.equal(session.status, 200);
    const user = session.cookieToken ?? '';
    await call({ path: '/api/auth/verify', ...asAdmin });
    await call({ path: `/api/auth/verify?token=${user}` });
    await call({ path: '/api/auth/users', ...asAdmin });
    await call({ path: '/api/auth/users', token: user });

    // Failures, up to the throttle, carrying the secrets in every field they could echo. (What a
    // client puts in a path or a key name is its own to see again, so those hold nothing secret.)
    for (let i = 0; i < 4; i++) await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'leak-user', password: PASSWORDS.wrong } });
    await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'leak-nobody', password: PASSWORDS.wrong } });
    await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'leak-user', password: PASSWORDS.overlong } });
    await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: PASSWORDS.wrong } });
    await call({ method: 'POST', path: '/api/auth/authenticate', body: `{"username":"leak-user","password":"${PASSWORDS.wrong}` });
    await call({ method: 'POST', path: '/api/auth/authenticate', body: `username=leak-user&password=${PASSWORDS.wrong}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await call({ method: 'POST', path: '/api/auth/authenticate', body: `{"__proto__":{"password":"${PASSWORDS.wrong}"}}` });
    await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-admin', password: PASSWORDS.wrong, client: ADMIN_CLIENT, level: 10 }, ...asAdmin });
    await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-bad-level', password: PASSWORDS.wrong, client: USER_CLIENT, level: PASSWORDS.wrong } });
    await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-bad-client', password: PASSWORDS.wrong, client: { ...USER_CLIENT, extra: SOCKET_PATH }, level: 5 }, ...asAdmin });
    await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-bad-url', password: PASSWORDS.wrong, client: { ...USER_CLIENT, url: `ftp://${QBIT_PASSWORD}@x` }, level: 5 }, ...asAdmin });
    await call({ method: 'POST', path: '/api/auth/register', body: { username: 'leak-user-register', password: PASSWORDS.wrong, client: ADMIN_CLIENT, level: 5 }, token: user });
    await call({ method: 'PATCH', path: '/api/auth/users/leak-nobody', body: { password: PASSWORDS.wrong }, ...asAdmin });
    await call({ method: 'PATCH', path: '/api/auth/users/leak-admin', body: { level: 5 }, ...asAdmin });
    await call({ method: 'PATCH', path: '/api/auth/users/leak%zz', body: { password: PASSWORDS.wrong }, ...asAdmin });
    await call({ method: 'DELETE', path: '/api/auth/users/leak-admin', ...asAdmin });
    await call({ method: 'PUT', path: '/api/auth/users/leak-user', body: { password: PASSWORDS.wrong }, ...asAdmin });
    await call({ path: '/api/auth/nowhere' });
    await call({ path: '/api/auth/verify', token: `${admin.slice(0, -3)}AAA` });
    const tooLarge = await streamBody(server.port, { path: '/api/auth/authenticate', headers: { 'content-type': 'application/json', 'content-length': String(1024 * 1024) }, totalBytes: 1024 * 1024, stopAfterBytes: 1024 });
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.text.includes(PASSWORDS.wrong), false);

    // Changes, then the end of the sessions.
    const changed = await call({ method: 'PATCH', path: '/api/auth/users/leak-user', body: { password: PASSWORDS.userChanged, client: { ...USER_CLIENT, password: `${QBIT_PASSWORD}-2` } }, ...asAdmin });
    assert.equal(changed.status, 200);
    server.clock.advanceSeconds(901); // past the throttle window the failures above filled
    const again = await call({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'leak-user', password: PASSWORDS.userChanged } });
    assert.equal(again.status, 200);
    await call({ path: '/api/auth/verify', token: user });
    await call({ path: '/api/auth/logout', token: again.cookieToken ?? '' });
    await call({ path: '/api/auth/logout', ...asAdmin });
    await new Promise((resolve) => setImmediate(resolve));
  });
  after(() => server.close());

  const secrets = (): Array<[string, string]> => [
    ...Object.entries(PASSWORDS).map(([name, value]): [string, string] => [`password ${name}`, value]),
    ['a scrypt hash', '$scrypt$'],
    ['the secret', TEST_SECRET],
    ['the client socket path', SOCKET_PATH],
    ['the torrent client password', QBIT_PASSWORD],
    ['the torrent client URL with its credentials', 'Leak-Url-Pass-abcdef'],
    ...[...issuedTokens].flatMap((token, index): Array<[string, string]> => [
      [`issued token ${index}`, token],
      [`signature of issued token ${index}`, token.split('.')[2] ?? token],
    ]),
  ];

  it('issued tokens during the session (control: there is something to look for)', () => {
    assert.ok(issuedTokens.size >= 3);
    assert.ok(responses.length > 30);
    assert.ok(server.logs.length > 30);
  });

  it('puts no password, hash, token, secret or client setting in any response body', () => {
    for (const res of responses) {
      for (const [name, value] of secrets()) assert.equal(res.text.includes(value), false, `${name} in a ${res.status} body: ${res.text.slice(0, 200)}`);
    }
  });

  it('puts none of them in any response header other than the Set-Cookie that issues the token', () => {
    for (const res of responses) {
      const { 'set-cookie': _setCookie, ...rest } = res.headers;
      const text = JSON.stringify(rest);
      for (const [name, value] of secrets()) assert.equal(text.includes(value), false, `${name} in the headers of a ${res.status}`);
    }
  });

  it('puts none of them in any log line', () => {
    for (const line of server.logs) {
      for (const [name, value] of secrets()) assert.equal(line.includes(value), false, `${name} in the log line ${line.slice(0, 300)}`);
    }
  });

  it('keeps no plaintext password and no copy of the secret in the data directory', async () => {
    const files = await readdir(server.dataDir);
    assert.ok(files.includes('users.json'));
    assert.equal(files.includes('secret'), false, 'the secret came from GATEHOUSE_SECRET; no file should hold it');
    for (const file of files) {
      const text = await readFile(join(server.dataDir, file), 'utf8').catch(() => '');
      for (const [name, value] of Object.entries(PASSWORDS)) assert.equal(text.includes(value), false, `password ${name} in ${file}`);
      assert.equal(text.includes(TEST_SECRET), false, `the secret in ${file}`);
    }
  });

  it('keeps the data directory 0700 and every file in it 0600', async () => {
    assert.equal((await stat(server.dataDir)).mode & 0o777, 0o700);
    for (const file of await readdir(server.dataDir)) {
      assert.equal((await stat(join(server.dataDir, file))).mode & 0o777, 0o600, file);
    }
  });
});

describe('attack: the generated secret file', () => {
  it('is created 0600 with 32 random bytes when GATEHOUSE_SECRET is unset, and never logged or served', async () => {
    const server = await startTestServer({ GATEHOUSE_SECRET: '' });
    try {
      const path = join(server.dataDir, 'secret');
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      const encoded = (await readFile(path, 'utf8')).trim();
      assert.equal(Buffer.from(encoded, 'base64url').length, 32);
      const res = await server.request({ method: 'POST', path: '/api/auth/register', body: { username: 'secret-admin', password: 'pw', client: CLIENT_SETTINGS, level: 10 } });
      assert.equal(res.status, 200);
      assert.equal(res.text.includes(encoded), false);
      await new Promise((resolve) => setImmediate(resolve));
      for (const line of server.logs) assert.equal(line.includes(encoded), false, line);
    } finally {
      await server.close();
    }
  });
});
