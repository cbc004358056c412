import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPopulatedServer, type TestUser } from '../helpers/api.js';
import { rawExchange } from '../helpers/raw-socket.js';
import type { TestServer } from '../helpers/server.js';

const PROBE = '/api/auth/probe';

interface Report {
  probe: string;
  remoteUser: string[];
  remoteLevel: string[];
  remoteGroups: string[];
  xOriginalUri: string[];
  xForwardedUri: string[];
  jwtCookie: boolean;
  truncated: boolean;
  clientAddress: string;
  forwardedFor: string;
}

function reportOf(text: string): Report {
  const report = JSON.parse(text) as Report;
  assert.equal(report.probe, 'gatehouse');
  return report;
}

describe('{base}/api/auth/probe (what an app behind the proxy received)', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  it('answers 200 JSON with nothing received when the request carries none of the reported headers', async () => {
    const res = await server.request({ path: PROBE });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json, { probe: 'gatehouse', remoteUser: [], remoteLevel: [], remoteGroups: [], xOriginalUri: [], xForwardedUri: [], jwtCookie: false, truncated: false, clientAddress: '127.0.0.1', forwardedFor: 'absent', publicUrl: null, originKind: 'home' });
  });

  it('reports Remote-User, Remote-Level and Remote-Groups as they arrived, also spelled with underscores and repeated', async () => {
    const head = [
      `GET ${PROBE} HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      'Remote-User: alice',
      'remote_user: mallory',
      'Remote-Level: USER',
      'REMOTE-LEVEL: ADMINISTRATOR',
      'Remote-Groups: media,ops',
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    const res = await rawExchange(server.port, head);
    assert.equal(res.status, 200, res.text);
    const report = reportOf(res.body);
    assert.deepEqual(report.remoteUser, ['alice', 'mallory']);
    assert.deepEqual(report.remoteLevel, ['USER', 'ADMINISTRATOR']);
    assert.deepEqual(report.remoteGroups, ['media,ops']);
  });

  it('says whether a jwt cookie arrived, and never echoes a cookie value or a token', async () => {
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      [`jwt=${root.token}`, true],
      [`a=1; jwt=${root.token}; b=2`, true],
      ['a=1;  jwt =', true],
      ['notjwt=1; jwtx=2; a=jwt', false],
      ['', false],
    ];
    for (const [cookie, expected] of cases) {
      const res = await server.request({ path: `${PROBE}?token=${root.token}`, headers: { cookie, 'x-original-uri': `/file?token=${root.token}&a=1` } });
      assert.equal(res.status, 200, res.text);
      const report = reportOf(res.text);
      assert.equal(report.jwtCookie, expected, cookie);
      assert.ok(!res.text.includes(root.token), `the answer echoes no token: ${res.text}`);
      assert.ok(!res.text.includes('notjwt'), 'no cookie name or value is echoed');
    }
  });

  it('reports X-Original-URI and X-Forwarded-Uri with their paths and parameter names, never a query value', async () => {
    const res = await server.request({ path: PROBE, headers: { 'x-original-uri': '/app/page?token=secret-value&x=1;y=2&flag', 'x-forwarded-uri': '/other' } });
    const report = reportOf(res.text);
    assert.deepEqual(report.xOriginalUri, ['/app/page?token=&x=&y=&flag']);
    assert.deepEqual(report.xForwardedUri, ['/other']);
    assert.ok(!res.text.includes('secret-value'));
  });

  it('keeps its answer small: at most 8 values of a header, each cut at 512 characters, and says it cut', async () => {
    const lines = [`GET ${PROBE} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`];
    for (let i = 0; i < 40; i += 1) lines.push(`Remote-User: user-${i}-${'x'.repeat(200)}`);
    lines.push(`Remote-Groups: ${'g'.repeat(5_000)}`, 'Connection: close', '', '');
    const res = await rawExchange(server.port, lines.join('\r\n'));
    assert.equal(res.status, 200, res.text.slice(0, 300));
    const report = reportOf(res.body);
    assert.equal(report.remoteUser.length, 8);
    assert.equal(report.remoteGroups[0]?.length, 512);
    assert.equal(report.truncated, true);
    assert.ok(res.body.length < 8_000, `${res.body.length} bytes`);
  });

  it('reports the client address a sign-in would count against: the peer\'s, with X-Forwarded-For from an untrusted peer ignored', async () => {
    const res = await server.request({ path: PROBE, headers: { 'x-forwarded-for': '203.0.113.7' } });
    const report = reportOf(res.text);
    assert.equal(report.clientAddress, '127.0.0.1');
    assert.equal(report.forwardedFor, 'ignored');
  });

  it('takes no body and answers only GET', async () => {
    const post = await server.request({ method: 'POST', path: PROBE, body: { a: 1 } });
    assert.equal(post.status, 405);
  });
});

describe('{base}/api/auth/probe behind a trusted proxy', () => {
  let server: TestServer;
  before(async () => {
    ({ server } = await startPopulatedServer({ GATEHOUSE_TRUST_PROXY: '127.0.0.1' }));
  });
  after(() => server.close());

  it('reports the address X-Forwarded-For names, as the login throttle takes it, and says the header was used', async () => {
    for (const [forwardedFor, address] of [
      ['203.0.113.7', '203.0.113.7'],
      ['198.51.100.1, 203.0.113.7', '203.0.113.7'],
      ['203.0.113.7, 127.0.0.1', '203.0.113.7'],
      ['[2001:db8::5]:4711', '2001:db8::5'],
    ] as const) {
      const report = reportOf((await server.request({ path: PROBE, headers: { 'x-forwarded-for': forwardedFor } })).text);
      assert.equal(report.clientAddress, address, forwardedFor);
      assert.equal(report.forwardedFor, 'used', forwardedFor);
    }
  });

  it('says absent, and reports the peer, when no X-Forwarded-For came or it names no hop', async () => {
    for (const headers of [{}, { 'x-forwarded-for': '' }, { 'x-forwarded-for': ' , ' }]) {
      const report = reportOf((await server.request({ path: PROBE, headers })).text);
      assert.equal(report.clientAddress, '127.0.0.1', JSON.stringify(headers));
      assert.equal(report.forwardedFor, 'absent', JSON.stringify(headers));
    }
  });
});

// docs/contract/own-origin.md "Doctor": how the doctor learns where Gatehouse's own origin is. Only
// what any browser learns anyway (an app's account link leads to --public-url).
describe('{base}/api/auth/probe says where Gatehouse\'s own origin is', () => {
  it('gives --public-url and how it judged the origin the probe was asked on: home, a Flood client\'s, an app\'s', async () => {
    const { server } = await startPopulatedServer({
      GATEHOUSE_PUBLIC_URL: 'https://auth.example.org',
      GATEHOUSE_FLOOD_URL: 'https://flood.example.org',
      GATEHOUSE_TRUST_PROXY: '127.0.0.1',
    });
    try {
      for (const [headers, originKind] of [
        [{}, 'home'],
        [{ host: 'auth.example.org:443' }, 'home'],
        [{ host: 'flood.example.org' }, 'flood'],
        [{ host: 'app.example.org' }, 'app'],
        [{ host: '127.0.0.1' }, 'app'],
        [{ host: 'auth.example.org', 'x-forwarded-host': 'app.example.org' }, 'app'],
      ] as const) {
        const res = await server.request({ path: PROBE, headers });
        assert.equal(res.status, 200, res.text);
        const report = JSON.parse(res.text) as Record<string, unknown>;
        assert.deepEqual([report['publicUrl'], report['originKind']], ['https://auth.example.org', originKind], JSON.stringify(headers));
      }
    } finally {
      await server.close();
    }
  });

  it('without --public-url gives null, and every loopback address is Gatehouse\'s own', async () => {
    const { server } = await startPopulatedServer();
    try {
      for (const [host, originKind] of [['127.0.0.1', 'home'], ['localhost:8080', 'home'], ['[::1]', 'home'], ['app.example.org', 'app'], ['app.localhost', 'app']] as const) {
        const report = JSON.parse((await server.request({ path: PROBE, headers: { host } })).text) as Record<string, unknown>;
        assert.deepEqual([report['publicUrl'], report['originKind']], [null, originKind], host);
      }
    } finally {
      await server.close();
    }
  });
});
