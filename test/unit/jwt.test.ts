import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { createTokenCodec, IAT_SKEW_SECONDS, MAX_TOKEN_LENGTH, type SessionTokenRefusal } from '../../src/auth/jwt.js';
import { TokenInvalid } from '../../src/errors.js';

const SECRET = Buffer.from('unit-test-secret-of-at-least-32-bytes-long!');
const OTHER_SECRET = Buffer.from('another-secret-also-at-least-32-bytes-long!');
const NOW = 1_700_000_000;
const codec = createTokenCodec(SECRET);

const b64 = (text: string): string => Buffer.from(text).toString('base64url');
const json = (value: unknown): string => b64(JSON.stringify(value));
const HS256_HEADER = json({ alg: 'HS256', typ: 'JWT' });

/** Builds a token from raw segments and MACs it with `secret`, so only the part under test is wrong. */
function signRaw(header: string, payload: string, secret: Buffer = SECRET): string {
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

const liveClaims = { username: 'alice', iat: NOW - 10, exp: NOW + 3600 };

function replaceLast(segment: string, replacement: string): string {
  return segment.slice(0, -1) + replacement;
}

/** base64url of `before`, the byte 0xff (never in UTF-8), then `after`. */
function notUtf8(before: string, after: string): string {
  return Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]).toString('base64url');
}

/** A different base64url character that keeps the segment's length. */
function otherChar(c: string): string {
  return c === 'A' ? 'B' : 'A';
}

function assertRefused(token: string, reason: SessionTokenRefusal, now = NOW, verifier = codec): void {
  const inspected = verifier.inspect(token, now);
  assert.deepEqual(inspected, { ok: false, reason });
  assert.throws(
    () => verifier.verify(token, now),
    (error: unknown) => {
      assert.ok(error instanceof TokenInvalid, `expected TokenInvalid, got ${String(error)}`);
      assert.equal(error.code, 'AUTH_TOKEN_INVALID');
      assert.equal(error.status, 401);
      assert.equal(error.reason, reason);
      assert.equal(error.cause, reason);
      return true;
    },
  );
}

describe('createTokenCodec', () => {
  it('verifies a token it signed and returns exactly its session claims', () => {
    const token = codec.sign(liveClaims);
    assert.deepEqual(codec.verify(token, NOW), liveClaims);
  });

  it('signs with the header {"alg":"HS256","typ":"JWT"} in three base64url segments', () => {
    const segments = codec.sign(liveClaims).split('.');
    assert.equal(segments.length, 3);
    for (const segment of segments) assert.match(segment, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(JSON.parse(Buffer.from(segments[0] ?? '', 'base64url').toString('utf8')), { alg: 'HS256', typ: 'JWT' });
  });

  it('accepts extra claims but keeps them out of the result', () => {
    const token = codec.sign({ ...liveClaims, content: 'torrent', role: 'admin', nested: { a: 1 } });
    const claims = codec.verify(token, NOW);
    assert.deepEqual(claims, liveClaims);
    assert.deepEqual(Object.keys(claims).sort(), ['exp', 'iat', 'username']);
  });

  it('accepts a token with an HS256 header other than its own spelling (no typ)', () => {
    assert.deepEqual(codec.verify(signRaw(json({ alg: 'HS256' }), json(liveClaims)), NOW), liveClaims);
  });

  it('keeps a known amr claim of a token with a session key, as a frozen list', () => {
    const claims = codec.verify(codec.sign({ ...liveClaims, sid: 'k', amr: ['pwd', 'otp'] }), NOW);
    assert.deepEqual(claims.amr, ['pwd', 'otp']);
    assert.ok(Object.isFrozen(claims.amr));
  });

  it('refuses an amr claim that is not a list of known values', () => {
    for (const amr of [['pwd', 'sms'], 'pwd', [1], ['pwd', 'otp', 'hwk', 'user', 'pwd'], {}]) {
      assert.equal(codec.inspect(codec.sign({ ...liveClaims, sid: 'k', amr } as never), NOW).ok, false, JSON.stringify(amr));
    }
  });

  it('keeps the session id (ses) of a token with a session key, with or without amr, and refuses one that is not a string', () => {
    assert.equal(codec.verify(codec.sign({ ...liveClaims, sid: 'k', ses: 'session-1' }), NOW).ses, 'session-1');
    const claims = codec.verify(codec.sign({ ...liveClaims, sid: 'k', amr: ['pwd'], ses: 'session-2' }), NOW);
    assert.deepEqual([claims.ses, claims.amr], ['session-2', ['pwd']]);
    assert.equal(codec.verify(codec.sign({ ...liveClaims, sid: 'k' }), NOW).ses, undefined);
    for (const ses of [1, null, ['a'], {}]) {
      assert.equal(codec.inspect(codec.sign({ ...liveClaims, sid: 'k', ses } as never), NOW).ok, false, JSON.stringify(ses));
    }
  });

  it('refuses a secret shorter than 32 bytes with a TypeError', () => {
    assert.throws(() => createTokenCodec(Buffer.alloc(31, 1)), TypeError);
    assert.throws(() => createTokenCodec(Buffer.alloc(0)), TypeError);
  });

  it('accepts a secret of exactly 32 bytes', () => {
    const codec32 = createTokenCodec(Buffer.alloc(32, 7));
    assert.deepEqual(codec32.verify(codec32.sign(liveClaims), NOW), liveClaims);
  });

  describe('refuses malformed and forged tokens', () => {
    const good = codec.sign(liveClaims);
    const [goodHeader = '', goodPayload = '', goodSignature = ''] = good.split('.');

    // A 16-byte header leaves 4 unused bits in its last base64url character; changing them
    // keeps the decoded bytes equal but the spelling non-canonical.
    const oddHeaderJson = '{"alg":"HS256" }';
    assert.equal(Buffer.byteLength(oddHeaderJson) % 3, 1);
    const oddHeader = b64(oddHeaderJson);
    const lastHeaderChar = oddHeader.slice(-1);
    const nonCanonicalHeader = replaceLast(oddHeader, String.fromCharCode(lastHeaderChar.charCodeAt(0) + 1));
    assert.deepEqual(Buffer.from(nonCanonicalHeader, 'base64url'), Buffer.from(oddHeader, 'base64url'));

    // Same trick on the payload: JSON padded with spaces to a length that is 1 mod 3.
    let oddPayloadJson = JSON.stringify(liveClaims);
    while (Buffer.byteLength(oddPayloadJson) % 3 !== 1) oddPayloadJson += ' ';
    const oddPayload = b64(oddPayloadJson);
    const nonCanonicalPayload = replaceLast(oddPayload, String.fromCharCode(oddPayload.charCodeAt(oddPayload.length - 1) + 1));
    assert.deepEqual(Buffer.from(nonCanonicalPayload, 'base64url'), Buffer.from(oddPayload, 'base64url'));

    // A 32-byte MAC leaves 2 unused bits in its last character.
    const lastSigChar = goodSignature.slice(-1);
    const nonCanonicalSignature = replaceLast(goodSignature, String.fromCharCode(lastSigChar.charCodeAt(0) + 1));
    assert.deepEqual(Buffer.from(nonCanonicalSignature, 'base64url'), Buffer.from(goodSignature, 'base64url'));

    const tamperedPayload = json({ ...liveClaims, username: 'mallory' });
    const middle = Math.floor(goodSignature.length / 2);
    const tamperedSignature = goodSignature.slice(0, middle) + otherChar(goodSignature.charAt(middle)) + goodSignature.slice(middle + 1);

    const cases: ReadonlyArray<{ name: string; token: string; reason: SessionTokenRefusal }> = [
      { name: 'alg none with an empty signature', token: `${json({ alg: 'none', typ: 'JWT' })}.${goodPayload}.`, reason: 'alg' },
      { name: 'alg none with a valid-looking signature', token: signRaw(json({ alg: 'none' }), goodPayload), reason: 'alg' },
      { name: 'alg HS512', token: signRaw(json({ alg: 'HS512', typ: 'JWT' }), goodPayload), reason: 'alg' },
      { name: 'an RS256 header', token: signRaw(json({ alg: 'RS256', typ: 'JWT' }), goodPayload), reason: 'alg' },
      { name: 'alg hs256 in lower case', token: signRaw(json({ alg: 'hs256' }), goodPayload), reason: 'alg' },
      { name: 'a header without alg', token: signRaw(json({ typ: 'JWT' }), goodPayload), reason: 'alg' },
      { name: 'a crit header', token: signRaw(json({ alg: 'HS256', crit: ['exp'] }), goodPayload), reason: 'crit' },
      { name: 'an empty crit header', token: signRaw(json({ alg: 'HS256', crit: [] }), goodPayload), reason: 'crit' },
      { name: 'a typ other than JWT', token: signRaw(json({ alg: 'HS256', typ: 'JWE' }), goodPayload), reason: 'typ' },
      { name: 'two segments', token: `${goodHeader}.${goodPayload}`, reason: 'segments' },
      { name: 'one segment', token: goodHeader, reason: 'segments' },
      { name: 'four segments', token: `${good}.${goodSignature}`, reason: 'segments' },
      { name: 'a trailing dot (four segments, the last empty)', token: `${good}.`, reason: 'segments' },
      { name: 'the empty string', token: '', reason: 'segments' },
      { name: 'an empty header segment', token: `.${goodPayload}.${goodSignature}`, reason: 'header' },
      { name: 'an empty payload segment, correctly MACed', token: signRaw(goodHeader, ''), reason: 'payload' },
      { name: 'an empty signature segment', token: `${goodHeader}.${goodPayload}.`, reason: 'signature' },
      { name: 'a header with a "+" (base64, not base64url)', token: signRaw(`${goodHeader.slice(0, -1)}+`, goodPayload), reason: 'header' },
      { name: 'a header with "=" padding', token: signRaw(`${b64('{"alg":"HS256"}x')}=`, goodPayload), reason: 'header' },
      { name: 'a payload with a "/" character, correctly MACed', token: signRaw(goodHeader, `${goodPayload.slice(0, -1)}/`), reason: 'payload' },
      { name: 'a payload with a space, correctly MACed', token: signRaw(goodHeader, `${goodPayload} `), reason: 'payload' },
      { name: 'a payload with "=" padding, correctly MACed', token: signRaw(goodHeader, `${oddPayload}==`), reason: 'payload' },
      { name: 'a signature with a "+" character', token: `${goodHeader}.${goodPayload}.${goodSignature.slice(0, -1)}+`, reason: 'signature' },
      { name: 'a header with trailing bits changed (non-canonical base64url)', token: signRaw(nonCanonicalHeader, goodPayload), reason: 'header' },
      { name: 'a payload with trailing bits changed, correctly MACed', token: signRaw(goodHeader, nonCanonicalPayload), reason: 'payload' },
      { name: 'a signature with trailing bits changed', token: `${goodHeader}.${goodPayload}.${nonCanonicalSignature}`, reason: 'signature' },
      { name: 'a header that is not JSON', token: signRaw(b64('{alg:HS256}'), goodPayload), reason: 'header' },
      { name: 'a header that is a JSON array', token: signRaw(json(['HS256']), goodPayload), reason: 'header' },
      { name: 'a header that is a JSON string', token: signRaw(json('HS256'), goodPayload), reason: 'header' },
      { name: 'a header that is JSON null', token: signRaw(json(null), goodPayload), reason: 'header' },
      { name: 'a payload that is not JSON, correctly MACed', token: signRaw(goodHeader, b64('username=alice')), reason: 'payload' },
      { name: 'a payload that is a JSON array, correctly MACed', token: signRaw(goodHeader, json([liveClaims])), reason: 'payload' },
      // RFC 7515 section 5.2: the segments are UTF-8; read leniently, a byte that is not would
      // become U+FFFD, and two different payloads (two usernames) would read as one.
      { name: 'a header holding a byte that is not UTF-8, correctly MACed', token: signRaw(notUtf8('{"alg":"HS256","x":"', '"}'), goodPayload), reason: 'header' },
      { name: 'a payload holding a byte that is not UTF-8, correctly MACed', token: signRaw(goodHeader, notUtf8('{"username":"al', `ice","iat":${NOW - 10},"exp":${NOW + 3600}}`)), reason: 'payload' },
      { name: 'a tampered payload', token: `${goodHeader}.${tamperedPayload}.${goodSignature}`, reason: 'signature' },
      { name: 'a tampered signature', token: `${goodHeader}.${goodPayload}.${tamperedSignature}`, reason: 'signature' },
      { name: 'a truncated signature', token: good.slice(0, -1), reason: 'signature' },
      // U+0100 + c has the low byte c: compared as latin1 bytes it would spell the real MAC, so
      // one token would have many spellings (and a revoked one could come back in another).
      { name: 'a signature character above U+00FF whose low byte is the right one', token: `${goodHeader}.${goodPayload}.${replaceLast(goodSignature, String.fromCharCode(0x100 + lastSigChar.charCodeAt(0)))}`, reason: 'signature' },
      { name: 'a signature character above U+00FF in the middle', token: `${goodHeader}.${goodPayload}.${goodSignature.slice(0, middle)}${String.fromCharCode(0x100 + goodSignature.charCodeAt(middle))}${goodSignature.slice(middle + 1)}`, reason: 'signature' },
      { name: 'a signature with an extra character', token: `${good}A`, reason: 'signature' },
      { name: 'a token signed with another secret', token: createTokenCodec(OTHER_SECRET).sign(liveClaims), reason: 'signature' },
      { name: 'the signature of another token', token: `${goodHeader}.${goodPayload}.${codec.sign({ ...liveClaims, username: 'bob' }).split('.')[2] ?? ''}`, reason: 'signature' },
      { name: 'a token longer than MAX_TOKEN_LENGTH', token: codec.sign({ ...liveClaims, pad: 'x'.repeat(MAX_TOKEN_LENGTH) }), reason: 'too-long' },
      { name: 'a huge garbage string', token: 'a'.repeat(MAX_TOKEN_LENGTH + 1), reason: 'too-long' },
    ];

    for (const { name, token, reason } of cases) {
      it(`refuses ${name} (reason "${reason}")`, () => assertRefused(token, reason));
    }

    it('would have accepted the untampered token these cases were built from', () => {
      assert.deepEqual(codec.verify(good, NOW), liveClaims);
      assert.deepEqual(codec.verify(signRaw(oddHeader, goodPayload), NOW), liveClaims);
      assert.deepEqual(codec.verify(signRaw(goodHeader, oddPayload), NOW), liveClaims);
    });
  });

  describe('checks the claims after the signature', () => {
    const claimCases: ReadonlyArray<{ name: string; claims: Record<string, unknown>; reason: SessionTokenRefusal; now?: number }> = [
      { name: 'exp equal to now', claims: { username: 'alice', iat: NOW - 10, exp: NOW }, reason: 'expired' },
      { name: 'exp before now', claims: { username: 'alice', iat: NOW - 10, exp: NOW - 1 }, reason: 'expired' },
      { name: 'exp long ago', claims: { username: 'alice', iat: 0, exp: 1 }, reason: 'expired' },
      { name: 'a missing exp', claims: { username: 'alice', iat: NOW - 10 }, reason: 'exp' },
      { name: 'an exp given as a string', claims: { username: 'alice', iat: NOW - 10, exp: String(NOW + 3600) }, reason: 'exp' },
      { name: 'an exp of null', claims: { username: 'alice', iat: NOW - 10, exp: null }, reason: 'exp' },
      { name: 'an exp of true', claims: { username: 'alice', iat: NOW - 10, exp: true }, reason: 'exp' },
      { name: 'a missing iat', claims: { username: 'alice', exp: NOW + 3600 }, reason: 'iat' },
      { name: 'an iat given as a string', claims: { username: 'alice', iat: String(NOW), exp: NOW + 3600 }, reason: 'iat' },
      { name: 'an iat beyond the allowed skew', claims: { username: 'alice', iat: NOW + IAT_SKEW_SECONDS + 1, exp: NOW + 3600 }, reason: 'not-yet-valid' },
      { name: 'an iat far in the future', claims: { username: 'alice', iat: NOW + 86_400, exp: NOW + 90_000 }, reason: 'not-yet-valid' },
      { name: 'a numeric username', claims: { username: 42, iat: NOW - 10, exp: NOW + 3600 }, reason: 'username' },
      { name: 'a null username', claims: { username: null, iat: NOW - 10, exp: NOW + 3600 }, reason: 'username' },
      { name: 'an array username', claims: { username: ['alice'], iat: NOW - 10, exp: NOW + 3600 }, reason: 'username' },
      { name: 'a missing username', claims: { iat: NOW - 10, exp: NOW + 3600 }, reason: 'username' },
      { name: 'a username only under another name', claims: { sub: 'alice', iat: NOW - 10, exp: NOW + 3600 }, reason: 'username' },
      { name: 'a session key (sid) that is not a string', claims: { ...liveClaims, sid: 7 }, reason: 'sid' },
      { name: 'a session id (ses) that is not a string', claims: { ...liveClaims, sid: 'k', ses: ['s'] }, reason: 'ses' },
      { name: 'an amr that is not a list of known values', claims: { ...liveClaims, sid: 'k', amr: ['sms'] }, reason: 'amr' },
    ];

    for (const { name, claims, reason } of claimCases) {
      it(`refuses a correctly signed token with ${name} (reason "${reason}")`, () => {
        assertRefused(signRaw(HS256_HEADER, json(claims)), reason);
      });
    }

    it('accepts a token one second before its exp', () => {
      const claims = { username: 'alice', iat: NOW - 10, exp: NOW + 1 };
      assert.deepEqual(codec.verify(codec.sign(claims), NOW), claims);
    });

    it('accepts an iat ahead of the clock by exactly the allowed skew', () => {
      const claims = { username: 'alice', iat: NOW + IAT_SKEW_SECONDS, exp: NOW + 3600 };
      assert.deepEqual(codec.verify(codec.sign(claims), NOW), claims);
    });

    it('accepts an iat a little ahead of the clock, within the skew', () => {
      const claims = { username: 'alice', iat: NOW + 5, exp: NOW + 3600 };
      assert.deepEqual(codec.verify(codec.sign(claims), NOW), claims);
    });

    it('accepts the same token until the clock reaches exp, then refuses it', () => {
      const token = codec.sign({ username: 'alice', iat: NOW, exp: NOW + 100 });
      assert.equal(codec.verify(token, NOW + 99).username, 'alice');
      assertRefused(token, 'expired', NOW + 100);
    });

    it('accepts a token of exactly MAX_TOKEN_LENGTH characters', () => {
      let token = '';
      for (let pad = 0; pad < MAX_TOKEN_LENGTH && token.length < MAX_TOKEN_LENGTH; pad++) {
        token = codec.sign({ ...liveClaims, pad: 'x'.repeat(pad) });
      }
      assert.equal(token.length, MAX_TOKEN_LENGTH);
      assert.deepEqual(codec.verify(token, NOW), liveClaims);
    });
  });

  describe('RFC 7515 appendix A.1 (HS256 example)', () => {
    // The JWK "k" of appendix A.1 and the compact serialization it produces.
    const rfcKey = Buffer.from('AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow', 'base64url');
    const rfcToken =
      'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9' +
      '.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ' +
      '.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const beforeExp = 1_300_819_380 - 1;
    const rfcCodec = createTokenCodec(rfcKey);

    it('passes the MAC check and is then refused only because it has no iat', () => {
      assertRefused(rfcToken, 'iat', beforeExp, rfcCodec);
    });

    it('is refused as expired once the clock reaches its exp', () => {
      assertRefused(rfcToken, 'expired', 1_300_819_380, rfcCodec);
    });

    it('is refused for its signature when one byte of the signature is changed', () => {
      const [header = '', payload = '', signature = ''] = rfcToken.split('.');
      const bytes = Buffer.from(signature, 'base64url');
      bytes[0] = (bytes[0] ?? 0) ^ 0x01;
      assertRefused(`${header}.${payload}.${bytes.toString('base64url')}`, 'signature', beforeExp, rfcCodec);
    });

    it('is refused for its signature under any other key', () => {
      assertRefused(rfcToken, 'signature', beforeExp, codec);
    });
  });
});
