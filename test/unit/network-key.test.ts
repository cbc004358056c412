import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { throttleKeyOf } from '../../src/http/client-address.js';
import { networkKeyOf } from '../../src/http/network-key.js';

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
