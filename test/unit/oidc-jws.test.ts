import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  KeyRefused, privateJwkOf, publicJwkOf, signingKeyFromJwk, thumbprintOf, verifyingKeyFromJwk, type SigningKey,
  type VerifyingKey,
} from '../../src/oidc/jwk.js';
import { inspectJws, MAX_JWS_LENGTH, signJwt, type JwsRefusal } from '../../src/oidc/jws.js';

// RFC 7515 appendix A.2 (RS256) and A.3 (ES256): the keys, the payload and the tokens, as printed there.
const RFC_PAYLOAD = '{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}';
const RFC_RSA_JWK = {
  kty: 'RSA',
  n: 'ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ',
  e: 'AQAB',
  d: 'Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ',
  p: '4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc',
  q: 'uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc',
  dp: 'BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0',
  dq: 'h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU',
  qi: 'IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U',
};
const RFC_RS256_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw';
const RFC_EC_JWK = {
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
  d: 'jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI',
};
const RFC_ES256_TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q';
// RFC 7638 section 3.1: the example key and its thumbprint.
const RFC_7638_JWK = {
  kty: 'RSA',
  n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
  e: 'AQAB',
  alg: 'RS256',
  kid: '2011-04-29',
};
const RFC_7638_THUMBPRINT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

const rfcRsa = signingKeyFromJwk(RFC_RSA_JWK);
const rfcEc = signingKeyFromJwk(RFC_EC_JWK);
const only = (key: VerifyingKey) => (): VerifyingKey => key;
const byKid = (...keys: VerifyingKey[]) => (kid: string | undefined) => keys.find((key) => key.kid === kid);

const b64 = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A token over `header` and `claims`, signed as `key` signs (so only the header is wrong). */
function signedWith(key: SigningKey, header: unknown, claims: unknown = { sub: 'a' }): string {
  const input = `${b64(header)}.${b64(claims)}`;
  const options = key.alg === 'ES256' ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' as const } : key.privateKey;
  return `${input}.${sign('sha256', Buffer.from(input), options).toString('base64url')}`;
}

function refusedFor(token: string, findKey: (kid: string | undefined) => VerifyingKey | undefined): JwsRefusal | undefined {
  const result = inspectJws(token, findKey);
  assert.equal(result.ok, false, `expected a refusal of ${token.slice(0, 60)}`);
  return result.ok ? undefined : result.reason;
}

describe('JWS with the RFC 7515 appendix A vectors', () => {
  it('verifies the A.2 RS256 token and signs the same bytes again (PKCS #1 v1.5 is deterministic)', () => {
    const result = inspectJws(RFC_RS256_TOKEN, only(rfcRsa));
    assert.ok(result.ok);
    assert.deepEqual(result.payload, JSON.parse(RFC_PAYLOAD));
    const [header, payload, signature] = RFC_RS256_TOKEN.split('.');
    const ours = sign('sha256', Buffer.from(`${header}.${payload}`), rfcRsa.privateKey).toString('base64url');
    assert.equal(ours, signature);
  });

  it('verifies the A.3 ES256 token, whose signature is R||S (64 bytes), not DER', () => {
    const result = inspectJws(RFC_ES256_TOKEN, only(rfcEc));
    assert.ok(result.ok);
    assert.deepEqual(result.payload, JSON.parse(RFC_PAYLOAD));
    assert.equal(Buffer.from(RFC_ES256_TOKEN.split('.')[2] ?? '', 'base64url').length, 64);
  });

  it('refuses each vector under the other key, and under a key of the same kind that did not sign it', () => {
    const otherRsa = signingKeyFromJwk(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }));
    const otherEc = signingKeyFromJwk(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }));
    assert.equal(refusedFor(RFC_RS256_TOKEN, only(rfcEc)), 'alg');
    assert.equal(refusedFor(RFC_ES256_TOKEN, only(rfcRsa)), 'alg');
    assert.equal(refusedFor(RFC_RS256_TOKEN, only(otherRsa)), 'signature');
    assert.equal(refusedFor(RFC_ES256_TOKEN, only(otherEc)), 'signature');
  });
});

describe('signJwt', () => {
  for (const key of [rfcRsa, rfcEc]) {
    it(`signs ${key.alg} with header {alg, typ: JWT, kid} that inspectJws accepts by kid`, () => {
      const token = signJwt(key, { sub: 'x', n: 1 });
      const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as unknown;
      assert.deepEqual(header, { alg: key.alg, typ: 'JWT', kid: key.kid });
      const result = inspectJws(token, byKid(rfcRsa, rfcEc));
      assert.ok(result.ok);
      assert.deepEqual(result.payload, { sub: 'x', n: 1 });
      assert.equal(result.key.kid, key.kid);
    });
  }

  it('makes ES256 signatures of exactly 64 bytes, different each time', () => {
    const first = signJwt(rfcEc, { a: 1 }).split('.')[2] ?? '';
    const second = signJwt(rfcEc, { a: 1 }).split('.')[2] ?? '';
    assert.equal(Buffer.from(first, 'base64url').length, 64);
    assert.notEqual(first, second);
  });
});

describe('inspectJws refuses', () => {
  const good = signJwt(rfcRsa, { sub: 'a' });
  const [goodHeader = '', goodPayload = '', goodSignature = ''] = good.split('.');
  const keys = byKid(rfcRsa, rfcEc);
  const hmacWithPublicKey = (() => {
    // The classic confusion: HS256 with the RSA public key's PEM as the HMAC secret.
    const input = `${b64({ alg: 'HS256', kid: rfcRsa.kid })}.${b64({ sub: 'a' })}`;
    const pem = rfcRsa.publicKey.export({ type: 'spki', format: 'pem' });
    return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
  })();
  const table: ReadonlyArray<readonly [string, string, JwsRefusal]> = [
    ['alg none, empty signature', `${b64({ alg: 'none', kid: rfcRsa.kid })}.${goodPayload}.`, 'alg'],
    ['alg none, the real signature', `${b64({ alg: 'none', kid: rfcRsa.kid })}.${goodPayload}.${goodSignature}`, 'alg'],
    ['alg HS256 keyed with the public key', hmacWithPublicKey, 'alg'],
    ['alg HS512', signedWith(rfcRsa, { alg: 'HS512', kid: rfcRsa.kid }), 'alg'],
    ['alg RS512', signedWith(rfcRsa, { alg: 'RS512', kid: rfcRsa.kid }), 'alg'],
    ['alg PS256', signedWith(rfcRsa, { alg: 'PS256', kid: rfcRsa.kid }), 'alg'],
    ['alg ES256 on the RSA key', signedWith(rfcRsa, { alg: 'ES256', kid: rfcRsa.kid }), 'alg'],
    ['alg RS256 on the EC key', signedWith(rfcEc, { alg: 'RS256', kid: rfcEc.kid }), 'alg'],
    ['alg in lower case', signedWith(rfcRsa, { alg: 'rs256', kid: rfcRsa.kid }), 'alg'],
    ['no alg', signedWith(rfcRsa, { kid: rfcRsa.kid }), 'alg'],
    ['an unknown kid', signedWith(rfcRsa, { alg: 'RS256', kid: 'someone-else' }), 'unknown-key'],
    ['no kid', signedWith(rfcRsa, { alg: 'RS256' }), 'unknown-key'],
    ['a kid that is not a string', signedWith(rfcRsa, { alg: 'RS256', kid: 7 }), 'kid'],
    ['crit', signedWith(rfcRsa, { alg: 'RS256', kid: rfcRsa.kid, crit: ['exp'], exp: 1 }), 'crit'],
    ['typ other than JWT', signedWith(rfcRsa, { alg: 'RS256', kid: rfcRsa.kid, typ: 'at+jwt' }), 'typ'],
    ['two segments', `${goodHeader}.${goodPayload}`, 'segments'],
    ['four segments', `${good}.${goodSignature}`, 'segments'],
    ['one segment', goodHeader, 'segments'],
    ['an empty token', '', 'segments'],
    ['a header that is not base64url', `${goodHeader}*.${goodPayload}.${goodSignature}`, 'header'],
    ['a header with base64 padding', `${goodHeader}=.${goodPayload}.${goodSignature}`, 'header'],
    ['a header that is not JSON', `${b64('{alg')}.${goodPayload}.${goodSignature}`, 'header'],
    ['a header that is a JSON array', `${b64(['RS256'])}.${goodPayload}.${goodSignature}`, 'header'],
    ['a header that is not UTF-8', `${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}.${goodPayload}.${goodSignature}`, 'header'],
    ['an empty header', `.${goodPayload}.${goodSignature}`, 'header'],
    ['an edited payload', `${goodHeader}.${b64({ sub: 'b' })}.${goodSignature}`, 'signature'],
    ['a signature one byte short', `${goodHeader}.${goodPayload}.${Buffer.from(goodSignature, 'base64url').subarray(1).toString('base64url')}`, 'signature'],
    ['a signature with a flipped bit', `${goodHeader}.${goodPayload}.${flipLastBit(goodSignature)}`, 'signature'],
    ['no signature', `${goodHeader}.${goodPayload}.`, 'signature'],
    ['a signature in a second spelling (padding)', `${goodHeader}.${goodPayload}.${goodSignature}==`, 'signature'],
    ['an ES256 signature in DER', derSigned(), 'signature'],
    ['a payload that is not JSON', signedRaw(`${b64({ alg: 'RS256', kid: rfcRsa.kid })}.${b64('not json')}`), 'payload'],
    ['a payload that is a string', signedRaw(`${b64({ alg: 'RS256', kid: rfcRsa.kid })}.${b64('"sub"')}`), 'payload'],
    ['a token longer than the cap', `${goodHeader}.${'A'.repeat(MAX_JWS_LENGTH)}.${goodSignature}`, 'too-long'],
  ];
  for (const [name, token, reason] of table) {
    it(`${name}: ${reason}`, () => assert.equal(refusedFor(token, keys), reason));
  }

  function flipLastBit(signature: string): string {
    const bytes = Buffer.from(signature, 'base64url');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    return bytes.toString('base64url');
  }
  function signedRaw(input: string): string {
    return `${input}.${sign('sha256', Buffer.from(input), rfcRsa.privateKey).toString('base64url')}`;
  }
  function derSigned(): string {
    const input = `${b64({ alg: 'ES256', kid: rfcEc.kid })}.${b64({ sub: 'a' })}`;
    return `${input}.${sign('sha256', Buffer.from(input), rfcEc.privateKey).toString('base64url')}`;
  }
});

describe('JWKs', () => {
  it('computes the RFC 7638 section 3.1 thumbprint, ignoring the optional members', () => {
    assert.equal(thumbprintOf(RFC_7638_JWK), RFC_7638_THUMBPRINT);
    assert.equal(verifyingKeyFromJwk(RFC_7638_JWK).kid, RFC_7638_THUMBPRINT);
  });

  it('lists a public JWK with kid, use and alg and no private member', () => {
    for (const key of [rfcRsa, rfcEc]) {
      const jwk = publicJwkOf(key);
      assert.equal(jwk['kid'], key.kid);
      assert.equal(jwk['use'], 'sig');
      assert.equal(jwk['alg'], key.alg);
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(Object.hasOwn(jwk, member), false, member);
      assert.equal(verifyingKeyFromJwk(jwk).kid, key.kid);
    }
  });

  it('reads back a private JWK it wrote to the same kid', () => {
    assert.equal(signingKeyFromJwk(privateJwkOf(rfcEc)).kid, rfcEc.kid);
    assert.equal(signingKeyFromJwk(privateJwkOf(rfcRsa)).kid, rfcRsa.kid);
  });

  it('refuses keys that are too weak or of another kind', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' });
    const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
    for (const jwk of [small, p384, ed, { kty: 'oct', k: 'AAAA' }, { ...RFC_EC_JWK, d: 'bad' }, null, 'key']) {
      assert.throws(() => signingKeyFromJwk(jwk), KeyRefused);
    }
    const { d: _d, ...smallPublic } = small;
    assert.throws(() => verifyingKeyFromJwk(smallPublic), KeyRefused);
    assert.throws(() => verifyingKeyFromJwk({ kty: 'oct', k: 'AAAA' }), KeyRefused);
  });
});
