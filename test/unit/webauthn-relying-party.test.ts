import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relyingPartyFor } from '../../src/webauthn/relying-party.js';

describe('the passkey relying party of a request', () => {
  it('takes rp.id from the host, or from the cookie domain when set', () => {
    assert.equal(relyingPartyFor('Gate.Example:8443', undefined)?.id, 'gate.example');
    assert.equal(relyingPartyFor('auth.example.org', 'example.org')?.id, 'example.org');
    assert.equal(relyingPartyFor('localhost:3000', undefined)?.id, 'localhost');
  });

  it('expects https:// and the host (its port unless 443), plus local http origins on any port', () => {
    const table: Array<[string, string, boolean]> = [
      ['gate.example', 'https://gate.example', true],
      ['gate.example:443', 'https://gate.example', true],
      ['gate.example:8443', 'https://gate.example:8443', true],
      ['gate.example:8443', 'https://gate.example', false],
      ['gate.example', 'http://gate.example', false],
      ['gate.example', 'https://gate.example.evil', false],
      ['gate.example', 'https://evil.example', false],
      ['gate.example', 'https://gate.example/', false],
      ['gate.example', 'http://localhost:5173', true],
      ['gate.example', 'http://127.0.0.1', true],
      ['gate.example', 'http://localhost.evil:80', false],
      ['gate.example', 'https://localhost', false],
      ['gate.example', 'http://127.0.0.1:3000/', false],
    ];
    for (const [host, origin, expected] of table) assert.equal(relyingPartyFor(host, undefined)?.isOriginAllowed(origin), expected, `${host} ${origin}`);
  });

  it('has none for a missing or malformed host', () => {
    for (const host of [undefined, '', 'a b', '[::1]:3000', 'gate.example:', 'gate.example:x', 'under_score.example', 'gate.example:123456']) {
      assert.equal(relyingPartyFor(host, undefined), undefined, String(host));
    }
  });
});
