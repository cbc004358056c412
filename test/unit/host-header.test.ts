import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildConfig, SettingInvalid } from '../../src/config.js';
import { createFirstRegistrationHostCheck, hostOfHeader } from '../../src/http/host-header.js';

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
