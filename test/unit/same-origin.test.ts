import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCrossSiteRequest } from '../../src/http/same-origin.js';

describe('isCrossSiteRequest', () => {
  const cases: Array<[string, Record<string, string>, string | undefined, boolean]> = [
    ['no Fetch Metadata and no Origin (a script)', {}, 'auth.example.org', false],
    ['Sec-Fetch-Site same-origin', { 'sec-fetch-site': 'same-origin' }, 'auth.example.org', false],
    ['Sec-Fetch-Site none (typed or bookmarked)', { 'sec-fetch-site': 'none' }, 'auth.example.org', false],
    ['Sec-Fetch-Site same-site (a sibling app)', { 'sec-fetch-site': 'same-site' }, 'auth.example.org', true],
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }, 'auth.example.org', true],
    ['Sec-Fetch-Site decides over a foreign Origin', { 'sec-fetch-site': 'same-origin', origin: 'https://evil.example' }, 'auth.example.org', false],
    ['an Origin of the host', { origin: 'https://auth.example.org' }, 'auth.example.org', false],
    ['an Origin of the host over plain http behind TLS', { origin: 'http://auth.example.org' }, 'auth.example.org', false],
    ['an Origin with the default port spelled out', { origin: 'https://auth.example.org' }, 'auth.example.org:443', false],
    ['an Origin in another case', { origin: 'https://AUTH.example.org' }, 'auth.example.org', false],
    ['an Origin with the same port', { origin: 'http://127.0.0.1:3000' }, '127.0.0.1:3000', false],
    ['an Origin with another port', { origin: 'http://127.0.0.1:3001' }, '127.0.0.1:3000', true],
    ['an IPv6 Origin', { origin: 'http://[::1]:3000' }, '[::1]:3000', false],
    ['an Origin of a sibling', { origin: 'https://app.example.org' }, 'auth.example.org', true],
    ['an Origin of a look-alike suffix', { origin: 'https://auth.example.org.evil.example' }, 'auth.example.org', true],
    ['Origin null', { origin: 'null' }, 'auth.example.org', true],
    ['a malformed Origin', { origin: 'https://a b' }, 'a b', true],
    ['an Origin without a scheme', { origin: 'auth.example.org' }, 'auth.example.org', true],
    ['an Origin and no known host', { origin: 'https://auth.example.org' }, undefined, true],
  ];
  for (const [what, headers, host, expected] of cases) {
    it(`${expected ? 'refuses' : 'accepts'} ${what}`, () => {
      assert.equal(isCrossSiteRequest(headers, host), expected);
    });
  }
});
