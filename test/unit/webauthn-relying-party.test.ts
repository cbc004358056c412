import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relyingPartiesOf, relyingPartyForHost, type RelyingPartySettings } from '../../src/passkeys/relying-party.js';

const HOST_ONLY: RelyingPartySettings = { cookieDomain: undefined, publicUrl: undefined, passkeyOrigins: [] };

describe('the passkey relying party of a request, without a cookie domain', () => {
  it('takes rp.id from the host', () => {
    assert.equal(relyingPartyForHost('Gate.Example:8443')?.id, 'gate.example');
    assert.equal(relyingPartyForHost('localhost:3000')?.id, 'localhost');
    assert.equal(relyingPartiesOf(HOST_ONLY).forHost('gate.example')?.id, 'gate.example');
  });

  it('keeps taking it from the host when --public-url and --passkey-origins are set', () => {
    const parties = relyingPartiesOf({ cookieDomain: undefined, publicUrl: 'https://auth.example.org', passkeyOrigins: ['https://app.example.org'] });
    assert.equal(parties.offReason, undefined);
    assert.equal(parties.forHost('gate.example')?.id, 'gate.example');
    assert.equal(parties.forHost('gate.example')?.isOriginAllowed('https://gate.example'), true);
    assert.equal(parties.forHost('gate.example')?.isOriginAllowed('https://auth.example.org'), false);
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
    for (const [host, origin, expected] of table) assert.equal(relyingPartyForHost(host)?.isOriginAllowed(origin), expected, `${host} ${origin}`);
  });

  it('has none for a missing or malformed host', () => {
    for (const host of [undefined, '', 'a b', '[::1]:3000', 'gate.example:', 'gate.example:x', 'under_score.example', 'gate.example:123456']) {
      assert.equal(relyingPartyForHost(host), undefined, String(host));
    }
  });
});

describe('the passkey relying party with a cookie domain', () => {
  const parties = relyingPartiesOf({
    cookieDomain: 'example.org',
    publicUrl: 'https://auth.example.org/gate',
    passkeyOrigins: ['https://app.example.org', 'https://example.org:8443'],
  });

  it('is the cookie domain whatever the Host, a malformed one included', () => {
    for (const host of ['auth.example.org', 'evil.example.org', 'other.example', undefined, 'a b', '[::1]:3000']) {
      assert.equal(parties.forHost(host)?.id, 'example.org', String(host));
    }
  });

  it('allows --public-url\'s origin and --passkey-origins, never the origin of the Host a request names', () => {
    const table: Array<[string, boolean]> = [
      ['https://auth.example.org', true],
      ['https://app.example.org', true],
      ['https://example.org:8443', true],
      ['https://evil.example.org', false],
      ['https://example.org', false],
      ['http://auth.example.org', false],
      ['https://auth.example.org:443', false],
      ['https://auth.example.org/gate', false],
      ['http://localhost:3000', false],
      ['http://127.0.0.1', false],
    ];
    for (const host of ['evil.example.org', 'auth.example.org']) {
      const party = parties.forHost(host);
      for (const [origin, expected] of table) assert.equal(party?.isOriginAllowed(origin), expected, `Host ${host}, origin ${origin}`);
    }
  });

  it('uses --passkey-origins alone when --public-url is not set', () => {
    const alone = relyingPartiesOf({ cookieDomain: 'example.org', publicUrl: undefined, passkeyOrigins: ['https://app.example.org'] });
    assert.equal(alone.offReason, undefined);
    assert.equal(alone.forHost('x')?.isOriginAllowed('https://app.example.org'), true);
    assert.equal(alone.forHost('auth.example.org')?.isOriginAllowed('https://auth.example.org'), false);
  });

  it('is off, and says why, with neither --public-url nor --passkey-origins', () => {
    const off = relyingPartiesOf({ cookieDomain: 'example.org', publicUrl: undefined, passkeyOrigins: [] });
    assert.match(off.offReason ?? '', /--cookie-domain example\.org.*--public-url.*--passkey-origins/);
    assert.equal(off.forHost('auth.example.org'), undefined);
  });

  it('ignores listed origins outside the cookie domain, and is off when none is left', () => {
    const outside = relyingPartiesOf({ cookieDomain: 'example.org', publicUrl: 'https://auth.other.example', passkeyOrigins: ['https://notexample.org', 'http://localhost:3000'] });
    assert.match(outside.offReason ?? '', /no origin .* is under --cookie-domain example\.org/);
    assert.equal(outside.forHost('auth.other.example'), undefined);
    assert.equal(outside.ignoredOrigins.length, 3);
    const mixed = relyingPartiesOf({ cookieDomain: 'example.org', publicUrl: 'https://auth.example.org', passkeyOrigins: ['https://notexample.org'] });
    assert.equal(mixed.offReason, undefined);
    assert.deepEqual(mixed.ignoredOrigins.map((line) => line.includes('https://notexample.org')), [true]);
    assert.equal(mixed.forHost('notexample.org')?.isOriginAllowed('https://notexample.org'), false);
  });
});
