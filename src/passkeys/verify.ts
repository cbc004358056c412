import { createHash, timingSafeEqual } from 'node:crypto';
import { BASE64URL, decodeBase64url, isPlainObject } from '../validate/check.js';
import { decodeUtf8Strict } from '../validate/utf8.js';
import { CborInvalid, decodeCbor, decodeCborPrefix, reasonError } from './cbor.js';
import { CoseInvalid, importCoseKey, verifyCoseSignature, type CosePublicKey } from './cose.js';

// The relying party's checks of WebAuthn Level 3, section 7.1 (registering a new credential)
// and 7.2 (verifying an authentication assertion), over bytes already taken out of the JSON.

/** The response does not verify. */
export class WebAuthnRefused extends reasonError('WEBAUTHN_REFUSED', 'WebAuthn response') {}

/** The challenge this server issued (and has just taken out of its store), and who we are. */
export interface Expectation {
  readonly challenge: Buffer;
  readonly rpId: string;
  readonly isOriginAllowed: (origin: string) => boolean;
}

type ClientData = ReturnType<typeof readClientData>;

// A browser's clientDataJSON is about 200 bytes; the spec lets it grow with new members.
export const MAX_CLIENT_DATA_BYTES = 2048;
export const CHALLENGE_BYTES = 32;
/** WebAuthn section 5.1: credential ids are at most 1,023 bytes. */
export const MAX_CREDENTIAL_ID_BYTES = 1023;

// Authenticator data flags (section 6.1), after 32 bytes of rp.id hash; then 4 of sign count.
const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40, ED: 0x80 } as const;
const AUTH_DATA_HEADER_BYTES = 37;

/**
 * The collected client data (section 5.8.1) of `bytes`: a JSON object whose `type`, `challenge`
 * (32 bytes, base64url) and `origin` are well formed, that is not from a cross-origin iframe.
 * Throws WebAuthnRefused. Whether challenge and origin are the expected ones is not judged here.
 */
export function readClientData(bytes: Uint8Array) {
  if (bytes.length > MAX_CLIENT_DATA_BYTES) throw new WebAuthnRefused('client data too large');
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new WebAuthnRefused('client data not UTF-8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebAuthnRefused('client data not JSON');
  }
  if (!isPlainObject(parsed)) throw new WebAuthnRefused('client data not an object');
  const { type, challenge, origin } = {
    type: parsed['type'], challenge: parsed['challenge'], origin: parsed['origin'],
  };
  if (type !== 'webauthn.create' && type !== 'webauthn.get') throw new WebAuthnRefused('client data type');
  if (typeof challenge !== 'string' || !BASE64URL.test(challenge)) throw new WebAuthnRefused('challenge not base64url');
  const challengeBytes = decodeBase64url(challenge);
  if (challengeBytes?.length !== CHALLENGE_BYTES) throw new WebAuthnRefused('challenge not 32 bytes of base64url');
  if (typeof origin !== 'string' || origin.length > 512) throw new WebAuthnRefused('origin not a string');
  // Our pages never run in another site's frame: a response made inside one is refused.
  if (Object.hasOwn(parsed, 'crossOrigin') && parsed['crossOrigin'] !== false) {
    throw new WebAuthnRefused('cross-origin');
  }
  if (Object.hasOwn(parsed, 'topOrigin')) throw new WebAuthnRefused('cross-origin');
  return { type, challenge: challengeBytes, origin };
}

/** Steps 7.1.7-12 and 7.2.11-16: the client data is of this ceremony, for our challenge and an allowed origin. */
function checkClientData(bytes: Uint8Array, type: ClientData['type'], expect: Expectation): void {
  const clientData = readClientData(bytes);
  if (clientData.type !== type) throw new WebAuthnRefused('client data type');
  if (expect.challenge.length !== CHALLENGE_BYTES || !timingSafeEqual(clientData.challenge, expect.challenge)) {
    throw new WebAuthnRefused('challenge');
  }
  if (!expect.isOriginAllowed(clientData.origin)) throw new WebAuthnRefused('origin');
}

/** `read()`, with a CBOR or COSE refusal turned into WebAuthnRefused of the same reason. */
function refusingInvalid<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof CborInvalid || error instanceof CoseInvalid) {
      throw new WebAuthnRefused(error.reason, { cause: error });
    }
    throw error;
  }
}

/**
 * Parses authenticator data (section 6.1) and checks what is the same in both ceremonies:
 * the rp.id hash, user presence, the backup flags' consistency, and that nothing follows the
 * attested credential data and extensions. Throws WebAuthnRefused.
 */
function readAuthenticatorData(bytes: Buffer, rpId: string) {
  if (bytes.length < AUTH_DATA_HEADER_BYTES) throw new WebAuthnRefused('authenticator data too short');
  const rpIdHash = createHash('sha256').update(rpId, 'utf8').digest();
  if (!timingSafeEqual(bytes.subarray(0, 32), rpIdHash)) throw new WebAuthnRefused('rp id hash');
  const flags = bytes[32] ?? 0;
  // Step 7.1.14 / 7.2.17: the user was present.
  if ((flags & FLAG.UP) === 0) throw new WebAuthnRefused('user not present');
  // Section 6.1: a credential that cannot be backed up cannot be backed up.
  if ((flags & FLAG.BE) === 0 && (flags & FLAG.BS) !== 0) {
    throw new WebAuthnRefused('backup state without backup eligibility');
  }
  let position = AUTH_DATA_HEADER_BYTES;
  let attested: { credentialId: Buffer; publicKeyBytes: Buffer; publicKey: CosePublicKey } | undefined;
  if ((flags & FLAG.AT) !== 0) {
    // aaguid (16 bytes, not used: we trust no list of makers), id length, id, COSE key.
    if (bytes.length < position + 18) throw new WebAuthnRefused('attested credential data truncated');
    const idLength = bytes.readUInt16BE(position + 16);
    position += 18;
    if (idLength === 0 || idLength > MAX_CREDENTIAL_ID_BYTES || bytes.length < position + idLength) {
      throw new WebAuthnRefused('credential id length');
    }
    const credentialId = Buffer.from(bytes.subarray(position, position + idLength));
    const { value, end } = refusingInvalid(() => decodeCborPrefix(bytes, position + idLength));
    const publicKeyBytes = Buffer.from(bytes.subarray(position + idLength, end));
    position = end;
    attested = { credentialId, publicKeyBytes, publicKey: refusingInvalid(() => importCoseKey(value)) };
  }
  if ((flags & FLAG.ED) !== 0) {
    // Extension outputs: a map we read within the limits and do not use.
    const { value, end } = refusingInvalid(() => decodeCborPrefix(bytes, position));
    if (!(value instanceof Map)) throw new WebAuthnRefused('extensions not a map');
    position = end;
  }
  if (position !== bytes.length) throw new WebAuthnRefused('bytes after the authenticator data');
  return { signCount: bytes.readUInt32BE(33), isUserVerified: (flags & FLAG.UV) !== 0, attested };
}

/**
 * Attestation formats of the WebAuthn registry. We ask for `none` and trust no list of makers, so
 * another format's statement is read within the CBOR limits, not verified: the key is trusted on first use.
 */
const KNOWN_ATTESTATION_FORMATS: readonly string[] = [
  'none', 'packed', 'tpm', 'android-key', 'android-safetynet', 'fido-u2f', 'apple', 'compound',
];

/**
 * Section 7.1: verifies a registration response for `expect` and returns the new credential (its
 * COSE key exactly as the authenticator sent it, which is what is stored). `credentialId` is the
 * id the client reported (`rawId`): it must be the one in the attested credential data. Throws WebAuthnRefused.
 */
export function verifyRegistration(
  response: { readonly clientDataJSON: Buffer; readonly attestationObject: Buffer; readonly credentialId: Buffer },
  expect: Expectation,
) {
  checkClientData(response.clientDataJSON, 'webauthn.create', expect);
  const attestation = refusingInvalid(() => decodeCbor(response.attestationObject));
  const notAttestation = 'attestation object not a map of fmt, attStmt, authData';
  if (!(attestation instanceof Map) || attestation.size !== 3) throw new WebAuthnRefused(notAttestation);
  const fmt = attestation.get('fmt');
  const attStmt = attestation.get('attStmt');
  const authData = attestation.get('authData');
  if (typeof fmt !== 'string' || !(attStmt instanceof Map) || !Buffer.isBuffer(authData)) {
    throw new WebAuthnRefused(notAttestation);
  }
  if (!KNOWN_ATTESTATION_FORMATS.includes(fmt)) throw new WebAuthnRefused('attestation format unknown');
  // Section 8.7: the `none` format's statement is the empty map.
  if (fmt === 'none' && attStmt.size !== 0) throw new WebAuthnRefused('none attestation with a statement');
  const { attested, signCount, isUserVerified } = readAuthenticatorData(authData, expect.rpId);
  if (attested === undefined) throw new WebAuthnRefused('no attested credential data');
  if (!attested.credentialId.equals(response.credentialId)) throw new WebAuthnRefused('credential id differs from the attested one');
  const { credentialId: id, publicKeyBytes, publicKey } = attested;
  return { id, publicKeyBytes, algorithm: publicKey.algorithm, signCount, isUserVerified };
}

/**
 * Section 7.2: verifies an assertion and returns the sign count reported and whether the user was
 * verified. A count not 0 and not above the stored one is refused (a clone, section 6.1.1); 0 is always
 * accepted (a synced passkey has no counter), so a clone sending 0 is not detected. Throws WebAuthnRefused.
 */
export function verifyAuthentication(
  response: { readonly clientDataJSON: Buffer; readonly authenticatorData: Buffer; readonly signature: Buffer },
  expect: Expectation & { readonly publicKey: CosePublicKey; readonly storedSignCount: number },
): { signCount: number; isUserVerified: boolean } {
  checkClientData(response.clientDataJSON, 'webauthn.get', expect);
  const data = readAuthenticatorData(response.authenticatorData, expect.rpId);
  if (data.attested !== undefined) throw new WebAuthnRefused('attested credential data in an assertion');
  const clientDataHash = createHash('sha256').update(response.clientDataJSON).digest();
  if (!verifyCoseSignature(
    expect.publicKey, Buffer.concat([response.authenticatorData, clientDataHash]), response.signature,
  )) {
    throw new WebAuthnRefused('signature');
  }
  // Checked after the signature, so the count is the authenticator's, not a forger's.
  if (data.signCount !== 0 && data.signCount <= expect.storedSignCount) {
    throw new WebAuthnRefused('sign count did not advance');
  }
  return { signCount: data.signCount, isUserVerified: data.isUserVerified };
}
