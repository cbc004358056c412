import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createProxyTrust } from '../../src/http/client-address.js';
import { openUserStore, StoreCorrupt } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js';

// Each of these pins a weakness found in review, so it cannot come back.

describe('attack: credentials come before the body', () => {
  let server: TestServer;
  let userToken: string;
  before(async () => {
    server = await startTestServer();
    const adminToken = await registerUser(server, 'rf-admin', { level: 10 });
    userToken = await registerUser(server, 'rf-user', { level: 5, asToken: adminToken });
  });
  after(() => server.close());

  const hostileBodies: ReadonlyArray<{ name: string; body: string; contentType: string }> = [
    { name: 'a text/plain body', body: 'hello', contentType: 'text/plain' },
    { name: 'invalid JSON', body: '{bad', contentType: 'application/json' },
    { name: 'a body over the cap', body: 'x'.repeat(70 * 1024), contentType: 'application/json' },
  ];
  for (const { name, body, contentType } of hostileBodies) {
    it(`answers 401 to register without credentials and with ${name}`, async () => {
      const res = await server.request({ method: 'POST', path: '/api/auth/register', body, headers: { 'content-type': contentType } });
      assert.equal(res.status, 401);
      assert.equal(res.headers['set-cookie'], undefined);
    });
    it(`answers 401 to update without credentials and with ${name}`, async () => {
      const res = await server.request({ method: 'PATCH', path: '/api/auth/users/rf-user', body, headers: { 'content-type': contentType } });
      assert.equal(res.status, 401);
    });
    it(`answers 403 to update by a non-administrator with ${name}`, async () => {
      const res = await server.request({ method: 'PATCH', path: '/api/auth/users/rf-user', body, token: userToken, headers: { 'content-type': contentType } });
      assert.equal(res.status, 403);
    });
  }
});

describe('attack: a busy server does not lock accounts', () => {
  let server: TestServer;
  before(async () => {
    // No queue: a login that finds the one hashing slot taken gets 503 at once.
    server = await startTestServer({ GATEHOUSE_HASH_QUEUE: '0', GATEHOUSE_HASH_CONCURRENCY: '1', GATEHOUSE_THROTTLE_USER: '2' });
    await registerUser(server, 'rf-busy', { level: 10, password: 'rf-busy-password' });
  });
  after(() => server.close());

  it('does not count logins refused with 503 as failures', async () => {
    const login = () => server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'rf-busy', password: 'rf-busy-password' } });
    const statuses = (await Promise.all(Array.from({ length: 12 }, login))).map((res) => res.status);
    assert.ok(statuses.includes(503), `expected some 503s: ${statuses.join(',')}`);
    assert.ok(!statuses.includes(429), `503s were counted as failures: ${statuses.join(',')}`);
    assert.equal((await login()).status, 200);
    const busy = (await Promise.all(Array.from({ length: 3 }, login))).find((res) => res.status === 503);
    if (busy !== undefined) {
      assert.equal(busy.headers['retry-after'], '1');
      assert.deepEqual(Object.keys(busy.json as object).sort(), ['code', 'message']);
    }
  });
});

describe('attack: clients that go away', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('logs no error and no stack when a client aborts halfway through a body', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write('POST /api/auth/authenticate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"username":');
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
      socket.on('error', () => undefined);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const errors = server.logs.filter((line) => line.includes('"level":"error"'));
    assert.deepEqual(errors, []);
    assert.equal((await server.request({ path: '/api/auth/verify' })).status, 200);
  });
});

describe('attack: secrets in start-up errors', () => {
  it('does not quote the users file when it is not valid JSON', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-corrupt-'));
    const secretish = 'TorrentClientPassword123';
    try {
      await writeFile(join(dataDir, 'users.json'), `{"format":1,"users":[{"client":{"password":${secretish}}}]}`, { mode: 0o600 });
      await assert.rejects(openUserStore(dataDir, realFileSystem, FEATURE_FIELDS), (error: unknown) => {
        assert.ok(error instanceof StoreCorrupt);
        assert.ok(!error.message.includes(secretish), error.message);
        assert.match(error.message, /users\.json/);
        return true;
      });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('attack: --auth none answers only its proxy', () => {
  const peer = (remoteAddress: string) => ({ socket: { remoteAddress }, headers: {} }) as unknown as Parameters<ReturnType<typeof createProxyTrust>['isTrustedPeer']>[0];

  it('trusts loopback and the named proxies, and nobody else', () => {
    const trust = createProxyTrust(['10.0.0.0/8']);
    assert.equal(trust.isTrustedPeer(peer('127.0.0.1')), true);
    assert.equal(trust.isTrustedPeer(peer('::1')), true);
    assert.equal(trust.isTrustedPeer(peer('10.1.2.3')), true);
    assert.equal(trust.isTrustedPeer(peer('203.0.113.9')), false);
    assert.equal(createProxyTrust([]).isTrustedPeer(peer('203.0.113.9')), false);
  });

  // Refused before the port is opened, so none of these names is ever looked up.
  for (const host of ['127.evil.example', '127.0.0.1.nip.io', 'localhost.evil', 'LOCALHOST', 'localhost.', '127.1', '0.0.0.0', '::']) {
    it(`refuses to start --auth none on --host ${host} without --trust-proxy`, async () => {
      await assert.rejects(startTestServer({ GATEHOUSE_AUTH: 'none', GATEHOUSE_HOST: host }), /--auth none .* refused on /);
    });
  }

  for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) {
    it(`starts --auth none on --host ${host}`, async () => {
      const server = await startTestServer({ GATEHOUSE_AUTH: 'none', GATEHOUSE_HOST: host });
      await server.close();
    });
  }

  it('serves loopback callers in none mode', async () => {
    const server = await startTestServer({ GATEHOUSE_AUTH: 'none' });
    try {
      const res = await server.request({ path: '/api/auth/verify' });
      assert.equal(res.status, 200);
      assert.equal((res.json as { username: string }).username, '_config');
    } finally {
      await server.close();
    }
  });
});

describe('attack: lone surrogates in JSON strings', () => {
  let server: TestServer;
  let adminToken: string;
  before(async () => {
    server = await startTestServer();
    adminToken = await registerUser(server, 'ls-admin', { level: 10 });
  });
  after(() => server.close());

  // Sent as JSON escapes: the only way a lone surrogate arrives (raw bytes are refused as bad UTF-8).
  const registerRaw = (username: string, password: string) =>
    server.request({
      method: 'POST',
      path: '/api/auth/register',
      token: adminToken,
      body: `{"username":"${username}","password":"${password}","client":{"client":"rTorrent","type":"socket","version":1,"socket":"/s"},"level":5}`,
    });

  it('refuses a password with a lone surrogate, so two such passwords never match one hash', async () => {
    const res = await registerRaw('ls-user', 'pw-\\ud800-aaaa');
    assert.equal(res.status, 400, res.text);
    assert.equal(server.running.store.find('ls-user'), undefined);
    const ok = await registerRaw('ls-user', 'pw-\\ufffd-aaaa');
    assert.equal(ok.status, 200, ok.text);
    const login = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: '{"username":"ls-user","password":"pw-\\udfff-aaaa"}' });
    assert.equal(login.status, 400, login.text);
    assert.equal(login.headers['set-cookie'], undefined);
  });

  it('refuses a username with a lone surrogate (no path could name it afterwards)', async () => {
    const res = await registerRaw('ls-\\ud800', 'password-1234');
    assert.equal(res.status, 400, res.text);
    assert.equal(server.running.store.size, 2);
  });
});

