import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertServerAnswers, streamBody } from '../helpers/attack.js';
import { rawExchange } from '../helpers/raw-socket.js';
import { CLIENT_SETTINGS, registerUser, startTestServer, type TestServer } from '../helpers/server.js';

// Hostile request bodies on every route that reads one. The server runs in this process, so
// prototype pollution would show up in this very test's Object.prototype.

const ADMIN = 'body-admin';
const ADMIN_PASSWORD = 'body-admin-password';
const MIB = 1024 * 1024;

interface Target {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly isAdmin: boolean;
}

const TARGETS: readonly Target[] = [
  { name: 'authenticate', method: 'POST', path: '/api/auth/authenticate', isAdmin: false },
  { name: 'register', method: 'POST', path: '/api/auth/register', isAdmin: true },
  { name: 'update', method: 'PATCH', path: '/api/auth/users/body-victim', isAdmin: true },
];

function snapshotObjectPrototype(): Map<string, PropertyDescriptor | undefined> {
  const snapshot = new Map<string, PropertyDescriptor | undefined>();
  for (const key of Reflect.ownKeys(Object.prototype)) snapshot.set(String(key), Object.getOwnPropertyDescriptor(Object.prototype, key));
  return snapshot;
}

describe('attack: hostile bodies', () => {
  let server: TestServer;
  let adminToken: string;
  const prototypeBefore = snapshotObjectPrototype();

  before(async () => {
    server = await startTestServer();
    adminToken = await registerUser(server, ADMIN, { level: 10, password: ADMIN_PASSWORD });
    await registerUser(server, 'body-victim', { level: 5, asToken: adminToken });
  });
  after(() => server.close());

  const send = (target: Target, body: string | Buffer, headers: Record<string, string> = {}) =>
    server.request({ method: target.method, path: target.path, body, headers, ...(target.isAdmin ? { token: adminToken } : {}) });

  const assertRefused = async (status: number, code: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<void> => {
    for (const target of TARGETS) {
      const res = await send(target, body, headers);
      assert.equal(res.status, status, `${target.name}: ${res.status} ${res.text}`);
      assert.equal((res.json as { code?: unknown }).code, code, target.name);
      assert.equal(res.cookieToken, undefined, `${target.name}: no cookie on a refused body`);
    }
    await assertServerAnswers(server, adminToken, ADMIN);
  };

  it('accepts a well-formed body on each route (control: the refusals below are about the body)', async () => {
    const login = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: ADMIN, password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200);
    const register = await server.request({
      method: 'POST',
      path: '/api/auth/register?cookie=false',
      body: { username: 'body-control', password: 'pw', client: CLIENT_SETTINGS, level: 5 },
      token: adminToken,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(register.status, 200);
    const update = await server.request({ method: 'PATCH', path: '/api/auth/users/body-victim', body: { client: CLIENT_SETTINGS }, token: adminToken });
    assert.equal(update.status, 200);
  });

  for (const [name, text] of [
    ['truncated JSON', '{"username":"body-admin","password":'],
    ['a single quote JSON', "{'username':'body-admin'}"],
    ['an empty body with a JSON type', ' '],
    ['trailing garbage after an object', '{"username":"a","password":"b"}x'],
    ['NaN', '{"username":NaN}'],
  ] as const) {
    it(`answers 400 INVALID_JSON to ${name}`, () => assertRefused(400, 'INVALID_JSON', text));
  }

  for (const [name, text] of [
    ['an array', '[{"username":"body-admin","password":"body-admin-password"}]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"body-admin"'],
    ['true', 'true'],
  ] as const) {
    it(`answers 400 to ${name} as the body`, async () => {
      for (const target of TARGETS) {
        const res = await send(target, text);
        assert.equal(res.status, 400, `${target.name}: ${res.status} ${res.text}`);
      }
      await assertServerAnswers(server, adminToken, ADMIN);
    });
  }

  for (const [name, text] of [
    ['a top-level __proto__ key', `{"__proto__":{"polluted":"yes","level":10},"username":"body-proto","password":"pw","client":${JSON.stringify(CLIENT_SETTINGS)},"level":5}`],
    ['a __proto__ key spelled with a unicode escape', `{"\\u005f_proto__":{"polluted":"yes"},"username":"body-proto","password":"pw"}`],
    ['a __proto__ key inside client', `{"username":"body-proto","password":"pw","level":5,"client":{"__proto__":{"polluted":"yes"},"client":"rTorrent","type":"socket","version":1,"socket":"/s"}}`],
    ['a __proto__ key deep in an array', '{"username":"body-proto","password":"pw","x":[[{"__proto__":{"polluted":"yes"}}]]}'],
    ['constructor.prototype at the top level', '{"constructor":{"prototype":{"polluted":"yes"}},"username":"body-proto","password":"pw"}'],
    ['constructor.prototype inside client', `{"username":"body-proto","password":"pw","level":5,"client":{"constructor":{"prototype":{"polluted":"yes"}},"client":"rTorrent","type":"socket","version":1,"socket":"/s"}}`],
  ] as const) {
    it(`answers 400 INVALID_JSON to ${name}, and Object.prototype is untouched`, async () => {
      await assertRefused(400, 'INVALID_JSON', text);
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      assert.equal((await server.request({ path: '/api/auth/users', token: adminToken })).text.includes('body-proto'), false);
    });
  }

  it('answers 400 to nesting 10,000 levels deep, in objects and in arrays', async () => {
    await assertRefused(400, 'INVALID_JSON', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`);
    await assertRefused(400, 'INVALID_JSON', `${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    await assertRefused(400, 'INVALID_JSON', `{"username":"a","password":"b","client":${'{"x":'.repeat(5_000)}1${'}'.repeat(5_000)}}`);
  });

  for (const [name, contentType] of [
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['multipart/form-data', 'multipart/form-data; boundary=xyz'],
    ['application/json with a latin1 charset', 'application/json; charset=latin1'],
    ['application/json with an extra parameter', 'application/json; charset=utf-8; evil=1'],
    ['application/jsonp', 'application/jsonp'],
    ['text/json', 'text/json'],
  ] as const) {
    it(`answers 415 to a JSON body sent as ${name}`, () =>
      assertRefused(415, 'UNSUPPORTED_MEDIA_TYPE', JSON.stringify({ username: ADMIN, password: ADMIN_PASSWORD }), { 'content-type': contentType }));
  }

  it('refuses a form-encoded login with 415 even when the credentials are right (login CSRF)', async () => {
    const res = await server.request({
      method: 'POST',
      path: '/api/auth/authenticate',
      body: `username=${ADMIN}&password=${ADMIN_PASSWORD}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.status, 415);
    assert.equal(res.cookieToken, undefined);
  });

  it('answers 415 to a body sent with no content type at all', async () => {
    for (const target of TARGETS) {
      const body = JSON.stringify({ username: ADMIN, password: ADMIN_PASSWORD });
      const cookie = target.isAdmin ? `Cookie: jwt=${adminToken}\r\n` : '';
      const res = await rawExchange(
        server.port,
        `${target.method} ${target.path} HTTP/1.1\r\nHost: localhost\r\n${cookie}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      assert.equal(res.status, 415, `${target.name}: ${res.text}`);
    }
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it('answers 413 to a declared 10 MB body without reading it (only 64 KiB of it is ever sent)', { timeout: 15_000 }, async () => {
    for (const target of TARGETS) {
      const res = await streamBody(server.port, {
        method: target.method,
        path: target.path,
        headers: { 'content-type': 'application/json', 'content-length': String(10 * MIB) },
        totalBytes: 10 * MIB,
        stopAfterBytes: 64 * 1024,
        ...(target.isAdmin ? { token: adminToken } : {}),
      });
      assert.equal(res.status, 413, `${target.name}: ${res.status} ${res.error ?? ''} ${res.text}`);
      assert.equal(res.headers?.['connection'], 'close', `${target.name}: the unread body must not be parsed as a next request`);
    }
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it('answers 413 (or closes the connection) to a chunked 10 MB stream with no Content-Length, then still answers', { timeout: 30_000 }, async () => {
    for (const target of TARGETS) {
      const res = await streamBody(server.port, {
        method: target.method,
        path: target.path,
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        totalBytes: 10 * MIB,
        ...(target.isAdmin ? { token: adminToken } : {}),
      });
      if (res.status !== undefined) assert.equal(res.status, 413, `${target.name}: ${res.text}`);
      else assert.ok(res.error === 'ECONNRESET' || res.error === 'EPIPE', `${target.name}: neither 413 nor a closed connection: ${res.error ?? ''}`);
      assert.ok(res.bytesWritten < 10 * MIB, `${target.name}: the server read all 10 MB instead of stopping at the cap`);
    }
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it('answers 413 to a 1 MB string in a field', async () => {
    const huge = 'p'.repeat(MIB);
    await assertRefused(413, 'BODY_TOO_LARGE', JSON.stringify({ username: huge, password: huge, client: CLIENT_SETTINGS, level: 5 }));
    await assertRefused(413, 'BODY_TOO_LARGE', JSON.stringify({ username: 'x', password: 'y', client: { ...CLIENT_SETTINGS, socket: huge }, level: 5 }));
  });

  it('answers 400 to over-long fields that fit under the body cap', async () => {
    for (const body of [
      { username: 'u'.repeat(257), password: 'pw', client: CLIENT_SETTINGS, level: 5 },
      { username: 'body-long', password: 'p'.repeat(1025), client: CLIENT_SETTINGS, level: 5 },
      { username: 'body-long', password: 'pw', client: { ...CLIENT_SETTINGS, socket: 's'.repeat(60_000) }, level: 5 },
    ]) {
      for (const target of TARGETS) {
        const res = await send(target, JSON.stringify(body));
        assert.ok(res.status === 400 || (target.name === 'authenticate' && res.status === 401), `${target.name}: ${res.status} ${res.text}`);
      }
    }
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it('answers a body with invalid UTF-8 bytes without a 500 and without admitting anyone', async () => {
    const invalid = Buffer.concat([Buffer.from('{"username":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('","password":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    const login = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: invalid });
    assert.ok(login.status === 400 || login.status === 401, `authenticate: ${login.status} ${login.text}`);
    const adminLogin = Buffer.concat([Buffer.from(`{"username":"${ADMIN}","password":"`), Buffer.from([0xff]), Buffer.from('"}')]);
    assert.notEqual((await server.request({ method: 'POST', path: '/api/auth/authenticate', body: adminLogin })).status, 200);
    const update = await server.request({ method: 'PATCH', path: '/api/auth/users/body-victim', body: invalid, token: adminToken });
    assert.notEqual(update.status, 500, update.text);
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it('answers 400 to a request carrying both Content-Length and Transfer-Encoding (request smuggling)', async () => {
    const body = '0\r\n\r\nGET /api/auth/users HTTP/1.1\r\nHost: x\r\n\r\n';
    const res = await rawExchange(
      server.port,
      `POST /api/auth/authenticate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`,
    );
    assert.equal(res.status, 400, res.text);
    assert.equal((res.text.match(/HTTP\/1\.1 /g) ?? []).length, 1, 'the smuggled request must not be answered');
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it('left Object.prototype exactly as it was after every attack above', () => {
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal(({} as Record<string, unknown>)['level'], undefined);
    assert.deepEqual(snapshotObjectPrototype(), prototypeBefore);
  });
});
