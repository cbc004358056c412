import { CborInvalid, WEBAUTHN_CBOR_LIMITS } from './cbor.js';
import { COSE_ALGORITHMS, CoseInvalid, decodeCoseKey } from './cose.js';
import { MAX_CLIENT_DATA_BYTES, MAX_CREDENTIAL_ID_BYTES } from './verify.js';
import { checkUsername, passwordChecker } from '../validate/auth.js';
import {
  base64urlBytes, fail, integerIn, objectOf, oneOf, optional, pass, storedList, stringOf, unixSeconds,
} from '../validate/check.js';
import type { Checker } from '../validate/check.js';
import type { StoredPasskey } from '../store/stored-fields.js';

// docs/contract/accounts.md "Stored per account", passkeys: id, COSE public key, sign count, name, created
// and last-used times; at most 16 per account. And the WebAuthn L3 JSON a browser sends
// (PublicKeyCredential.toJSON()), with every binary field capped before it is decoded.
export const MAX_PASSKEYS = 16;
/** Largest authenticator data of an assertion we read: 37 bytes plus extension outputs. */
const MAX_ASSERTION_AUTH_DATA_BYTES = 1024;
/** An RSA-4096 signature is 512 bytes, a DER P-256 one at most 72. */
const MAX_SIGNATURE_BYTES = 512;
/** WebAuthn section 5.4.3: a user handle is at most 64 bytes. */
const MAX_USER_HANDLE_BYTES = 64;
/** A stored COSE key: an RSA-4096 key is about 530 bytes. */
const MAX_COSE_KEY_BYTES = 1024;

/** base64url as base64urlBytes checks it, kept as the text. */
const base64urlText = (maxBytes: number): Checker<string> => {
  const check = base64urlBytes(maxBytes);
  return (input, path) => {
    const result = check(input, path);
    return result.ok ? pass(input as string) : result;
  };
};

export const checkCredentialId = base64urlText(MAX_CREDENTIAL_ID_BYTES);
const checkPasskeyName = stringOf({ minLength: 1, maxLength: 64 });

const checkStoredCoseKey: Checker<string> = (input, path) => {
  const result = base64urlBytes(MAX_COSE_KEY_BYTES)(input, path);
  if (!result.ok) return result;
  try {
    decodeCoseKey(result.value);
  } catch (error) {
    if (error instanceof CborInvalid || error instanceof CoseInvalid) {
      return fail(path, `is not a COSE key Gatehouse accepts (${error.reason})`);
    }
    throw error;
  }
  return pass(input as string);
};

const checkStoredPasskeyFields = objectOf(
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

const checkStoredPasskey: typeof checkStoredPasskeyFields = (input, path) => {
  const result = checkStoredPasskeyFields(input, path);
  if (!result.ok) return result;
  const { algorithm } = decodeCoseKey(Buffer.from(result.value.publicKey, 'base64url'));
  return algorithm === result.value.algorithm ? result : fail(`${path}.algorithm`, 'is not the algorithm of its key');
};

/** An account's passkeys as stored: 1 to 16 (absent when none), ids distinct, each key one we can import. */
export const checkStoredPasskeys: Checker<readonly StoredPasskey[]> =
  storedList(checkStoredPasskey, MAX_PASSKEYS, 'passkeys', 'credential id');

/** `userHandle` of an assertion: absent or null (a non-discoverable credential), else base64url. */
const checkUserHandle: Checker<Buffer | null> = (input, path) =>
  (input === null ? pass(null) : base64urlBytes(MAX_USER_HANDLE_BYTES)(input, path));

/** `id` and `rawId` are two spellings of one value in the JSON form: they must agree. */
const credentialFields = { id: checkCredentialId, rawId: checkCredentialId, type: oneOf(['public-key'] as const) };
function credentialOf<R extends Record<string, Checker<unknown>>>(response: R) {
  const check = objectOf({ ...credentialFields, response: objectOf(response) });
  return (input: unknown, path: string): ReturnType<typeof check> => {
    const result = check(input, path);
    if (result.ok && result.value.id !== result.value.rawId) return fail(`${path}.rawId`, 'must equal id');
    return result;
  };
}

/** POST /api/auth/passkey: an AuthenticationResponseJSON (WebAuthn L3 section 5.1.9), the fields verification reads. */
export const checkPasskeySignInBody = objectOf({
  credential: credentialOf({
    clientDataJSON: base64urlBytes(MAX_CLIENT_DATA_BYTES),
    authenticatorData: base64urlBytes(MAX_ASSERTION_AUTH_DATA_BYTES),
    signature: base64urlBytes(MAX_SIGNATURE_BYTES),
    userHandle: optional(checkUserHandle),
  }),
});

/**
 * POST /api/auth/account/passkeys: a name, a RegistrationResponseJSON (section 5.1.8), and the account's
 * current password (a passkey is a way in: docs/contract/access.md "Ways in").
 */
export const checkNewPasskeyBody = objectOf({
  name: checkPasskeyName,
  password: passwordChecker(1),
  credential: credentialOf({
    clientDataJSON: base64urlBytes(MAX_CLIENT_DATA_BYTES),
    attestationObject: base64urlBytes(WEBAUTHN_CBOR_LIMITS.maxBytes),
  }),
});

/** DELETE /api/auth/account/passkeys/{id}: the account's current password. */
export const checkPasskeyRemovalBody = objectOf({ password: passwordChecker(1) });

/** POST /api/auth/passkey/options: no body, `{}`, or `{username}`. */
const checkOptionsObject = objectOf({ username: optional(checkUsername) });
export const checkPasskeyOptionsBody: Checker<{ username?: string }> = (input, path) =>
  input === undefined ? pass({}) : checkOptionsObject(input, path);
