import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertServerAnswers } from '../helpers/attack.js';
import { registerUser, startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

// Online password guessing: failed logins are counted per username and per client address,
// a blocked attempt is refused before any scrypt runs, and the client address is the socket's
// unless a trusted proxy vouches for X-Forwarded-For.

function login(server: TestServer, username: string, password: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username, password }, headers });
}

function assertThrottled(res: TestResponse, windowSeconds: number): void {
  assert.equal(res.status, 429, res.text);
  assert.equal((res.json as { code?: unknown }).code, 'TOO_MANY_ATTEMPTS');
  const retryAfter = res.headers['retry-after'];
  assert.ok(typeof retryAfter === 'string' && /^[1-9]\d*$/.test(retryAfter), `Retry-After ${String(retryAfter)} is not a positive integer`);
  assert.ok(Number(retryAfter) <= windowSeconds, `Retry-After ${retryAfter} exceeds the ${windowSeconds} s window`);
  assert.equal(res.cookieToken, undefined);
}

function loginFailedLines(server: TestServer): Array<{ raw: string; fields: Record<string, unknown> }> {
  return server.logs
    .filter((line) => line.includes('"event":"login_failed"'))
    .map((raw) => ({ raw, fields: JSON.parse(raw) as Record<string, unknown> }));
}

describe('attack: login throttle', () => {
  describe('per username (3 failures per 60 s window)', () => {
    let server: TestServer;
    let adminToken: string;

    before(async () => {
      server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '3', GATEHOUSE_THROTTLE_ADDRESS: '100', GATEHOUSE_THROTTLE_WINDOW: '60' });
      adminToken = await registerUser(server, 'th-admin', { level: 10 });
    });
    after(() => server.close());

    it('answers 429 with a positive integer Retry-After after 3 wrong passwords, without running scrypt', async () => {
      await registerUser(server, 'th-a', { level: 5, password: 'right-a', asToken: adminToken });
      for (let i = 0; i < 3; i++) assert.equal((await login(server, 'th-a', `wrong-${i}`)).status, 401);
      const runsBefore = server.running.hasher.runs;
      assertThrottled(await login(server, 'th-a', 'wrong-3'), 60);
      assert.equal(server.running.hasher.runs, runsBefore, 'a throttled attempt must not run scrypt');
    });

    it('refuses even the right password with 429 while the username is blocked, still without scrypt', async () => {
      const runsBefore = server.running.hasher.runs;
      assertThrottled(await login(server, 'th-a', 'right-a'), 60);
      assert.equal(server.running.hasher.runs, runsBefore);
    });

    it('lets the right password in once the clock passes the window', async () => {
      server.clock.advanceSeconds(61);
      const res = await login(server, 'th-a', 'right-a');
      assert.equal(res.status, 200, res.text);
      assert.ok(res.cookieToken !== undefined);
    });

    it("resets the username's counter on a successful login", async () => {
      await registerUser(server, 'th-b', { level: 5, password: 'right-b', asToken: adminToken });
      assert.equal((await login(server, 'th-b', 'wrong')).status, 401);
      assert.equal((await login(server, 'th-b', 'wrong')).status, 401);
      assert.equal((await login(server, 'th-b', 'right-b')).status, 200);
      assert.equal((await login(server, 'th-b', 'wrong')).status, 401);
      assert.equal((await login(server, 'th-b', 'wrong')).status, 401);
      assert.equal((await login(server, 'th-b', 'right-b')).status, 200, 'four failures in the window, but only two since the success');
    });

    it('runs exactly one scrypt for an unknown user, as for a wrong or right password of a real one', async () => {
      await registerUser(server, 'th-c', { level: 5, password: 'right-c', asToken: adminToken });
      const delta = async (username: string, password: string, expected: number): Promise<number> => {
        const before = server.running.hasher.runs;
        assert.equal((await login(server, username, password)).status, expected);
        return server.running.hasher.runs - before;
      };
      assert.equal(await delta('th-nobody', 'whatever', 401), 1, 'unknown user');
      assert.equal(await delta('th-c', 'wrong', 401), 1, 'wrong password');
      assert.equal(await delta('th-c', 'right-c', 200), 1, 'right password');
    });

    it('runs no scrypt for a login body that fails validation', async () => {
      const before = server.running.hasher.runs;
      const res = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: 'th-c' } });
      assert.equal(res.status, 400);
      assert.equal(server.running.hasher.runs, before);
    });

    it('does not let 20 simultaneous guesses slip past a limit of 3', async () => {
      await registerUser(server, 'th-burst', { level: 5, password: 'right-burst', asToken: adminToken });
      const before = server.running.hasher.runs;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => login(server, 'th-burst', `guess-${i}`)));
      const guessed = results.filter((res) => res.status === 401).length;
      const statuses = results.map((res) => res.status);
      for (const status of statuses) assert.ok(status === 401 || status === 429, `unexpected ${status}`);
      assert.ok(guessed <= 3, `${guessed} of 20 parallel guesses were checked against the password (limit 3); statuses ${statuses.join(',')}`);
      assert.ok(server.running.hasher.runs - before <= 3, `${server.running.hasher.runs - before} scrypt runs for a limit of 3`);
    });

    it('logs a failed login as one JSON warn line with address before username and no password', async () => {
      const username = 'th-log "quoted" \\ \u2028 name';
      assert.equal((await login(server, username, 'th-log-secret-password')).status, 401);
      await new Promise((resolve) => setImmediate(resolve));
      const lines = loginFailedLines(server).filter((line) => line.fields['username'] === username);
      assert.equal(lines.length, 1, 'exactly one login_failed line');
      const [line] = lines;
      assert.ok(line !== undefined);
      assert.equal(line.fields['level'], 'warn');
      assert.equal(line.fields['msg'], 'login failed');
      assert.equal(line.fields['event'], 'login_failed');
      assert.equal(line.fields['address'], '127.0.0.1');
      assert.match(line.raw, /^\{"time":"[^"]+","level":"warn","msg":"login failed","event":"login_failed","address":"127\.0\.0\.1","username":/);
      assert.ok(line.raw.indexOf('"address"') < line.raw.indexOf('"username"'), 'address comes before username (fail2ban-style filters)');
      assert.equal(line.raw.includes('th-log-secret-password'), false);
    });
  });

  describe('per address (5 failures, any usernames)', () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '100', GATEHOUSE_THROTTLE_ADDRESS: '5' });
      await registerUser(server, 'ta-admin', { level: 10, password: 'ta-admin-password' });
    });
    after(() => server.close());

    it('answers 429 once one address has failed 5 times across 5 usernames, even for the right password', async () => {
      for (let i = 0; i < 5; i++) assert.equal((await login(server, `ta-spray-${i}`, 'Winter2025!')).status, 401);
      const runsBefore = server.running.hasher.runs;
      assertThrottled(await login(server, 'ta-spray-5', 'Winter2025!'), 900);
      assertThrottled(await login(server, 'ta-admin', 'ta-admin-password'), 900);
      assert.equal(server.running.hasher.runs, runsBefore);
    });
  });

  describe('behind a trusted proxy (GATEHOUSE_TRUST_PROXY=127.0.0.1, 2 failures per address)', () => {
    let server: TestServer;
    let adminToken: string;

    before(async () => {
      server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '100', GATEHOUSE_THROTTLE_ADDRESS: '2', GATEHOUSE_TRUST_PROXY: '127.0.0.1' });
      adminToken = await registerUser(server, 'tp-admin', { level: 10 });
    });
    after(() => server.close());

    it('throttles each forwarded address on its own', async () => {
      const fromA = { 'x-forwarded-for': '203.0.113.1' };
      const fromB = { 'x-forwarded-for': '203.0.113.2' };
      assert.equal((await login(server, 'tp-x', 'bad', fromA)).status, 401);
      assert.equal((await login(server, 'tp-y', 'bad', fromA)).status, 401);
      assertThrottled(await login(server, 'tp-z', 'bad', fromA), 900);
      assert.equal((await login(server, 'tp-z', 'bad', fromB)).status, 401, 'another forwarded address is not blocked by the first');
      await new Promise((resolve) => setImmediate(resolve));
      const addresses = loginFailedLines(server).map((line) => line.fields['address']);
      assert.ok(addresses.includes('203.0.113.1') && addresses.includes('203.0.113.2'), `logged addresses: ${addresses.join(', ')}`);
      await assertServerAnswers(server, adminToken, 'tp-admin');
    });

    it('cannot be escaped by prepending made-up hops to X-Forwarded-For', async () => {
      const real = '203.0.113.9';
      assert.equal((await login(server, 'tp-p', 'bad', { 'x-forwarded-for': `198.51.100.1, ${real}` })).status, 401);
      assert.equal((await login(server, 'tp-q', 'bad', { 'x-forwarded-for': `198.51.100.2, ${real}` })).status, 401);
      assertThrottled(await login(server, 'tp-r', 'bad', { 'x-forwarded-for': `198.51.100.3, ${real}` }), 900);
    });

    it('keeps a client named "unknown" and one at 1.2.3.4:5 apart from each other and from the proxy', async () => {
      const unknown = { 'x-forwarded-for': 'unknown' };
      const withPort = { 'x-forwarded-for': '1.2.3.4:5' };
      assert.equal((await login(server, 'tp-unk-1', 'bad', unknown)).status, 401);
      assert.equal((await login(server, 'tp-unk-2', 'bad', unknown)).status, 401);
      assertThrottled(await login(server, 'tp-unk-3', 'bad', unknown), 900);
      // The other client, and the proxy's own address, have their own buckets.
      assert.equal((await login(server, 'tp-port-1', 'bad', withPort)).status, 401);
      assert.equal((await login(server, 'tp-port-2', 'bad', withPort)).status, 401);
      assertThrottled(await login(server, 'tp-port-3', 'bad', { 'x-forwarded-for': '1.2.3.4:6' }), 900);
      assert.equal((await login(server, 'tp-direct', 'bad')).status, 401);
      await new Promise((resolve) => setImmediate(resolve));
      const failures = loginFailedLines(server).filter((line) => /^tp-(unk|port)-/.test(String(line.fields['username'])));
      assert.deepEqual(failures.map((line) => line.fields['address']), ['unknown', 'unknown', '1.2.3.4', '1.2.3.4']);
      for (const line of failures) assert.match(line.raw, /"event":"login_failed","address":"(unknown|1\.2\.3\.4)","username":/);
    });
  });

  describe('without a trusted proxy (2 failures per address)', () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '100', GATEHOUSE_THROTTLE_ADDRESS: '2' });
      await registerUser(server, 'np-admin', { level: 10 });
    });
    after(() => server.close());

    it('ignores X-Forwarded-For: rotating it does not escape the per-address limit', async () => {
      assert.equal((await login(server, 'np-x', 'bad', { 'x-forwarded-for': '203.0.113.1' })).status, 401);
      assert.equal((await login(server, 'np-y', 'bad', { 'x-forwarded-for': '203.0.113.2' })).status, 401);
      assertThrottled(await login(server, 'np-z', 'bad', { 'x-forwarded-for': '203.0.113.3' }), 900);
      await new Promise((resolve) => setImmediate(resolve));
      const addresses = new Set(loginFailedLines(server).map((line) => line.fields['address']));
      assert.deepEqual([...addresses], ['127.0.0.1']);
    });
  });
});
