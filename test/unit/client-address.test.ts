import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { createProxyTrust, isLoopbackAddress, isLoopbackHost, normalizeAddress, throttleKeyOf } from '../../src/http/client-address.js';

function fakeRequest(remoteAddress: string | undefined, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

describe('normalizeAddress', () => {
  const cases: ReadonlyArray<[string, string]> = [
    ['::ffff:203.0.113.5', '203.0.113.5'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['203.0.113.5', '203.0.113.5'],
    ['::1', '::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['::ffff:2001:db8::1', '::ffff:2001:db8::1'],
    ['::ffff:not-an-ip', '::ffff:not-an-ip'],
    ['', ''],
  ];
  for (const [input, expected] of cases) {
    it(`turns ${JSON.stringify(input)} into ${JSON.stringify(expected)}`, () => assert.equal(normalizeAddress(input), expected));
  }
});

describe('createProxyTrust', () => {
  describe('with no trusted proxies', () => {
    const trust = createProxyTrust([]);

    it('ignores X-Forwarded-For and answers the socket address', () => {
      assert.equal(trust.clientAddress(fakeRequest('203.0.113.5', { 'x-forwarded-for': '198.51.100.1' })), '203.0.113.5');
    });

    it('ignores X-Forwarded-For even from a loopback socket', () => {
      assert.equal(trust.clientAddress(fakeRequest('127.0.0.1', { 'x-forwarded-for': '198.51.100.1' })), '127.0.0.1');
    });

    it('strips the ::ffff: prefix from the socket address', () => {
      assert.equal(trust.clientAddress(fakeRequest('::ffff:203.0.113.5')), '203.0.113.5');
    });

    it('answers the empty string for a socket with no address', () => {
      assert.equal(trust.clientAddress(fakeRequest(undefined)), '');
    });

    it('never believes X-Forwarded-Proto', () => {
      assert.equal(trust.isForwardedHttps(fakeRequest('127.0.0.1', { 'x-forwarded-proto': 'https' })), false);
    });
  });

  describe('with a trusted CIDR', () => {
    const trust = createProxyTrust(['10.0.0.0/8', '::1']);
    const fromProxy = (xff: string | undefined, socket = '10.1.2.3'): string =>
      trust.clientAddress(fakeRequest(socket, xff === undefined ? {} : { 'x-forwarded-for': xff }));

    const cases: ReadonlyArray<{ name: string; socket?: string; xff: string | undefined; expected: string }> = [
      { name: 'takes the single forwarded hop', xff: '198.51.100.1', expected: '198.51.100.1' },
      { name: 'takes the last untrusted hop, not a spoofed first one', xff: '6.6.6.6, 198.51.100.1', expected: '198.51.100.1' },
      { name: 'skips trusted hops at the end of the chain', xff: '6.6.6.6, 198.51.100.1, 10.0.0.7, 10.9.9.9', expected: '198.51.100.1' },
      { name: 'copes with no spaces after commas', xff: '6.6.6.6,198.51.100.1,10.0.0.7', expected: '198.51.100.1' },
      { name: 'strips ::ffff: from a forwarded hop', xff: '::ffff:198.51.100.1', expected: '198.51.100.1' },
      { name: 'treats a ::ffff:-mapped trusted hop as trusted', xff: '198.51.100.1, ::ffff:10.0.0.7', expected: '198.51.100.1' },
      { name: 'answers an IPv6 client', xff: '2001:db8::42', expected: '2001:db8::42' },
      { name: 'answers the socket when the header is absent', xff: undefined, expected: '10.1.2.3' },
      { name: 'answers the socket when the header is empty', xff: '', expected: '10.1.2.3' },
      // Ports, brackets and unparseable hops.
      { name: 'parses the port off an IPv4 hop', xff: '203.0.113.9:4711', expected: '203.0.113.9' },
      { name: 'parses brackets and port off an IPv6 hop', xff: '[2001:db8::5]:4711', expected: '2001:db8::5' },
      { name: 'parses brackets off an IPv6 hop without a port', xff: '[2001:db8::5]', expected: '2001:db8::5' },
      { name: 'normalizes a bracketed IPv4-mapped hop', xff: '[::ffff:198.51.100.1]:80', expected: '198.51.100.1' },
      { name: 'takes an unbracketed IPv6 hop as a whole address', xff: '2001:db8::5:4711', expected: '2001:db8::5:4711' },
      { name: 'treats a trusted hop with a port as trusted', xff: '198.51.100.1, 10.0.0.7:8080', expected: '198.51.100.1' },
      { name: 'treats a trusted bracketed hop as trusted', xff: '198.51.100.1, [::1]:8080', expected: '198.51.100.1' },
      { name: 'keys an unparseable nearest hop on its text, not on the proxy', xff: '198.51.100.1, garbage', expected: 'garbage' },
      { name: 'keys "unknown" on its text', xff: 'unknown', expected: 'unknown' },
      { name: 'keys an RFC 7239 obfuscated identifier on its text', xff: '_hidden', expected: '_hidden' },
      { name: 'stops at an unparseable hop behind trusted hops: it is the client', xff: '198.51.100.1, unknown, 10.0.0.7', expected: 'unknown' },
      { name: 'keys a port that is not a number on the hop text', xff: '203.0.113.9:http', expected: '203.0.113.9:http' },
      { name: 'keys an empty port on the hop text', xff: '203.0.113.9:', expected: '203.0.113.9:' },
      { name: 'keys a bracketed IPv4 on the hop text', xff: '[203.0.113.9]:80', expected: '[203.0.113.9]:80' },
      { name: 'keys an unclosed bracket on the hop text', xff: '[2001:db8::5', expected: '[2001:db8::5' },
      { name: 'keys a quoted hop on its text', xff: '"[2001:db8::5]:4711"', expected: '"[2001:db8::5]:4711"' },
      { name: 'keeps inner spaces and trims outer ones', xff: '  not an address\t', expected: 'not an address' },
      { name: 'replaces control and non-ASCII characters with "?"', xff: 'bad\u0001hop\u007f\u0085\u00e9', expected: 'bad?hop???' },
      { name: 'caps an unparseable hop at 64 characters', xff: `${'x'.repeat(200)}`, expected: 'x'.repeat(64) },
      { name: 'skips empty hops', xff: '198.51.100.1, , 10.0.0.7,', expected: '198.51.100.1' },
      { name: 'answers the socket when every hop is empty', xff: ' , ,', expected: '10.1.2.3' },
      { name: 'answers the leftmost hop when every hop is trusted', xff: '10.0.0.1, 10.0.0.2', expected: '10.0.0.1' },
      { name: 'believes a trusted IPv6 loopback proxy', socket: '::1', xff: '198.51.100.1', expected: '198.51.100.1' },
      { name: 'believes a trusted proxy reached over ::ffff:', socket: '::ffff:10.0.0.9', xff: '198.51.100.1', expected: '198.51.100.1' },
      { name: 'ignores the header from an untrusted socket', socket: '203.0.113.5', xff: '198.51.100.1', expected: '203.0.113.5' },
      { name: 'strips ::ffff: from an untrusted socket', socket: '::ffff:203.0.113.5', xff: '198.51.100.1', expected: '203.0.113.5' },
    ];
    for (const { name, socket, xff, expected } of cases) {
      it(`${name} (${JSON.stringify(xff)} -> ${expected})`, () => assert.equal(fromProxy(xff, socket), expected));
    }

    it('stops at the first untrusted hop and never walks past it to an address the attacker chose', () => {
      // The client (198.51.100.1) sent its own "X-Forwarded-For: 10.0.0.5"; the proxy appended the client.
      assert.equal(fromProxy('10.0.0.5, 198.51.100.1'), '198.51.100.1');
    });

    const proto: ReadonlyArray<{ name: string; socket: string; value: string | undefined; expected: boolean }> = [
      { name: 'https from a trusted proxy', socket: '10.0.0.1', value: 'https', expected: true },
      { name: 'HTTPS in upper case from a trusted proxy', socket: '10.0.0.1', value: 'HTTPS', expected: true },
      // A proxy that appends writes the last value; earlier ones came from the client.
      { name: 'https last in a list from a trusted proxy', socket: '10.0.0.1', value: 'http, https', expected: true },
      { name: 'https only first in a list (client-supplied) from a trusted proxy', socket: '10.0.0.1', value: 'https, http', expected: false },
      { name: 'http from a trusted proxy', socket: '10.0.0.1', value: 'http', expected: false },
      { name: 'no header from a trusted proxy', socket: '10.0.0.1', value: undefined, expected: false },
      { name: 'https from an untrusted socket', socket: '203.0.113.5', value: 'https', expected: false },
      { name: 'https from a trusted proxy over ::ffff:', socket: '::ffff:10.0.0.1', value: 'https', expected: true },
    ];
    for (const { name, socket, value, expected } of proto) {
      it(`answers ${String(expected)} for X-Forwarded-Proto ${name}`, () => {
        assert.equal(trust.isForwardedHttps(fakeRequest(socket, value === undefined ? {} : { 'x-forwarded-proto': value })), expected);
      });
    }

    const hosts: ReadonlyArray<{ name: string; socket: string; value: string | undefined; expected: string | undefined }> = [
      { name: 'from a trusted proxy', socket: '10.0.0.1', value: 'app.example.org', expected: 'app.example.org' },
      { name: 'last in a list from a trusted proxy', socket: '10.0.0.1', value: 'localhost, app.example.org', expected: 'app.example.org' },
      { name: 'absent from a trusted proxy (Host is the browser\'s)', socket: '10.0.0.1', value: undefined, expected: 'gatehouse:3000' },
      // The proxy says it wrote a host and wrote none: Host is then the proxy's own, never the browser's.
      { name: 'empty last from a trusted proxy', socket: '10.0.0.1', value: 'app.example.org,', expected: undefined },
      { name: 'from an untrusted socket', socket: '203.0.113.5', value: 'app.example.org', expected: 'gatehouse:3000' },
    ];
    for (const { name, socket, value, expected } of hosts) {
      it(`answers ${String(expected)} for X-Forwarded-Host ${name}`, () => {
        const headers = { host: 'gatehouse:3000', ...(value === undefined ? {} : { 'x-forwarded-host': value }) };
        assert.equal(trust.browserHost(fakeRequest(socket, headers)), expected);
      });
    }
  });

  it('trusts a single address given without a prefix, and only that one', () => {
    const trust = createProxyTrust(['127.0.0.1']);
    assert.equal(trust.clientAddress(fakeRequest('127.0.0.1', { 'x-forwarded-for': '198.51.100.1' })), '198.51.100.1');
    assert.equal(trust.clientAddress(fakeRequest('127.0.0.2', { 'x-forwarded-for': '198.51.100.1' })), '127.0.0.2');
  });

  it('trusts an IPv6 CIDR', () => {
    const trust = createProxyTrust(['fd00::/8']);
    assert.equal(trust.clientAddress(fakeRequest('fd12::1', { 'x-forwarded-for': '198.51.100.1' })), '198.51.100.1');
    assert.equal(trust.clientAddress(fakeRequest('fe80::1', { 'x-forwarded-for': '198.51.100.1' })), 'fe80::1');
  });

  const badEntries: readonly string[] = [
    'localhost',
    'proxy.example.com',
    '',
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/',
    '10.0.0.0/abc',
    '10.0.0.0/-1',
    '10.0.0.0/8/9',
    '256.0.0.1',
    '10.0.0',
    ' 10.0.0.1',
  ];
  for (const entry of badEntries) {
    it(`throws a TypeError for the --trust-proxy entry ${JSON.stringify(entry)}`, () => {
      assert.throws(() => createProxyTrust([entry]), TypeError);
    });
  }

  const goodEntries: readonly string[] = ['10.0.0.0/8', '0.0.0.0/0', '192.168.1.1/32', '::1', '::/0', '2001:db8::/32', '127.0.0.1'];
  for (const entry of goodEntries) {
    it(`accepts the --trust-proxy entry ${JSON.stringify(entry)}`, () => {
      assert.doesNotThrow(() => createProxyTrust([entry]));
    });
  }
});

describe('throttleKeyOf', () => {
  const cases: ReadonlyArray<{ address: string; expected: string }> = [
    { address: '203.0.113.7', expected: '203.0.113.7' },
    { address: '2001:db8:1:2:3:4:5:6', expected: '2001:db8:1:2::/64' },
    { address: '2001:db8:1:2::9', expected: '2001:db8:1:2::/64' },
    { address: '2001:DB8:0001:0002:ffff::1', expected: '2001:db8:1:2::/64' },
    { address: '2001:db8::1', expected: '2001:db8:0:0::/64' },
    { address: '::1', expected: '0:0:0:0::/64' },
    // An unparseable X-Forwarded-For hop is its own bucket.
    { address: 'unknown', expected: 'unknown' },
    { address: '_hidden', expected: '_hidden' },
  ];
  for (const { address, expected } of cases) {
    it(`keys ${address} as ${expected}`, () => assert.equal(throttleKeyOf(address), expected));
  }

  it('puts two addresses of one /64 under one key and two /64s under two', () => {
    assert.equal(throttleKeyOf('2001:db8:a:b::1'), throttleKeyOf('2001:db8:a:b:ffff:ffff:ffff:ffff'));
    assert.notEqual(throttleKeyOf('2001:db8:a:b::1'), throttleKeyOf('2001:db8:a:c::1'));
  });
});

describe('isLoopbackAddress', () => {
  // Only IP literals: `--auth none` starts without --trust-proxy only on loopback, and a host
  // name that merely starts with "127." resolves wherever its owner likes.
  const cases: ReadonlyArray<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['127.255.255.255', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['0000:0000:0000:0000:0000:0000:0000:0001', true],
    ['::ffff:127.0.0.1', true],
    ['127.evil.example', false],
    ['127.0.0.1.nip.io', false],
    ['127.0.0.1 ', false],
    ['127.1', false],
    ['127.0.0', false],
    ['128.0.0.1', false],
    ['126.255.255.255', false],
    ['0.0.0.0', false],
    ['::', false],
    ['::2', false],
    ['[::1]', false],
    ['localhost', false],
    ['', false],
  ];
  for (const [address, expected] of cases) {
    it(`answers ${String(expected)} for ${JSON.stringify(address)}`, () => assert.equal(isLoopbackAddress(address), expected));
  }
});

describe('isLoopbackHost', () => {
  const cases: ReadonlyArray<[string, boolean]> = [
    ['localhost', true],
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['LOCALHOST', false],
    ['Localhost', false],
    ['localhost.', false],
    ['localhost.evil', false],
    ['evil.localhost', false],
    ['127.evil.example', false],
    ['127.0.0.1.nip.io', false],
    ['0.0.0.0', false],
  ];
  for (const [host, expected] of cases) {
    it(`answers ${String(expected)} for --host ${JSON.stringify(host)}`, () => assert.equal(isLoopbackHost(host), expected));
  }
});
