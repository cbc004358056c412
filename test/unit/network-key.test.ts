import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { throttleKeyOf } from '../../src/http/client-address.js';
import { homeNetworkKeyOf, networkKeyOf } from '../../src/http/network-key.js';

describe('networkKeyOf', () => {
  const cases: ReadonlyArray<[string, string]> = [
    ['203.0.113.9', '203.0.113.0/24'],
    ['10.1.2.255', '10.1.2.0/24'],
    ['2001:db8:a:b::1', '2001:db8:a::/48'],
    ['2001:db8:a:ffff:1:2:3:4', '2001:db8:a::/48'],
    ['::1', '0:0:0::/48'],
    ['unknown', 'unknown'],
    ['', ''],
  ];
  for (const [address, expected] of cases) {
    it(`puts ${JSON.stringify(address)} in ${JSON.stringify(expected)}`, () => assert.equal(networkKeyOf(throttleKeyOf(address)), expected));
  }

  it('keeps two /24s apart and two /64s of one /48 together', () => {
    assert.notEqual(networkKeyOf('203.0.113.9'), networkKeyOf('203.0.114.9'));
    assert.equal(networkKeyOf(throttleKeyOf('2001:db8:a:1::1')), networkKeyOf(throttleKeyOf('2001:db8:a:2::1')));
  });
});

describe('homeNetworkKeyOf', () => {
  const cases: ReadonlyArray<[string, string]> = [
    ['203.0.113.9', '203.0.113.9'],
    ['2001:db8:a:b::1', '2001:db8:a:0::/56'],
    ['2001:db8:a:ff::1', '2001:db8:a:0::/56'],
    ['2001:db8:a:100::1', '2001:db8:a:100::/56'],
    ['2001:db8:a:ffff:1:2:3:4', '2001:db8:a:ff00::/56'],
    ['2001:DB8:A:1234::', '2001:db8:a:1200::/56'],
    ['::1', '0:0:0:0::/56'],
    ['unknown', 'unknown'],
    ['', ''],
  ];
  for (const [address, expected] of cases) {
    it(`puts ${JSON.stringify(address)} in ${JSON.stringify(expected)}`, () => assert.equal(homeNetworkKeyOf(throttleKeyOf(address)), expected));
  }

  it('keeps two IPv4 addresses of one /24 apart, and the 256 /64s of one /56 together', () => {
    assert.notEqual(homeNetworkKeyOf('203.0.113.9'), homeNetworkKeyOf('203.0.113.10'));
    const keys = new Set(Array.from({ length: 256 }, (_, i) => homeNetworkKeyOf(throttleKeyOf(`2001:db8:a:${(0x3400 + i).toString(16)}::1`))));
    assert.deepEqual([...keys], ['2001:db8:a:3400::/56']);
    assert.notEqual(homeNetworkKeyOf(throttleKeyOf('2001:db8:a:3400::1')), homeNetworkKeyOf(throttleKeyOf('2001:db8:a:3500::1')));
  });
});
