// A software WebAuthn authenticator for tests: node:crypto keys (ES256, EdDSA, RS256), hand-built
// authenticator data, attestation objects and assertions, answered as the JSON a browser's
// PublicKeyCredential.toJSON() gives (RegistrationResponseJSON, AuthenticationResponseJSON).
// Every field a test may want wrong can be overridden.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export type SoftAlgorithm = 'ES256' | 'EdDSA' | 'RS256';

/** The CBOR values the encoder writes: integers, text, bytes, arrays, maps, booleans, null. */
export type CborInput = number | string | Buffer | boolean | null | readonly CborInput[] | ReadonlyMap<number | string, CborInput>;

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value]);
  if (value < 0x10000) return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff]);
  if (value < 0x100000000) {
    const out = Buffer.alloc(5);
    out[0] = (major << 5) | 26;
    out.writeUInt32BE(value, 1);
    return out;
  }
  const out = Buffer.alloc(9);
  out[0] = (major << 5) | 27;
  out.writeBigUInt64BE(BigInt(value), 1);
  return out;
}

/** Encodes CBOR in its shortest form (what CTAP2 authenticators send). */
export function encodeCbor(value: CborInput): Buffer {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError('encodeCbor writes safe integers only');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (value === false) return Buffer.from([0xf4]);
  if (value === true) return Buffer.from([0xf5]);
  if (value === null) return Buffer.from([0xf6]);
  if (value instanceof Map) {
    const parts = [head(5, value.size)];
    for (const [key, item] of value) parts.push(encodeCbor(key), encodeCbor(item));
    return Buffer.concat(parts);
  }
  const array = value as readonly CborInput[];
  return Buffer.concat([head(4, array.length), ...array.map((item) => encodeCbor(item))]);
}

export const FLAGS = Object.freeze({ UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40, ED: 0x80 });

export interface CreateOverrides {
  /** clientDataJSON's fields, replaced or added (undefined removes one). */
  readonly clientData?: Record<string, unknown>;
  /** The rp.id whose SHA-256 opens the authenticator data (default: the options' rp.id). */
  readonly rpId?: string;
  /** Flags of the authenticator data (default UP, UV, AT). */
  readonly flags?: number;
  readonly fmt?: string;
  readonly attStmt?: ReadonlyMap<number | string, CborInput>;
  /** The COSE key bytes placed in the attested credential data (default: this authenticator's key). */
  readonly coseKey?: Buffer;
  /** Replaces the whole attestation object. */
  readonly attestationObject?: Buffer;
  /** The id reported as id and rawId (default: the attested credential's id). */
  readonly reportedId?: string;
  /** Bytes appended after the authenticator data's credential (and extensions). */
  readonly trailing?: Buffer;
}

export interface GetOverrides {
  readonly clientData?: Record<string, unknown>;
  readonly rpId?: string;
  /** Default UP, UV. */
  readonly flags?: number;
  /** Default: the next value of the counter (0 when the authenticator has no counter). */
  readonly signCount?: number;
  /** Replaces the signature with these bytes. */
  readonly signature?: Buffer;
  /** Signs with this key instead (a forger's). */
  readonly signingKey?: KeyObject;
  /** The userHandle reported; null leaves it out. Default: the handle given at creation. */
  readonly userHandle?: string | null;
  /** The credential id reported (default: this credential's). */
  readonly id?: string;
  /** Replaces the authenticator data. */
  readonly authenticatorData?: Buffer;
}

export interface CreationOptionsLike {
  readonly challenge: string;
  readonly rp: { readonly id?: string };
  readonly user: { readonly id: string };
}

export interface RequestOptionsLike {
  readonly challenge: string;
  readonly rpId?: string;
}

export interface RegistrationResponseJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
  clientExtensionResults: Record<string, unknown>;
  authenticatorAttachment: string;
}

export interface AuthenticationResponseJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string };
  clientExtensionResults: Record<string, unknown>;
  authenticatorAttachment: string;
}

/** One credential on a software authenticator: make it with `create`, sign in with `get`. */
export class SoftAuthenticator {
  readonly algorithm: SoftAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly credentialId: Buffer;
  /** The origin the "browser" reports. */
  origin: string;
  /** The counter; with `hasCounter` false every assertion reports 0 (as synced passkeys do). */
  signCount = 0;
  readonly hasCounter: boolean;
  userHandle: string | undefined;
  rpId: string | undefined;

  constructor(options: { algorithm?: SoftAlgorithm; origin?: string; hasCounter?: boolean; credentialIdBytes?: number } = {}) {
    this.algorithm = options.algorithm ?? 'ES256';
    this.origin = options.origin ?? 'http://localhost';
    this.hasCounter = options.hasCounter ?? true;
    this.credentialId = randomBytes(options.credentialIdBytes ?? 32);
    const pair =
      this.algorithm === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : this.algorithm === 'EdDSA'
          ? generateKeyPairSync('ed25519')
          : generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  /** The public key as a COSE_Key, as an authenticator encodes it. */
  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const b = (text: string | undefined): Buffer => Buffer.from(text ?? '', 'base64url');
    if (this.algorithm === 'ES256') return encodeCbor(new Map<number, CborInput>([[1, 2], [3, -7], [-1, 1], [-2, b(jwk.x)], [-3, b(jwk.y)]]));
    if (this.algorithm === 'EdDSA') return encodeCbor(new Map<number, CborInput>([[1, 1], [3, -8], [-1, 6], [-2, b(jwk.x)]]));
    return encodeCbor(new Map<number, CborInput>([[1, 3], [3, -257], [-1, b(jwk.n)], [-2, b(jwk.e)]]));
  }

  /** Signs like this credential's authenticator (ES256 DER, Ed25519, RSASSA-PKCS1-v1_5). */
  signWith(key: KeyObject, data: Buffer): Buffer {
    return this.algorithm === 'EdDSA' ? sign(null, data, key) : sign('sha256', data, key);
  }

  clientDataJSON(type: string, challenge: string, overrides: Record<string, unknown> | undefined): Buffer {
    const fields: Record<string, unknown> = { type, challenge, origin: this.origin, crossOrigin: false, ...overrides };
    for (const key of Object.keys(fields)) if (fields[key] === undefined) delete fields[key];
    return Buffer.from(JSON.stringify(fields));
  }

  /** navigator.credentials.create(), answered as RegistrationResponseJSON. */
  create(options: CreationOptionsLike, overrides: CreateOverrides = {}): RegistrationResponseJSON {
    this.rpId = options.rp.id ?? new URL(this.origin).hostname;
    this.userHandle = options.user.id;
    const rpIdHash = createHash('sha256').update(overrides.rpId ?? this.rpId).digest();
    const header = Buffer.alloc(37);
    rpIdHash.copy(header, 0);
    header[32] = overrides.flags ?? FLAGS.UP | FLAGS.UV | FLAGS.AT;
    header.writeUInt32BE(this.signCount, 33);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([header, Buffer.alloc(16), idLength, this.credentialId, overrides.coseKey ?? this.coseKey(), overrides.trailing ?? Buffer.alloc(0)]);
    const attestationObject =
      overrides.attestationObject ??
      encodeCbor(
        new Map<string, CborInput>([
          ['fmt', overrides.fmt ?? 'none'],
          ['attStmt', overrides.attStmt ?? new Map()],
          ['authData', authData],
        ]),
      );
    const id = overrides.reportedId ?? this.id;
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: this.clientDataJSON('webauthn.create', options.challenge, overrides.clientData).toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** The authenticator data of an assertion: rp.id hash, flags, counter. */
  assertionData(rpId: string, flags: number, signCount: number): Buffer {
    const data = Buffer.alloc(37);
    createHash('sha256').update(rpId).digest().copy(data, 0);
    data[32] = flags;
    data.writeUInt32BE(signCount, 33);
    return data;
  }

  /** navigator.credentials.get(), answered as AuthenticationResponseJSON. */
  get(options: RequestOptionsLike, overrides: GetOverrides = {}): AuthenticationResponseJSON {
    const rpId = overrides.rpId ?? options.rpId ?? this.rpId ?? new URL(this.origin).hostname;
    let signCount = overrides.signCount;
    if (signCount === undefined) {
      if (this.hasCounter) this.signCount += 1;
      signCount = this.hasCounter ? this.signCount : 0;
    }
    const authenticatorData = overrides.authenticatorData ?? this.assertionData(rpId, overrides.flags ?? FLAGS.UP | FLAGS.UV, signCount);
    const clientDataJSON = this.clientDataJSON('webauthn.get', options.challenge, overrides.clientData);
    const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]);
    const signature = overrides.signature ?? this.signWith(overrides.signingKey ?? this.privateKey, signed);
    const userHandle = overrides.userHandle === undefined ? this.userHandle : (overrides.userHandle ?? undefined);
    const id = overrides.id ?? this.id;
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(userHandle === undefined ? {} : { userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
