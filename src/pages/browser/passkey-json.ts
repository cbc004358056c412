// The WebAuthn JSON conversions the passkey calls need (WebAuthn L3 options and responses as JSON,
// byte fields in base64url), and whether this page can use passkeys at all.
import { isObject, type JsonObject } from './helpers.js';

/**
 * Why this page can make no passkey, or '' when it can: WebAuthn exists only in a secure context
 * (https, or http on localhost), and not in every browser.
 */
export function passkeyContextProblem(): string {
  if (window.isSecureContext === false) {
    return `No passkey can be made here: browsers make and use passkeys only over https (or on localhost), and this page was opened over plain http at ${location.host}.`;
  }
  if (!hasWebAuthn()) return 'This browser cannot make passkeys.';
  return '';
}

/** Whether this browser offers WebAuthn here. */
export const hasWebAuthn = (): boolean => typeof window.PublicKeyCredential === 'function' && navigator.credentials !== undefined;

function toBase64url(buffer: ArrayBuffer | ArrayBufferView): string {
  const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: unknown): ArrayBuffer {
  const base64 = String(text).replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '===='.slice(base64.length % 4 || 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function descriptorsOf(value: unknown): PublicKeyCredentialDescriptor[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((item) => {
    const descriptor: PublicKeyCredentialDescriptor = { type: 'public-key', id: fromBase64url(item['id']) };
    const transports = item['transports'];
    if (Array.isArray(transports)) descriptor.transports = transports.filter((transport): transport is AuthenticatorTransport => typeof transport === 'string');
    return descriptor;
  });
}

/**
 * WebAuthn L3 options JSON (creation or request) to what navigator.credentials takes: its byte
 * fields as bytes, every other member as the server sent it (the browser checks them).
 */
export function publicKeyOf(json: JsonObject): PublicKeyCredentialCreationOptions & PublicKeyCredentialRequestOptions {
  const options: Record<string, unknown> = { ...json };
  options['challenge'] = fromBase64url(json['challenge']);
  const user = json['user'];
  if (isObject(user)) options['user'] = { ...user, id: fromBase64url(user['id']) };
  for (const key of ['allowCredentials', 'excludeCredentials']) {
    const descriptors = descriptorsOf(json[key]);
    if (descriptors !== undefined) options[key] = descriptors;
  }
  return options as unknown as PublicKeyCredentialCreationOptions & PublicKeyCredentialRequestOptions;
}

/** A PublicKeyCredential as RegistrationResponseJSON (it holds an attestation) or AuthenticationResponseJSON. */
export function credentialJsonOf(credential: PublicKeyCredential): JsonObject {
  const response = credential.response;
  const json: Record<string, unknown> = { clientDataJSON: toBase64url(response.clientDataJSON) };
  if (response instanceof AuthenticatorAttestationResponse) {
    json['attestationObject'] = toBase64url(response.attestationObject);
    json['transports'] = typeof response.getTransports === 'function' ? response.getTransports() : [];
    // Optional in older browsers: the server reads the attestation object, these only mirror it.
    if (typeof response.getPublicKeyAlgorithm === 'function') json['publicKeyAlgorithm'] = response.getPublicKeyAlgorithm();
    if (typeof response.getAuthenticatorData === 'function') json['authenticatorData'] = toBase64url(response.getAuthenticatorData());
    const publicKey = typeof response.getPublicKey === 'function' ? response.getPublicKey() : null;
    if (publicKey !== null) json['publicKey'] = toBase64url(publicKey);
  } else if (response instanceof AuthenticatorAssertionResponse) {
    json['authenticatorData'] = toBase64url(response.authenticatorData);
    json['signature'] = toBase64url(response.signature);
    json['userHandle'] = response.userHandle !== null ? toBase64url(response.userHandle) : null;
  }
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: json,
    authenticatorAttachment: credential.authenticatorAttachment ?? null,
    clientExtensionResults: {},
  };
}

/** The name of an error a WebAuthn call rejected with ('NotAllowedError'…), or ''. */
export const errorName = (error: unknown): string => (error instanceof Error || error instanceof DOMException ? error.name : '');

/** The message of an error, or ''. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : '');
