import { CborInvalid, WEBAUTHN_CBOR_LIMITS } from '../webauthn/cbor.js';
import { COSE_ALGORITHMS, CoseInvalid, decodeCoseKey } from '../webauthn/cose.js';
import { MAX_CLIENT_DATA_BYTES, MAX_CREDENTIAL_ID_BYTES } from '../webauthn/verify.js';
import { checkUsername } from './auth.js';
import { fail, integerIn, isPlainObject, objectOf, oneOf, optional, pass, stringOf, type Checker, type CheckedType } from './check.js';

// INTERFACE.md "Stored per account", passkeys: id, COSE public key, sign count, name, created
// and last-used times; at most 16 per account. And the WebAuthn L3 JSON a browser sends
// (PublicKeyCredential.toJSON()), with every binary field capped before it is decoded.
export const MAX_PASSKEYS = 16;
export const MAX_PASSKEY_NAME_LENGTH = 64;
/** Largest authenticator data of an assertion we read: 37 bytes plus extension outputs. */
const MAX_ASSERTION_AUTH_DATA_BYTES = 1024;
/** An RSA-4096 signature is 512 bytes, a DER P-256 one at most 72. */
const MAX_SIGNATURE_BYTES = 512;
/** WebAuthn section 5.4.3: a user handle is at most 64 bytes. */
const MAX_USER_HANDLE_BYTES = 64;
/** A stored COSE key: an RSA-4096 key is about 530 bytes. */
const MAX_COSE_KEY_BYTES = 1024;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Unpadded base64url of 1 to `maxBytes` bytes, in its one canonical spelling, as the bytes. */
export function base64urlBytes(maxBytes: number): Checker<Buffer> {
  const maxLength = Math.ceil((maxBytes * 4) / 3);
  return (input, path) => {
    if (typeof input !== 'string' || input.length === 0 || input.length > maxLength || !BASE64URL.test(input)) return fail(path, `must be base64url of at most ${maxBytes} bytes`);
    const bytes = Buffer.from(input, 'base64url');
    if (bytes.toString('base64url') !== input) return fail(path, 'must be canonical base64url');
    return pass(bytes);
  };
}

const base64urlText = (maxBytes: number): Checker<string> => {
  const check = base64urlBytes(maxBytes);
  return (input, path) => {
    const result = check(input, path);
    return result.ok ? pass(input as string) : result;
  };
};

export const checkCredentialId = base64urlText(MAX_CREDENTIAL_ID_BYTES);
export const checkPasskeyName = stringOf({ minLength: 1, maxLength: MAX_PASSKEY_NAME_LENGTH });
const unixSeconds = integerIn(0, Number.MAX_SAFE_INTEGER);

const checkStoredCoseKey: Checker<string> = (input, path) => {
  const result = base64urlBytes(MAX_COSE_KEY_BYTES)(input, path);
  if (!result.ok) return result;
  try {
    decodeCoseKey(result.value);
  } catch (error) {
    if (error instanceof CborInvalid || error instanceof CoseInvalid) return fail(path, `is not a COSE key Gatehouse accepts (${error.reason})`);
    throw error;
  }
  return pass(input as string);
};

const checkStoredPasskey = objectOf(
  {
    /** The credential id, base64url. */
    id: checkCredentialId,
    name: checkPasskeyName,
    /** The COSE_Key as the authenticator sent it, base64url; imported again at each use. */
    publicKey: checkStoredCoseKey,
    algorithm: oneOf(COSE_ALGORITHMS),
    signCount: integerIn(0, 0xffffffff),
    /** The WebAuthn user.id the credential was made under, base64url. */
    userHandle: base64urlText(MAX_USER_HANDLE_BYTES),
    createdAt: unixSeconds,
    lastUsedAt: optional(unixSeconds),
  },
  { rejectUnknownKeys: true },
);
export type StoredPasskey = Readonly<CheckedType<typeof checkStoredPasskey>>;

/** An account's passkeys as stored: 1 to 16 (absent when none), ids distinct, each key one we can import. */
export const checkStoredPasskeys: Checker<readonly StoredPasskey[]> = (input, path) => {
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_PASSKEYS) return fail(path, `must be an array of 1 to ${MAX_PASSKEYS} passkeys`);
  const passkeys: StoredPasskey[] = [];
  const ids = new Set<string>();
  for (const [index, item] of input.entries()) {
    const result = checkStoredPasskey(item, `${path}[${index}]`);
    if (!result.ok) return result;
    if (ids.has(result.value.id)) return fail(`${path}[${index}].id`, 'repeats a credential id');
    if (decodeCoseKey(Buffer.from(result.value.publicKey, 'base64url')).algorithm !== result.value.algorithm) return fail(`${path}[${index}].algorithm`, 'is not the algorithm of its key');
    ids.add(result.value.id);
    passkeys.push(Object.freeze(result.value));
  }
  return pass(Object.freeze(passkeys));
};

/** `userHandle` of an assertion: absent or null (a non-discoverable credential), else base64url. */
const checkUserHandle: Checker<Buffer | null> = (input, path) => (input === null ? pass(null) : base64urlBytes(MAX_USER_HANDLE_BYTES)(input, path));

/** An AuthenticationResponseJSON (WebAuthn L3 section 5.1.9), the fields verification reads. */
const checkAuthenticationResponse = objectOf({
  id: checkCredentialId,
  rawId: checkCredentialId,
  type: oneOf(['public-key'] as const),
  response: objectOf({
    clientDataJSON: base64urlBytes(MAX_CLIENT_DATA_BYTES),
    authenticatorData: base64urlBytes(MAX_ASSERTION_AUTH_DATA_BYTES),
    signature: base64urlBytes(MAX_SIGNATURE_BYTES),
    userHandle: optional(checkUserHandle),
  }),
});

/** A RegistrationResponseJSON (section 5.1.8), the fields verification reads. */
const checkRegistrationResponse = objectOf({
  id: checkCredentialId,
  rawId: checkCredentialId,
  type: oneOf(['public-key'] as const),
  response: objectOf({
    clientDataJSON: base64urlBytes(MAX_CLIENT_DATA_BYTES),
    attestationObject: base64urlBytes(WEBAUTHN_CBOR_LIMITS.maxBytes),
  }),
});

/** `id` and `rawId` are two spellings of one value in the JSON form: they must agree. */
function sameIds<T extends { id: string; rawId: string }>(check: Checker<T>): Checker<T> {
  return (input, path) => {
    const result = check(input, path);
    if (result.ok && result.value.id !== result.value.rawId) return fail(`${path}.rawId`, 'must equal id');
    return result;
  };
}

/** POST /api/auth/passkey. */
export const checkPasskeySignInBody = objectOf({ credential: sameIds(checkAuthenticationResponse) });
export type PasskeySignInBody = CheckedType<typeof checkPasskeySignInBody>;

/** POST /api/auth/account/passkeys. */
export const checkNewPasskeyBody = objectOf({ name: checkPasskeyName, credential: sameIds(checkRegistrationResponse) });
export type NewPasskeyBody = CheckedType<typeof checkNewPasskeyBody>;

/** POST /api/auth/passkey/options: no body, `{}`, or `{username}`. */
export const checkPasskeyOptionsBody: Checker<{ username?: string }> = (input, path) => {
  if (input === undefined) return pass({});
  if (!isPlainObject(input)) return fail(path, 'must be a JSON object');
  return objectOf({ username: optional(checkUsername) })(input, path);
};
