import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeCbor } from '../../src/passkeys/cbor.js';
import { CoseInvalid, decodeCoseKey, importCoseKey, verifyCoseSignature } from '../../src/passkeys/cose.js';
import { readClientData, verifyAuthentication, verifyRegistration, WebAuthnRefused, type Expectation } from '../../src/passkeys/verify.js';
import { encodeCbor, FLAGS, SoftAuthenticator, type CborInput, type SoftAlgorithm } from '../helpers/soft-authenticator.js';

const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:3000';
const ALGORITHMS: readonly SoftAlgorithm[] = ['ES256', 'EdDSA', 'RS256'];

function expectation(challenge: Buffer): Expectation {
  return { challenge, rpId: RP_ID, isOriginAllowed: (origin) => origin === ORIGIN };
}

function refusedWith(reason: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof WebAuthnRefused, `expected WebAuthnRefused, got ${String(error)}`);
    assert.equal(error.reason, reason);
    return true;
  };
}

/** Runs a registration ceremony on `authenticator` with a fresh challenge; returns what verification needs. */
function register(authenticator: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['create']>[1] = {}) {
  const challenge = randomBytes(32);
  const json = authenticator.create({ challenge: challenge.toString('base64url'), rp: { id: RP_ID }, user: { id: randomBytes(16).toString('base64url') } }, overrides);
  const response = {
    clientDataJSON: Buffer.from(json.response.clientDataJSON, 'base64url'),
    attestationObject: Buffer.from(json.response.attestationObject, 'base64url'),
    credentialId: Buffer.from(json.rawId, 'base64url'),
  };
  return { challenge, response };
}

function registered(authenticator: SoftAuthenticator) {
  const { challenge, response } = register(authenticator);
  return verifyRegistration(response, expectation(challenge));
}

function assertion(authenticator: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['get']>[1] = {}) {
  const challenge = randomBytes(32);
  const json = authenticator.get({ challenge: challenge.toString('base64url'), rpId: RP_ID }, overrides);
  return {
    challenge,
    response: {
      clientDataJSON: Buffer.from(json.response.clientDataJSON, 'base64url'),
      authenticatorData: Buffer.from(json.response.authenticatorData, 'base64url'),
      signature: Buffer.from(json.response.signature, 'base64url'),
    },
  };
}

describe('WebAuthn registration', () => {
  for (const algorithm of ALGORITHMS) {
    it(`accepts a ${algorithm} credential with attestation none and returns its key and counter`, () => {
      const authenticator = new SoftAuthenticator({ algorithm, origin: ORIGIN });
      const credential = registered(authenticator);
      assert.ok(credential.id.equals(authenticator.credentialId));
      assert.equal(credential.algorithm, { ES256: -7, EdDSA: -8, RS256: -257 }[algorithm]);
      assert.ok(credential.publicKeyBytes.equals(authenticator.coseKey()));
      assert.equal(credential.signCount, 0);
      assert.equal(credential.isUserVerified, true);
      assert.equal(decodeCoseKey(credential.publicKeyBytes).key.equals(authenticator.publicKey), true);
    });
  }

  it('records that the user was not verified when UV is clear', () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { challenge, response } = register(authenticator, { flags: FLAGS.UP | FLAGS.AT });
    assert.equal(verifyRegistration(response, expectation(challenge)).isUserVerified, false);
  });

  it('accepts a packed statement without verifying it, and reads extensions after the key', () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const attStmt = new Map<string, CborInput>([['alg', -7], ['sig', Buffer.alloc(70, 1)], ['x5c', [Buffer.alloc(400, 2)]]]);
    const extensions = encodeCbor(new Map<string, CborInput>([['credProtect', 2]]));
    const { challenge, response } = register(authenticator, { fmt: 'packed', attStmt, flags: FLAGS.UP | FLAGS.AT | FLAGS.ED, trailing: extensions });
    assert.ok(verifyRegistration(response, expectation(challenge)).id.equals(authenticator.credentialId));
  });

  const refusals: Array<[string, Parameters<SoftAuthenticator['create']>[1], string]> = [
    ['the ceremony type is webauthn.get', { clientData: { type: 'webauthn.get' } }, 'client data type'],
    ['the type is missing', { clientData: { type: undefined } }, 'client data type'],
    ['the origin is another site', { clientData: { origin: 'https://evil.example' } }, 'origin'],
    ['the origin is the right host over another scheme', { clientData: { origin: 'https://localhost:3000' } }, 'origin'],
    ['it was made in a cross-origin frame', { clientData: { crossOrigin: true } }, 'cross-origin'],
    ['it names a top origin', { clientData: { topOrigin: 'https://evil.example' } }, 'cross-origin'],
    ['the challenge is not 32 bytes', { clientData: { challenge: randomBytes(16).toString('base64url') } }, 'challenge not 32 bytes of base64url'],
    ['the challenge is padded base64', { clientData: { challenge: `${randomBytes(32).toString('base64')}` } }, 'challenge not base64url'],
    ['the rp id hash is of another name', { rpId: 'evil.example' }, 'rp id hash'],
    ['the user was not present', { flags: FLAGS.UV | FLAGS.AT }, 'user not present'],
    ['backup state is set without backup eligibility', { flags: FLAGS.UP | FLAGS.AT | FLAGS.BS }, 'backup state without backup eligibility'],
    ['there is no attested credential data', { flags: FLAGS.UP }, 'bytes after the authenticator data'],
    ['bytes follow the key', { trailing: Buffer.from([0]) }, 'bytes after the authenticator data'],
    ['the none statement is not empty', { attStmt: new Map([['sig', Buffer.alloc(1)]]) }, 'none attestation with a statement'],
    ['the format is unknown', { fmt: 'vendor-x' }, 'attestation format unknown'],
    ['the reported id is not the attested one', { reportedId: randomBytes(32).toString('base64url') }, 'credential id differs from the attested one'],
    ['the attestation object is not CBOR', { attestationObject: Buffer.from([0xff]) }, 'simple value'],
    ['the attestation object is an array', { attestationObject: encodeCbor([1, 2, 3]) }, 'attestation object not a map of fmt, attStmt, authData'],
    ['the attestation object has a fourth key', { attestationObject: encodeCbor(new Map<string, CborInput>([['fmt', 'none'], ['attStmt', new Map()], ['authData', Buffer.alloc(37)], ['x', 1]])) }, 'attestation object not a map of fmt, attStmt, authData'],
    ['the COSE key has an extra label', { coseKey: encodeCbor(new Map<number, CborInput>([[1, 1], [3, -8], [-1, 6], [-2, Buffer.alloc(32, 7)], [2, Buffer.from('kid')]])) }, 'labels other than the key type needs'],
    ['the COSE key is ES256 on another curve', { coseKey: encodeCbor(new Map<number, CborInput>([[1, 2], [3, -7], [-1, 2], [-2, Buffer.alloc(32, 1)], [-3, Buffer.alloc(32, 2)]])) }, 'curve is not P-256'],
    ['the COSE key is a point off the curve', { coseKey: encodeCbor(new Map<number, CborInput>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.alloc(32, 1)], [-3, Buffer.alloc(32, 2)]])) }, 'node:crypto refused the key'],
    ['the COSE key names an algorithm not offered (ES384)', { coseKey: encodeCbor(new Map<number, CborInput>([[1, 2], [3, -35], [-1, 2], [-2, Buffer.alloc(48, 1)], [-3, Buffer.alloc(48, 2)]])) }, 'key type and algorithm not one of EdDSA/Ed25519, ES256/P-256, RS256'],
    ['the COSE key is not CBOR a decoder accepts', { coseKey: Buffer.from([0xbf, 0x01, 0x02, 0xff]) }, 'indefinite length'],
  ];
  for (const [what, overrides, reason] of refusals) {
    it(`refuses a registration when ${what}`, () => {
      const authenticator = new SoftAuthenticator({ origin: ORIGIN });
      const { challenge, response } = register(authenticator, overrides);
      assert.throws(() => verifyRegistration(response, expectation(challenge)), refusedWith(reason));
    });
  }

  it('refuses a registration for another challenge', () => {
    const { response } = register(new SoftAuthenticator({ origin: ORIGIN }));
    assert.throws(() => verifyRegistration(response, expectation(randomBytes(32))), refusedWith('challenge'));
  });
});

describe('WebAuthn authentication', () => {
  for (const algorithm of ALGORITHMS) {
    it(`accepts a ${algorithm} assertion and returns the new count and the UV flag`, () => {
      const authenticator = new SoftAuthenticator({ algorithm, origin: ORIGIN });
      const credential = registered(authenticator);
      const { challenge, response } = assertion(authenticator);
      const result = verifyAuthentication(response, { ...expectation(challenge), publicKey: decodeCoseKey(credential.publicKeyBytes), storedSignCount: 0 });
      assert.deepEqual(result, { signCount: 1, isUserVerified: true });
    });
  }

  function verifyWith(authenticator: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['get']>[1], storedSignCount = 0) {
    const { challenge, response } = assertion(authenticator, overrides);
    return verifyAuthentication(response, { ...expectation(challenge), publicKey: decodeCoseKey(authenticator.coseKey()), storedSignCount });
  }

  it('says the user was not verified when UV is clear', () => {
    assert.equal(verifyWith(new SoftAuthenticator({ origin: ORIGIN }), { flags: FLAGS.UP }).isUserVerified, false);
  });

  it('accepts a counter of 0 from an authenticator without one, even after a stored count', () => {
    assert.deepEqual(verifyWith(new SoftAuthenticator({ origin: ORIGIN }), { signCount: 0 }, 0), { signCount: 0, isUserVerified: true });
    assert.deepEqual(verifyWith(new SoftAuthenticator({ origin: ORIGIN }), { signCount: 0 }, 7), { signCount: 0, isUserVerified: true });
  });

  const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const refusals: Array<[string, Parameters<SoftAuthenticator['get']>[1], number, string]> = [
    ['the ceremony type is webauthn.create', { clientData: { type: 'webauthn.create' } }, 0, 'client data type'],
    ['the origin is another site', { clientData: { origin: 'https://evil.example' } }, 0, 'origin'],
    ['the rp id hash is of another name', { rpId: 'evil.example' }, 0, 'rp id hash'],
    ['the user was not present', { flags: FLAGS.UV }, 0, 'user not present'],
    ['the signature is by another key', { signingKey: forger }, 0, 'signature'],
    ['the signature is garbage', { signature: randomBytes(70) }, 0, 'signature'],
    ['the signature is empty', { signature: Buffer.alloc(0) }, 0, 'signature'],
    ['the sign count went backwards', { signCount: 4 }, 5, 'sign count did not advance'],
    ['the sign count did not move', { signCount: 5 }, 5, 'sign count did not advance'],
    ['the authenticator data is too short', { authenticatorData: Buffer.alloc(36) }, 0, 'authenticator data too short'],
    ['the authenticator data carries a credential', { flags: FLAGS.UP | FLAGS.AT }, 0, 'attested credential data truncated'],
    ['the extensions flag is set with nothing after it', { flags: FLAGS.UP | FLAGS.ED }, 0, 'truncated'],
  ];
  for (const [what, overrides, stored, reason] of refusals) {
    it(`refuses an assertion when ${what}`, () => {
      assert.throws(() => verifyWith(new SoftAuthenticator({ origin: ORIGIN }), overrides, stored), refusedWith(reason));
    });
  }

  it('refuses an assertion for another challenge', () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { response } = assertion(authenticator);
    assert.throws(
      () => verifyAuthentication(response, { ...expectation(randomBytes(32)), publicKey: decodeCoseKey(authenticator.coseKey()), storedSignCount: 0 }),
      refusedWith('challenge'),
    );
  });

  it('refuses an assertion signed by the right key over other client data', () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { challenge, response } = assertion(authenticator);
    const other = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: challenge.toString('base64url'), origin: ORIGIN, crossOrigin: false, extra: 1 }));
    assert.throws(
      () => verifyAuthentication({ ...response, clientDataJSON: other }, { ...expectation(challenge), publicKey: decodeCoseKey(authenticator.coseKey()), storedSignCount: 0 }),
      refusedWith('signature'),
    );
  });
});

describe('client data', () => {
  const challenge = randomBytes(32).toString('base64url');
  const table: Array<[string, Buffer, string]> = [
    ['not UTF-8', Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), 'client data not UTF-8'],
    ['not JSON', Buffer.from('{type'), 'client data not JSON'],
    ['an array', Buffer.from('[]'), 'client data not an object'],
    ['too large', Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin: ORIGIN, pad: 'x'.repeat(2048) })), 'client data too large'],
    ['without an origin', Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge })), 'origin not a string'],
    ['with a crossOrigin that is not false', Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin: ORIGIN, crossOrigin: 'no' })), 'cross-origin'],
  ];
  for (const [what, bytes, reason] of table) {
    it(`refuses client data ${what}`, () => assert.throws(() => readClientData(bytes), refusedWith(reason)));
  }
});

describe('COSE keys', () => {
  const rsaKey = (n: Buffer, e: Buffer): CborInput => new Map<number, CborInput>([[1, 3], [3, -257], [-1, n], [-2, e]]);
  const table: Array<[string, CborInput, string]> = [
    ['not a map', [1, 2], 'not a map'],
    ['an ES256 key without y', new Map<number, CborInput>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.alloc(32)]]), 'labels other than the key type needs'],
    ['an ES256 key with a short x', new Map<number, CborInput>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.alloc(31)], [-3, Buffer.alloc(32)]]), 'label -2 has the wrong length'],
    ['an EdDSA key on X25519', new Map<number, CborInput>([[1, 1], [3, -8], [-1, 4], [-2, Buffer.alloc(32)]]), 'curve is not Ed25519'],
    ['an EdDSA key whose x is text', new Map<number, CborInput>([[1, 1], [3, -8], [-1, 6], [-2, 'x']]), 'label -2 is not a byte string'],
    ['an OKP key claiming ES256', new Map<number, CborInput>([[1, 1], [3, -7], [-1, 6], [-2, Buffer.alloc(32)]]), 'key type and algorithm not one of EdDSA/Ed25519, ES256/P-256, RS256'],
    ['an RSA key of 1024 bits', rsaKey(Buffer.alloc(128, 0xff), Buffer.from([1, 0, 1])), 'modulus outside 2048 to 4096 bits'],
    ['an RSA key with a leading zero byte', rsaKey(Buffer.concat([Buffer.alloc(1), Buffer.alloc(256, 0xff)]), Buffer.from([1, 0, 1])), 'modulus outside 2048 to 4096 bits'],
    ['an RSA key with exponent 3', rsaKey(Buffer.alloc(256, 0xff), Buffer.from([3])), 'exponent is not 65537'],
  ];
  for (const [what, value, reason] of table) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => importCoseKey(decodeCbor(encodeCbor(value))),
        (error: unknown) => error instanceof CoseInvalid && error.reason === reason,
      );
    });
  }

  it('never throws from signature verification, whatever the signature', () => {
    for (const algorithm of ALGORITHMS) {
      const key = decodeCoseKey(new SoftAuthenticator({ algorithm }).coseKey());
      for (const signature of [Buffer.alloc(0), Buffer.alloc(64), Buffer.alloc(256), randomBytes(72), Buffer.from([0x30, 0x81, 0xff])]) {
        assert.equal(verifyCoseSignature(key, Buffer.from('data'), signature), false);
      }
    }
  });
});
