// Which origin a request was sent to (docs/contract/own-origin.md "Origins"):
// Gatehouse's own (home), a Flood web client's (--flood-url), or an app's. Every byte of Host and
// X-Forwarded-Host is the client's to choose, so each hostile spelling has a case here.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { createProxyTrust } from '../../src/http/client-address.js';
import { comparableHost, createOriginReader, type OriginKind } from '../../src/http/request-origin.js';

const PROXY = '10.0.0.2';

function fakeRequest(remoteAddress: string, headers: Record<string, string>): IncomingMessage {
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

function readerOf(publicUrl: string | undefined, floodUrls: readonly string[] = []) {
  return createOriginReader({ publicUrl, floodUrls, proxyTrust: createProxyTrust([PROXY]) });
}

function kindOf(reader: ReturnType<typeof readerOf>, headers: Record<string, string>, peer = '203.0.113.9'): OriginKind {
  return reader.kindOf(fakeRequest(peer, headers));
}

describe('comparableHost', () => {
  const cases: ReadonlyArray<[string, string | undefined]> = [
    ['auth.example.org', 'auth.example.org'],
    ['AUTH.Example.ORG', 'auth.example.org'],
    ['auth.example.org:443', 'auth.example.org'],
    ['auth.example.org:80', 'auth.example.org'],
    ['auth.example.org:8443', 'auth.example.org:8443'],
    ['auth.example.org.', 'auth.example.org.'],
    ['127.0.0.1:3000', '127.0.0.1:3000'],
    ['[::1]:3000', '[::1]:3000'],
    ['[0:0:0:0:0:0:0:1]', '[::1]'],
    ['[2001:DB8::1]:443', '[2001:db8::1]'],
    ['', undefined],
    ['auth.example.org:', undefined],
    ['auth.example.org:123456', undefined],
    ['::1', undefined],
    ['[::1', undefined],
    ['[not-v6]', undefined],
    ['a b', undefined],
    ['auth.example.org/x', undefined],
    ['user@auth.example.org', undefined],
    ['auth%2eexample.org', undefined],
    ['auth.example.org, app.example.org', undefined],
  ];
  for (const [host, expected] of cases) {
    it(`reads ${JSON.stringify(host)} as ${JSON.stringify(expected)}`, () => assert.equal(comparableHost(host), expected));
  }
});

describe('createOriginReader without --public-url', () => {
  const reader = readerOf(undefined, ['http://flood.example.org:3000']);
  const cases: ReadonlyArray<[string, Record<string, string>, OriginKind]> = [
    ['localhost', { host: 'localhost' }, 'home'],
    ['localhost on any port', { host: 'localhost:8080' }, 'home'],
    ['LOCALHOST in capitals', { host: 'LocalHost:3000' }, 'home'],
    ['127.0.0.1', { host: '127.0.0.1:3000' }, 'home'],
    ['another address of 127.0.0.0/8', { host: '127.8.9.10' }, 'home'],
    ['[::1]', { host: '[::1]:3000' }, 'home'],
    ['::1 spelled out', { host: '[0:0:0:0:0:0:0:1]' }, 'home'],
    ['a sub-domain of localhost', { host: 'app.localhost:3000' }, 'app'],
    ['localhost with a trailing dot', { host: 'localhost.' }, 'app'],
    ['a name that starts like localhost', { host: 'localhost.example.org' }, 'app'],
    ['127.1, a short spelling no browser sends', { host: '127.1' }, 'app'],
    ['a LAN address', { host: '192.168.1.5:3000' }, 'app'],
    ['an app name', { host: 'app.example.org' }, 'app'],
    ['no Host', {}, 'app'],
    ['an empty Host', { host: '' }, 'app'],
    ['a malformed Host', { host: 'localhost:abc' }, 'app'],
    ['a bare IPv6 loopback without brackets', { host: '::1' }, 'app'],
    ['two hosts in one header', { host: 'localhost, app.example.org' }, 'app'],
    ['the Flood origin', { host: 'flood.example.org:3000' }, 'flood'],
    ['the Flood host on another port', { host: 'flood.example.org' }, 'app'],
  ];
  for (const [what, headers, expected] of cases) {
    it(`reads ${what} as ${expected}`, () => assert.equal(kindOf(reader, headers), expected));
  }

  it('ignores X-Forwarded-Host from a peer not in --trust-proxy', () => {
    assert.equal(kindOf(reader, { host: 'app.example.org', 'x-forwarded-host': 'localhost' }), 'app');
    assert.equal(kindOf(reader, { host: 'localhost', 'x-forwarded-host': 'app.example.org' }), 'home');
  });

  it('reads X-Forwarded-Host from a trusted proxy instead of Host', () => {
    assert.equal(kindOf(reader, { host: '127.0.0.1:3000', 'x-forwarded-host': 'app.example.org' }, PROXY), 'app');
    assert.equal(kindOf(reader, { host: 'gatehouse:3000', 'x-forwarded-host': 'localhost:8080' }, PROXY), 'home');
  });

  it('takes the last of several X-Forwarded-Host values, the one the trusted proxy wrote', () => {
    assert.equal(kindOf(reader, { host: '127.0.0.1', 'x-forwarded-host': 'localhost, app.example.org' }, PROXY), 'app');
    assert.equal(kindOf(reader, { host: '127.0.0.1', 'x-forwarded-host': 'app.example.org,localhost' }, PROXY), 'home');
  });

  it('counts an empty last X-Forwarded-Host value from a trusted proxy as no host, never falling back to Host', () => {
    assert.equal(kindOf(reader, { host: '127.0.0.1:3000', 'x-forwarded-host': 'app.example.org,' }, PROXY), 'app');
    assert.equal(kindOf(reader, { host: '127.0.0.1:3000', 'x-forwarded-host': '' }, PROXY), 'app');
  });
});

describe('createOriginReader with --public-url', () => {
  const reader = readerOf('https://auth.example.org/gate', ['https://flood.example.org']);
  const cases: ReadonlyArray<[string, Record<string, string>, OriginKind]> = [
    ['the public host', { host: 'auth.example.org' }, 'home'],
    ['the public host with its default port', { host: 'auth.example.org:443' }, 'home'],
    ['the public host in capitals', { host: 'Auth.Example.Org' }, 'home'],
    ['the public host with a trailing dot', { host: 'auth.example.org.' }, 'app'],
    ['the public host on another port', { host: 'auth.example.org:8443' }, 'app'],
    ['a look-alike suffix', { host: 'auth.example.org.evil.example' }, 'app'],
    ['localhost (no longer home)', { host: 'localhost:3000' }, 'app'],
    ['127.0.0.1 (no longer home)', { host: '127.0.0.1:3000' }, 'app'],
    ['a sibling app', { host: 'app.example.org' }, 'app'],
    ['the Flood origin', { host: 'flood.example.org' }, 'flood'],
    ['no Host', {}, 'app'],
  ];
  for (const [what, headers, expected] of cases) {
    it(`reads ${what} as ${expected}`, () => assert.equal(kindOf(reader, headers), expected));
  }

  it('reads the public host from a trusted proxy, and an app host behind it', () => {
    assert.equal(kindOf(reader, { host: '127.0.0.1:3000', 'x-forwarded-host': 'auth.example.org' }, PROXY), 'home');
    assert.equal(kindOf(reader, { host: 'auth.example.org', 'x-forwarded-host': 'app.example.org' }, PROXY), 'app');
  });

  it('compares an IPv6 public host in any spelling a Host header may hold', () => {
    const v6 = readerOf('https://[2001:db8::1]:8443');
    assert.equal(kindOf(v6, { host: '[2001:DB8:0:0::1]:8443' }), 'home');
    assert.equal(kindOf(v6, { host: '[2001:db8::1]' }), 'app');
  });

  it('counts a Flood URL equal to the public URL as home', () => {
    const same = readerOf('https://auth.example.org', ['https://auth.example.org']);
    assert.equal(kindOf(same, { host: 'auth.example.org' }), 'home');
  });

  it('names the home origin for a message, and none without --public-url', () => {
    assert.equal(reader.homeUrl, 'https://auth.example.org/gate');
    assert.equal(readerOf(undefined).homeUrl, undefined);
  });
});
