import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  decodeJsonSegment, encodeJsonSegment, headerRefusal, joinCompact, JOSE_REFUSALS, splitCompact, timeRefusal,
  type JoseRefusal,
} from '../../src/auth/jose.js';
import { createTokenCodec, IAT_SKEW_SECONDS, MAX_TOKEN_LENGTH } from '../../src/auth/jwt.js';
import { signingKeyFromJwk } from '../../src/oidc/jwk.js';
import { inspectJws, MAX_JWS_LENGTH, signJwt } from '../../src/oidc/jws.js';

const NOW = 1_700_000_000;
const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64url');
const json = (value: unknown): string => b64(JSON.stringify(value));

// RFC 7515 appendix A.1: the HS256 example, its key and its compact serialization.
const A1_KEY = Buffer.from('AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow', 'base64url');
const A1_TOKEN =
  'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9' +
  '.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ' +
  '.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

describe('the JOSE compact form (auth/jose.ts)', () => {
  it('splits the RFC 7515 A.1 token into its segments, decodes both JSON parts and checks its MAC over the received bytes', () => {
    const segments = splitCompact(A1_TOKEN, MAX_TOKEN_LENGTH);
    assert.ok(typeof segments !== 'string');
    assert.deepEqual(decodeJsonSegment(segments.header), { typ: 'JWT', alg: 'HS256' });
    assert.deepEqual(decodeJsonSegment(segments.payload), { iss: 'joe', exp: 1_300_819_380, 'http://example.com/is_root': true });
    assert.equal(headerRefusal(decodeJsonSegment(segments.header) ?? {}, ['HS256']), undefined);
    assert.equal(segments.signingInput, A1_TOKEN.slice(0, A1_TOKEN.lastIndexOf('.')));
    assert.equal(createHmac('sha256', A1_KEY).update(segments.signingInput).digest('base64url'), segments.signature);
  });

  it('joins a token that splits back into the header, the claims and the signature made over header.payload', () => {
    const header = encodeJsonSegment({ alg: 'HS256' });
    const token = joinCompact(header, { sub: 'a', n: 1 }, (input) => `sig-of-${input.length}`);
    const segments = splitCompact(token, 100);
    assert.ok(typeof segments !== 'string');
    assert.equal(segments.header, header);
    assert.deepEqual(decodeJsonSegment(segments.payload), { sub: 'a', n: 1 });
    assert.equal(segments.signature, `sig-of-${segments.signingInput.length}`);
  });

  describe('splitCompact', () => {
    const cases: ReadonlyArray<readonly [string, string, number, 'too-long' | 'segments' | readonly string[]]> = [
      ['three segments', 'a.b.c', 5, ['a', 'b', 'c']],
      ['three empty segments (each is the caller\'s to refuse)', '..', 2, ['', '', '']],
      ['a token of exactly the cap', 'aa.b.c', 6, ['aa', 'b', 'c']],
      ['a token one character over the cap', 'aa.b.c', 5, 'too-long'],
      ['a huge token with no dot, refused for its length first', 'a'.repeat(10_000), 4096, 'too-long'],
      ['one segment', 'abc', 10, 'segments'],
      ['two segments', 'a.b', 10, 'segments'],
      ['four segments', 'a.b.c.d', 10, 'segments'],
      ['a trailing dot', 'a.b.c.', 10, 'segments'],
      ['the empty string', '', 10, 'segments'],
    ];
    for (const [name, token, cap, expected] of cases) {
      it(`${name}: ${typeof expected === 'string' ? expected : 'split'}`, () => {
        const result = splitCompact(token, cap);
        if (typeof expected === 'string') {
          assert.equal(result, expected);
        } else {
          assert.ok(typeof result !== 'string');
          assert.deepEqual([result.header, result.payload, result.signature], expected);
          assert.equal(result.signingInput, `${result.header}.${result.payload}`);
        }
      });
    }
  });

  describe('decodeJsonSegment', () => {
    // A 16-byte object leaves 4 unused bits in its last character: another spelling of the same bytes.
    const odd = b64('{"alg":"HS256" }');
    const nonCanonical = odd.slice(0, -1) + String.fromCharCode(odd.charCodeAt(odd.length - 1) + 1);
    assert.deepEqual(Buffer.from(nonCanonical, 'base64url'), Buffer.from(odd, 'base64url'));
    const refused: ReadonlyArray<readonly [string, string]> = [
      ['an empty segment', ''],
      ['base64 with "+"', `${odd.slice(0, -1)}+`],
      ['base64 with "/"', `${odd.slice(0, -1)}/`],
      ['"=" padding', `${b64('{"a":1}x')}=`],
      ['a space', `${odd} `],
      ['a non-canonical spelling', nonCanonical],
      ['bytes that are not UTF-8', b64(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]))],
      ['text that is not JSON', b64('{alg:HS256}')],
      ['a JSON array', json([{ alg: 'HS256' }])],
      ['a JSON string', json('HS256')],
      ['JSON null', json(null)],
      ['a JSON number', json(1)],
    ];
    for (const [name, segment] of refused) {
      it(`refuses ${name}`, () => assert.equal(decodeJsonSegment(segment), undefined));
    }
    it('reads an object in its canonical spelling, UTF-8 included', () => {
      assert.deepEqual(decodeJsonSegment(odd), { alg: 'HS256' });
      assert.deepEqual(decodeJsonSegment(json({ name: 'Zoë 🦊' })), { name: 'Zoë 🦊' });
    });
  });

  describe('headerRefusal', () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, readonly string[], 'alg' | 'crit' | 'typ' | undefined]> = [
      ['the allowed alg', { alg: 'HS256' }, ['HS256'], undefined],
      ['an allowed alg and typ JWT', { alg: 'ES256', typ: 'JWT', kid: 'k' }, ['RS256', 'ES256'], undefined],
      ['alg none', { alg: 'none' }, ['HS256'], 'alg'],
      ['alg HS512', { alg: 'HS512' }, ['HS256'], 'alg'],
      ['alg in lower case', { alg: 'hs256' }, ['HS256'], 'alg'],
      ['no alg', { typ: 'JWT' }, ['HS256'], 'alg'],
      ['an alg that is a list', { alg: ['HS256'] }, ['HS256'], 'alg'],
      ['an empty allow-list', { alg: 'HS256' }, [], 'alg'],
      ['crit', { alg: 'HS256', crit: ['exp'] }, ['HS256'], 'crit'],
      ['an empty crit', { alg: 'HS256', crit: [] }, ['HS256'], 'crit'],
      ['typ JWE', { alg: 'HS256', typ: 'JWE' }, ['HS256'], 'typ'],
      ['typ at+jwt', { alg: 'HS256', typ: 'at+jwt' }, ['HS256'], 'typ'],
      ['typ null', { alg: 'HS256', typ: null }, ['HS256'], 'typ'],
    ];
    for (const [name, header, allowed, expected] of cases) {
      it(`${name}: ${expected ?? 'accepted'}`, () => assert.equal(headerRefusal(header, allowed), expected));
    }
  });

  describe('timeRefusal', () => {
    const cases: ReadonlyArray<readonly [string, unknown, unknown, ReturnType<typeof timeRefusal>]> = [
      ['live', NOW + 1, NOW - 10, undefined],
      ['iat exactly the skew ahead', NOW + 3600, NOW + IAT_SKEW_SECONDS, undefined],
      ['no exp', undefined, NOW, 'exp'],
      ['an exp as a string', String(NOW + 1), NOW, 'exp'],
      ['an exp of Infinity', Infinity, NOW, 'exp'],
      ['an exp of NaN', NaN, NOW, 'exp'],
      ['exp equal to now', NOW, NOW - 10, 'expired'],
      ['exp before now', NOW - 1, NOW - 10, 'expired'],
      ['expired and no iat: expired first', NOW - 1, undefined, 'expired'],
      ['no iat', NOW + 1, undefined, 'iat'],
      ['an iat of null', NOW + 1, null, 'iat'],
      ['iat one second beyond the skew', NOW + 3600, NOW + IAT_SKEW_SECONDS + 1, 'not-yet-valid'],
    ];
    for (const [name, exp, iat, expected] of cases) {
      it(`${name}: ${expected ?? 'live'}`, () => assert.equal(timeRefusal(exp, iat, NOW, IAT_SKEW_SECONDS), expected));
    }
  });
});

describe('every typed refusal, reached through a real token', () => {
  const secret = Buffer.from('jose-unit-test-secret-of-at-least-32-bytes');
  const codec = createTokenCodec(secret);
  const hmac = (header: unknown, claims: unknown): string => {
    const input = `${json(header)}.${json(claims)}`;
    return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
  };
  const live = { username: 'alice', iat: NOW - 10, exp: NOW + 3600 };
  const good = codec.sign(live);
  const [goodHeader = '', goodPayload = ''] = good.split('.');

  const ec = signingKeyFromJwk(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }));
  const findEc = (kid: string | undefined) => (kid === ec.kid ? ec : undefined);
  const signedEc = (header: unknown, payloadSegment: string): string => {
    const input = `${json(header)}.${payloadSegment}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
  const idToken = signJwt(ec, { sub: 'a' });

  const session = (token: string) => codec.inspect(token, NOW);
  const jws = (token: string) => inspectJws(token, findEc);
  const cases: ReadonlyArray<readonly [JoseRefusal, string, () => { ok: boolean; reason?: string }]> = [
    ['too-long', 'a session token over 4,096 characters', () => session('a'.repeat(MAX_TOKEN_LENGTH + 1))],
    ['too-long', 'an id_token over 8,192 characters', () => jws(`${idToken}${'A'.repeat(MAX_JWS_LENGTH)}`)],
    ['segments', 'a session token of two segments', () => session(`${goodHeader}.${goodPayload}`)],
    ['segments', 'an id_token of four segments', () => jws(`${idToken}.x`)],
    ['header', 'a session token whose header is not JSON', () => session(`${b64('{')}.${goodPayload}.x`)],
    ['header', 'an id_token whose header is an array', () => jws(`${json([])}.${goodPayload}.x`)],
    ['kid', 'an id_token whose kid is a number', () => jws(signedEc({ alg: 'ES256', kid: 1 }, json({ sub: 'a' })))],
    ['unknown-key', 'an id_token naming another key', () => jws(signedEc({ alg: 'ES256', kid: 'other' }, json({ sub: 'a' })))],
    ['alg', 'a session token with alg none', () => session(`${json({ alg: 'none' })}.${goodPayload}.`)],
    ['alg', 'an id_token with alg HS256', () => jws(signedEc({ alg: 'HS256', kid: ec.kid }, json({ sub: 'a' })))],
    ['crit', 'a session token with crit', () => session(hmac({ alg: 'HS256', crit: ['x'] }, live))],
    ['crit', 'an id_token with crit', () => jws(signedEc({ alg: 'ES256', kid: ec.kid, crit: ['x'] }, json({ sub: 'a' })))],
    ['typ', 'a session token with typ JWE', () => session(hmac({ alg: 'HS256', typ: 'JWE' }, live))],
    ['typ', 'an id_token with typ at+jwt', () => jws(signedEc({ alg: 'ES256', kid: ec.kid, typ: 'at+jwt' }, json({ sub: 'a' })))],
    ['signature', 'a session token under another secret', () => session(createTokenCodec(Buffer.alloc(32, 9)).sign(live))],
    ['signature', 'an id_token with an edited payload', () => jws(`${idToken.split('.')[0] ?? ''}.${json({ sub: 'b' })}.${idToken.split('.')[2] ?? ''}`)],
    ['payload', 'a session token whose MACed payload is not JSON', () => session(`${goodHeader}.${b64('x')}.${createHmac('sha256', secret).update(`${goodHeader}.${b64('x')}`).digest('base64url')}`)],
    ['payload', 'an id_token whose signed payload is a string', () => jws(signedEc({ alg: 'ES256', kid: ec.kid }, json('sub')))],
    ['exp', 'a session token without exp', () => session(hmac({ alg: 'HS256' }, { username: 'alice', iat: NOW }))],
    ['expired', 'a session token at its exp', () => session(hmac({ alg: 'HS256' }, { ...live, exp: NOW }))],
    ['iat', 'a session token without iat', () => session(hmac({ alg: 'HS256' }, { username: 'alice', exp: NOW + 1 }))],
    ['not-yet-valid', 'a session token issued beyond the skew', () => session(hmac({ alg: 'HS256' }, { ...live, iat: NOW + IAT_SKEW_SECONDS + 1 }))],
  ];
  for (const [reason, name, run] of cases) {
    it(`refuses ${name}: ${reason}`, () => assert.deepEqual({ ...run() }, { ok: false, reason }));
  }

  it('has a case for every reason the module names', () => {
    assert.deepEqual([...new Set(cases.map(([reason]) => reason))].sort(), [...JOSE_REFUSALS].sort());
  });

  it('accepts the tokens these cases were made from', () => {
    assert.equal(session(good).ok, true);
    assert.equal(jws(idToken).ok, true);
  });
});
