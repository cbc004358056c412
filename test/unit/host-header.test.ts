import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildConfig, SettingInvalid } from '../../src/config.js';
import { createFirstRegistrationHostCheck, hostOfHeader, splitHostPort } from '../../src/http/host-header.js';

describe('hostOfHeader', () => {
  const cases: ReadonlyArray<[string | undefined, string | undefined]> = [
    ['localhost', 'localhost'],
    ['LOCALHOST:3000', 'localhost'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['[::1]:3000', '::1'],
    ['[::1]', '::1'],
    ['evil.example:3000', 'evil.example'],
    ['localhost:', 'localhost'],
    [undefined, undefined],
    ['', undefined],
    [':3000', undefined],
    ['::1', undefined],
    ['[::1', undefined],
    ['[evil.example]:3000', undefined],
    ['[::1]x', undefined],
    ['localhost:abc', undefined],
    ['localhost:123456', undefined],
  ];
  for (const [header, expected] of cases) {
    it(`reads ${JSON.stringify(header)} as ${JSON.stringify(expected)}`, () => assert.equal(hostOfHeader(header), expected));
  }
});

describe('splitHostPort, shared by the Host header and X-Forwarded-For hops', () => {
  const cases: ReadonlyArray<[string, ReturnType<typeof splitHostPort>]> = [
    ['example.org', { host: 'example.org', port: undefined, isBracketed: false }],
    ['example.org:8443', { host: 'example.org', port: '8443', isBracketed: false }],
    ['203.0.113.9:', { host: '203.0.113.9', port: '', isBracketed: false }],
    ['[2001:db8::5]:4711', { host: '2001:db8::5', port: '4711', isBracketed: true }],
    ['[2001:db8::5]', { host: '2001:db8::5', port: undefined, isBracketed: true }],
    ['2001:db8::5', undefined],
    ['[203.0.113.9]:80', undefined],
    ['[2001:db8::5', undefined],
    ['[2001:db8::5]:80:90', undefined],
    ['example.org:123456', undefined],
    ['example.org:80x', undefined],
  ];
  for (const [text, expected] of cases) {
    it(`splits ${JSON.stringify(text)} as ${JSON.stringify(expected)}`, () => assert.deepEqual(splitHostPort(text), expected));
  }
});

describe('createFirstRegistrationHostCheck', () => {
  const isAllowed = createFirstRegistrationHostCheck(['gatehouse.home.example']);
  for (const host of ['127.0.0.1:3000', '192.0.2.7', '[::1]:3000', '[2001:db8::1]', 'localhost', 'LOCALHOST', 'localhost:3000', 'gatehouse.home.example', 'GateHouse.Home.Example:8443']) {
    it(`allows ${host}`, () => assert.equal(isAllowed(host), true));
  }
  for (const host of [undefined, '', 'evil.example', 'evil.example:3000', 'localhost.evil.example', 'localhost.', '127.0.0.1.evil.example', 'home.example', 'x.gatehouse.home.example', '::1']) {
    it(`refuses ${JSON.stringify(host)}`, () => assert.equal(isAllowed(host), false));
  }
});

describe('--allowed-hosts', () => {
  const configFrom = (value: string) => buildConfig((spec) => (spec.env === 'GATEHOUSE_ALLOWED_HOSTS' ? value : undefined));

  it('is empty by default', () => assert.deepEqual(buildConfig(() => undefined).allowedHosts, []));

  it('reads comma-separated DNS names, trimmed and lower-cased', () => {
    assert.deepEqual(configFrom(' Gatehouse.Example , nas-1.lan,x ').allowedHosts, ['gatehouse.example', 'nas-1.lan', 'x']);
  });

  for (const bad of ['evil.example:3000', 'http://evil.example', 'evil.example/', '-bad.example', 'bad-.example', 'a..b', 'under_score.example', '[::1]', `${'a'.repeat(64)}.example`, 'exa mple']) {
    it(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => configFrom(bad), SettingInvalid));
  }
});
