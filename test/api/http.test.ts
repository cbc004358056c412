import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertNoCookie,
  assertError,
  assertSessionCookie,
  createUser,
  startPopulatedServer,
  uniqueName,
  type TestUser,
} from '../helpers/api.js';
import { rawExchange } from '../helpers/raw-socket.js';
import { CLIENT_SETTINGS, type RequestOptions, type TestResponse, type TestServer } from '../helpers/server.js';

const MAX_BODY_BYTES = 64 * 1024;

describe('HTTP behaviour shared by every endpoint', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  /** An authenticate body padded with an extra field to exactly `bytes` bytes. */
  const paddedLogin = (user: TestUser, bytes: number): string => {
    const base = JSON.stringify({ username: user.username, password: user.password, pad: '' });
    const padded = JSON.stringify({ username: user.username, password: user.password, pad: 'x'.repeat(bytes - Buffer.byteLength(base)) });
    assert.equal(Buffer.byteLength(padded), bytes);
    return padded;
  };

  it('returns 404 {code, message} for an unknown path', async () => {
    for (const path of ['/api/auth/nothing', '/api/nothing', '/', '/api/auth', '/api/auth/users/a/b']) {
      assertError(await server.request({ path }), 404);
    }
    assertError(await server.request({ method: 'POST', path: '/api/auth/nothing', body: {} }), 404);
  });

  it('returns 405 with an Allow header for a known path and a wrong method', async () => {
    const cases: ReadonlyArray<readonly [string, string, readonly string[]]> = [
      ['GET', '/api/auth/authenticate', ['POST']],
      ['GET', '/api/auth/register', ['POST']],
      ['POST', '/api/auth/verify', ['GET']],
      ['DELETE', '/api/auth/logout', ['GET']],
      ['PUT', '/api/auth/users', ['GET', 'POST']],
      ['PUT', `/api/auth/users/${root.username}`, ['DELETE', 'GET', 'PATCH']],
      ['POST', `/api/auth/users/${root.username}`, ['DELETE', 'GET', 'PATCH']],
      ['GET', '/api/auth/account/tokens', ['POST']],
      ['GET', '/api/auth/account/tokens/AAAAAAAAAAAAAAAA', ['DELETE']],
    ];
    for (const [method, path, allowed] of cases) {
      const res = await server.request({ method, path, token: root.token });
      assertError(res, 405);
      const allow = String(res.headers['allow']).split(',').map((item) => item.trim()).sort();
      assert.deepEqual(allow, [...allowed].sort(), `${method} ${path}`);
    }
  });

  it('returns 400 for a body that is not valid JSON', async () => {
    for (const text of ['{', '{"username": "a", "password": }', "{'username': 'a'}", 'undefined', '{"a":1}{"b":2}']) {
      assertError(await server.request({ method: 'POST', path: '/api/auth/authenticate', body: text }), 400);
      assertError(await server.request({ method: 'POST', path: '/api/auth/register', body: text, token: root.token }), 400);
    }
  });

  it('returns 400 for JSON that is not an object', async () => {
    const user = await createUser(server, root.token);
    for (const text of ['null', '[]', `[${JSON.stringify({ username: user.username, password: user.password })}]`, '"text"', '42', 'true']) {
      assertError(await server.request({ method: 'POST', path: '/api/auth/authenticate', body: text }), 400);
      assertError(await server.request({ method: 'POST', path: '/api/auth/register', body: text, token: root.token }), 400);
      assertError(await server.request({ method: 'PATCH', path: `/api/auth/users/${user.username}`, body: text, token: root.token }), 400);
    }
  });

  it('returns 415 for a body sent as text/plain or as a form', async () => {
    const user = await createUser(server, root.token);
    const json = JSON.stringify({ username: user.username, password: user.password });
    for (const [contentType, text] of [
      ['text/plain', json],
      ['text/plain;charset=UTF-8', json],
      ['application/x-www-form-urlencoded', `username=${user.username}&password=${user.password}`],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="username"\r\n\r\n${user.username}\r\n--x--\r\n`],
      ['application/jsonp', json],
      ['application/json-patch+json', json],
    ] as const) {
      const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: text, headers: { 'content-type': contentType } });
      assertError(res, 415);
    }
    const register = await server.request({
      method: 'POST',
      path: '/api/auth/register',
      body: JSON.stringify({ username: uniqueName('csrf'), password: 'csrf-password', client: CLIENT_SETTINGS, level: 10 }),
      headers: { 'content-type': 'text/plain' },
      token: root.token,
    });
    assertError(register, 415);
  });

  it('returns 415 for a JSON body with no content type at all', async () => {
    const user = await createUser(server, root.token);
    const payload = JSON.stringify({ username: user.username, password: user.password });
    const res = await rawExchange(
      server.port,
      `POST /api/auth/authenticate HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
    );
    assert.equal(res.status, 415);
    assert.equal(res.headers['set-cookie'], undefined);
  });

  it('accepts application/json with a charset parameter and in any case', async () => {
    const user = await createUser(server, root.token);
    for (const contentType of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON']) {
      const res = await server.request({
        method: 'POST',
        path: '/api/auth/authenticate',
        body: JSON.stringify({ username: user.username, password: user.password }),
        headers: { 'content-type': contentType },
      });
      assert.equal(res.status, 200, contentType);
      assertSessionCookie(res, server);
    }
  });

  it('accepts a body of exactly 64 KiB', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: paddedLogin(user, MAX_BODY_BYTES) });
    assert.equal(res.status, 200);
  });

  it('returns 413 {code, message} for a body one byte over 64 KiB', async () => {
    const user = await createUser(server, root.token);
    const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: paddedLogin(user, MAX_BODY_BYTES + 1) });
    assertError(res, 413);
  });

  it('returns 413 at once for a declared Content-Length over the limit and closes the connection', async () => {
    const head = `POST /api/auth/authenticate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n{"username":"`;
    const res = await rawExchange(server.port, head, 5000);
    assert.equal(res.status, 413);
    assert.equal(res.closedByServer, true, 'the server left the connection hanging');
    assert.equal(JSON.parse(res.body).code, 'BODY_TOO_LARGE');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });

  it('counts a chunked body without a declared length: 64 KiB is accepted, one byte more is 413', async () => {
    const user = await createUser(server, root.token);
    const send = (text: string) => {
      const half = Math.floor(text.length / 2);
      const chunks = [text.slice(0, half), text.slice(half)].map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`).join('');
      return rawExchange(
        server.port,
        `POST /api/auth/authenticate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n`,
        5000,
      );
    };
    const atLimit = await send(paddedLogin(user, MAX_BODY_BYTES));
    assert.equal(atLimit.status, 200, atLimit.body);
    const overLimit = await send(paddedLogin(user, MAX_BODY_BYTES + 1));
    assert.equal(overLimit.status, 413, overLimit.body);
    assert.equal(JSON.parse(overLimit.body).code, 'BODY_TOO_LARGE');
  });

  it('returns 413 for an oversized register body', async () => {
    const username = uniqueName('huge');
    const body = JSON.stringify({ username, password: 'huge-password', client: CLIENT_SETTINGS, level: 5, pad: 'x'.repeat(MAX_BODY_BYTES) });
    const res = await server.request({ method: 'POST', path: '/api/auth/register', body, token: root.token });
    assertError(res, 413);
    assert.equal(server.running.store.find(username), undefined);
  });

  it('sends Cache-Control: no-store and X-Content-Type-Options: nosniff on every /api/auth/* answer', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const target = await createUser(server, root.token);
    const requests: RequestOptions[] = [
      { method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password } },
      { method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: 'wrong' } },
      { method: 'POST', path: '/api/auth/authenticate', body: {} },
      { method: 'POST', path: '/api/auth/register', body: { username: uniqueName('hdr'), password: 'header-password', client: CLIENT_SETTINGS, level: 5 }, token: root.token },
      { method: 'POST', path: '/api/auth/register', body: { username: uniqueName('hdr'), password: 'header-password', client: CLIENT_SETTINGS, level: 5 } },
      { method: 'POST', path: '/api/auth/register', body: { username: uniqueName('hdr'), password: 'header-password', client: CLIENT_SETTINGS, level: 5 }, token: user.token },
      { method: 'POST', path: '/api/auth/register', body: { username: user.username, password: 'header-password', client: CLIENT_SETTINGS, level: 5 }, token: root.token },
      { path: '/api/auth/verify', token: user.token },
      { path: '/api/auth/verify' },
      { path: '/api/auth/users', token: root.token },
      { path: '/api/auth/users', token: user.token },
      { path: '/api/auth/users' },
      { method: 'PATCH', path: `/api/auth/users/${target.username}`, body: { level: 5 }, token: root.token },
      { method: 'PATCH', path: `/api/auth/users/${uniqueName('missing')}`, body: { level: 5 }, token: root.token },
      { method: 'DELETE', path: `/api/auth/users/${target.username}`, token: root.token },
      { path: '/api/auth/logout', token: user.token },
      { path: '/api/auth/logout' },
      { path: '/api/auth/nothing' },
      { method: 'PUT', path: '/api/auth/users' },
      { method: 'POST', path: '/api/auth/authenticate', body: '{', headers: { 'content-type': 'application/json' } },
      { method: 'POST', path: '/api/auth/authenticate', body: '{}', headers: { 'content-type': 'text/plain' } },
    ];
    const seen = new Set<number>();
    for (const request of requests) {
      const res = await server.request(request);
      seen.add(res.status);
      const label = `${request.method ?? 'GET'} ${request.path} -> ${res.status}`;
      assert.equal(res.headers['cache-control'], 'no-store', label);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', label);
      assert.match(String(res.headers['content-type']), /^application\/json/, label);
    }
    assert.deepEqual([...seen].sort(), [200, 400, 401, 403, 404, 405, 415, 500]);
  });

  it('answers the same with Accept "application/json, text/plain, */*" and an Origin header as with neither', async () => {
    const user = await createUser(server, root.token, { level: 10 });
    // Flood's web client is served by the site that routes /api/auth/ here: its Origin is that site's.
    const browser = { accept: 'application/json, text/plain, */*', origin: `http://127.0.0.1:${server.port}` };
    const requests: RequestOptions[] = [
      { method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password } },
      { method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: 'wrong-password' } },
      { path: '/api/auth/verify?1763752800123', token: user.token },
      { path: '/api/auth/verify' },
      { path: '/api/auth/users', token: user.token },
      { path: '/api/auth/logout', token: user.token },
    ];
    // Every issued token is unique (its jti), so the token itself is masked; the cookie's
    // attributes and everything else must match exactly.
    const comparable = (res: TestResponse): unknown => {
      const { date: _date, 'set-cookie': setCookie, ...headers } = res.headers;
      const cookies = setCookie?.map((line) => line.replace(/^jwt=[^;]+/, 'jwt=<token>'));
      return { status: res.status, headers: { ...headers, ...(cookies === undefined ? {} : { 'set-cookie': cookies }) }, text: res.text };
    };
    for (const request of requests) {
      const plain = await server.request(request);
      const fromBrowser = await server.request({ ...request, headers: browser });
      const anyAccept = await server.request({ ...request, headers: { accept: '*/*' } });
      assert.deepEqual(comparable(fromBrowser), comparable(plain), `${request.method ?? 'GET'} ${request.path}`);
      assert.deepEqual(comparable(anyAccept), comparable(plain), `${request.method ?? 'GET'} ${request.path}`);
    }
  });

  it('registers with Accept "application/json, text/plain, */*" and an Origin header', async () => {
    const username = uniqueName('browser');
    const res = await server.request({
      method: 'POST',
      path: '/api/auth/register?cookie=false',
      body: { username, password: 'browser-password', client: CLIENT_SETTINGS, level: 5 },
      headers: { accept: 'application/json, text/plain, */*', origin: `http://127.0.0.1:${server.port}` },
      token: root.token,
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { username });
  });

  it('refuses a change whose Origin names another host, or is null, with 403 CROSS_SITE_REQUEST; a read is answered', async () => {
    const user = await createUser(server, root.token, { level: 10 });
    for (const origin of ['https://flood.example.com', 'null', `http://127.0.0.2:${server.port}`]) {
      const headers = { accept: 'application/json, text/plain, */*', origin };
      const signIn = await server.request({ method: 'POST', path: '/api/auth/authenticate', headers, body: { username: user.username, password: user.password } });
      assertError(signIn, 403, 'CROSS_SITE_REQUEST');
      assertNoCookie(signIn);
      assertError(await server.request({ path: '/api/auth/logout', token: user.token, headers }), 403, 'CROSS_SITE_REQUEST');
      assert.equal((await server.request({ path: '/api/auth/verify', token: user.token, headers })).status, 200);
    }
    // The scheme is not compared: a proxy that ends TLS sends the https Origin to a plain-HTTP Gatehouse.
    const behindTls = { origin: `https://127.0.0.1:${server.port}` };
    assert.equal((await server.request({ method: 'POST', path: '/api/auth/authenticate', headers: behindTls, body: { username: user.username, password: user.password } })).status, 200);
  });

  it('ignores unknown and value-less query parameters everywhere', async () => {
    const user = await createUser(server, root.token);
    const login = await server.request({ method: 'POST', path: '/api/auth/authenticate?1763752800123&x=1&flag', body: { username: user.username, password: user.password } });
    assert.equal(login.status, 200);
    const list = await server.request({ path: '/api/auth/users?1763752800123&page=2&&=', token: root.token });
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(list.json));
  });
});
