import type { Logger } from '../log/logger.js';
import { PasskeyInvalid, PasskeyNotFound, PasskeyRefused, PasskeysOff, TooManyPasskeys, ValidationFailed } from '../errors.js';
import { throttleKeyOf } from '../http/client-address.js';
import type { Caller } from '../auth/session.js';
import { stillSignedIn, type RouteDeps } from '../routes/context.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { CheckedType } from '../validate/check.js';
import { CHALLENGE_LIMITS, type ChallengeEntry, type ChallengeStore } from './challenges.js';
import { checkCredentialId, MAX_PASSKEYS, type checkNewPasskeyBody, type checkPasskeySignInBody } from './checks.js';
import { COSE_ALGORITHMS, decodeCoseKey } from './cose.js';
import { decoyCredentialIds, newUserHandle } from './decoys.js';
import type { RelyingParties, RelyingParty } from './relying-party.js';
import { addPasskey, recordPasskeyUse, removePasskey } from './rules.js';
import { readClientData, verifyAuthentication, verifyRegistration, WebAuthnRefused } from './verify.js';
import { epochSeconds, type EpochMs, type EpochSeconds } from '../time.js';

interface PasskeyServiceDeps extends Pick<RouteDeps, 'revocations' | 'sessions'> {
  readonly store: UserStore;
  readonly challenges: ChallengeStore;
  /** The key unknown usernames' decoy credential ids are made with (passkeys/decoys.ts). */
  readonly decoyKey: Buffer;
  /** Where passkeys are used (passkeys/relying-party.ts), settled at start-up. */
  readonly relyingParties: RelyingParties;
  readonly logger: Logger;
  readonly now: () => EpochMs;
}

/** Who asks: the host the browser sent the request to (the relying party is chosen by it) and the client's address. */
interface Asker {
  readonly host: string | undefined;
  readonly address: string;
}

type SignInCredential = CheckedType<typeof checkPasskeySignInBody>['credential'];
type NewCredential = CheckedType<typeof checkNewPasskeyBody>['credential'];

const RP_NAME = 'Gatehouse';

export type PasskeyService = ReturnType<typeof createPasskeyService>;

/**
 * The passkey ceremonies (WebAuthn Level 3; docs/contract/accounts.md "Passkeys", "The caller's own
 * account"), apart from HTTP: src/passkeys/routes.ts reads the bodies, confirms the password where the
 * row asks, and answers with what these return. Verification is verify.ts's, the account's passkeys
 * rules.ts's.
 */
export function createPasskeyService(deps: PasskeyServiceDeps) {
  const { store, challenges, logger } = deps;
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());
  const timeout = CHALLENGE_LIMITS.ttlMs;

  // Off: every ceremony is refused; removing a passkey needs no relying party and stays possible.
  const relyingParty = (asker: Asker): RelyingParty => {
    if (deps.relyingParties.offReason !== undefined) throw new PasskeysOff();
    const rp = deps.relyingParties.forHost(asker.host);
    if (rp === undefined) {
      throw new ValidationFailed([{ path: 'Host', message: 'must be a host name, for the passkey relying party' }]);
    }
    return rp;
  };

  const issue = (asker: Asker, entry: ChallengeEntry): string =>
    challenges.issue(entry, throttleKeyOf(asker.address), deps.now()).toString('base64url');

  // Credential id -> account, rebuilt when the store has changed since it was last built.
  let index: { version: number; owners: Map<string, string> } | undefined;
  const ownerOf = (credentialId: string): StoredUser | undefined => {
    if (index?.version !== store.version) {
      const owners = new Map<string, string>();
      for (const user of store.list()) for (const passkey of user.passkeys ?? []) owners.set(passkey.id, user.username);
      index = { version: store.version, owners };
    }
    const username = index.owners.get(credentialId);
    return username === undefined ? undefined : store.find(username);
  };

  /** A refused sign-in: logged with its reason, answered as one 401 whatever the reason. */
  const refuse = (asker: Asker, reason: string, cause?: unknown): PasskeyRefused => {
    logger.warn('passkey sign-in refused', { event: 'passkey_refused', address: asker.address, reason });
    return new PasskeyRefused(reason, cause === undefined ? undefined : { cause });
  };
  const refusedAs = <T>(asker: Asker, verify: () => T): T => {
    try {
      return verify();
    } catch (error) {
      if (error instanceof WebAuthnRefused) throw refuse(asker, error.reason, error);
      throw error;
    }
  };

  return {
    /** The options of a sign-in; naming an account without passkeys answers like an unknown name: decoys, never an empty list. */
    signInOptions(asker: Asker, username: string | undefined) {
      const rp = relyingParty(asker);
      let allowCredentials: string[] = [];
      if (username !== undefined) {
        const passkeys = store.find(username)?.passkeys;
        allowCredentials = passkeys === undefined
          ? decoyCredentialIds(deps.decoyKey, username)
          : passkeys.map((passkey) => passkey.id);
      }
      const challenge = issue(asker, { ceremony: 'get', username, userHandle: undefined });
      return {
        challenge,
        timeout,
        rpId: rp.id,
        allowCredentials: allowCredentials.map((id) => ({ type: 'public-key', id })),
        userVerification: 'preferred',
      };
    },

    /** A sign-in: the account it opens, as stored after its counter was recorded; throws PasskeyRefused. */
    async signIn(asker: Asker, credential: SignInCredential): Promise<{ readonly user: StoredUser; readonly isUserVerified: boolean }> {
      const { response } = credential;
      const rp = relyingParty(asker);
      const clientData = refusedAs(asker, () => readClientData(response.clientDataJSON));
      // Taken before anything else is judged: a challenge is spent by any attempt to use it.
      const challenge = challenges.take(clientData.challenge, deps.now());
      if (challenge?.ceremony !== 'get') throw refuse(asker, 'challenge unknown, used or expired');
      const user = ownerOf(credential.id);
      const passkey = user?.passkeys?.find((held) => held.id === credential.id);
      if (user === undefined || passkey === undefined) throw refuse(asker, 'unknown credential');
      if (challenge.username !== undefined && challenge.username !== user.username) {
        throw refuse(asker, 'credential of another account than the options named');
      }
      if (response.userHandle != null && response.userHandle.toString('base64url') !== passkey.userHandle) {
        throw refuse(asker, 'user handle');
      }
      const result = refusedAs(asker, () => {
        const publicKey = decodeCoseKey(Buffer.from(passkey.publicKey, 'base64url'));
        return verifyAuthentication(
          {
            clientDataJSON: response.clientDataJSON,
            authenticatorData: response.authenticatorData,
            signature: response.signature,
          },
          {
            challenge: clientData.challenge,
            rpId: rp.id,
            isOriginAllowed: rp.isOriginAllowed,
            publicKey,
            storedSignCount: passkey.signCount,
          },
        );
      });
      const current = await store.change(
        (view) => recordPasskeyUse(view, user.username, passkey.id, result.signCount, nowSeconds()),
      );
      if (current === undefined) throw refuse(asker, 'passkey removed or used concurrently');
      logger.info('passkey sign-in succeeded', {
        event: 'passkey_login_succeeded',
        address: asker.address,
        username: current.username,
        isUserVerified: result.isUserVerified,
      });
      return { user: current, isUserVerified: result.isUserVerified };
    },

    /** The options to make a passkey for `user`; throws TooManyPasskeys. */
    creationOptions(asker: Asker, user: StoredUser) {
      const rp = relyingParty(asker);
      const passkeys = user.passkeys ?? [];
      if (passkeys.length >= MAX_PASSKEYS) throw new TooManyPasskeys();
      // One user.id per account, so an authenticator replaces its old credential for us, not adds one.
      const userHandle = passkeys[0]?.userHandle ?? newUserHandle();
      const challenge = issue(asker, { ceremony: 'create', username: user.username, userHandle });
      return {
        rp: { id: rp.id, name: RP_NAME },
        user: { id: userHandle, name: user.username, displayName: user.username },
        challenge,
        pubKeyCredParams: COSE_ALGORITHMS.map((alg) => ({ type: 'public-key', alg })),
        timeout,
        excludeCredentials: passkeys.map((passkey) => ({ type: 'public-key', id: passkey.id })),
        authenticatorSelection: {
          residentKey: 'preferred',
          requireResidentKey: false,
          userVerification: 'preferred',
        },
        attestation: 'none',
        extensions: { credProps: true },
      };
    },

    /**
     * Adds the passkey `credential` makes, named `name`, to the caller's account (whose password the
     * route confirmed): the account as stored after it. Throws PasskeyInvalid when the registration is
     * refused, and what the rules throw (TooManyPasskeys, PasskeyTaken, AuthRequired).
     */
    async add(asker: Asker, caller: Caller, name: string, credential: NewCredential): Promise<{ readonly user: StoredUser; readonly id: string }> {
      const rp = relyingParty(asker);
      let added;
      try {
        const clientData = readClientData(credential.response.clientDataJSON);
        const challenge = challenges.take(clientData.challenge, deps.now());
        if (
          challenge?.ceremony !== 'create' ||
          challenge.username !== caller.user.username ||
          challenge.userHandle === undefined
        ) {
          throw new WebAuthnRefused('challenge unknown, used or expired');
        }
        const verified = verifyRegistration(
          {
            clientDataJSON: credential.response.clientDataJSON,
            attestationObject: credential.response.attestationObject,
            credentialId: Buffer.from(credential.rawId, 'base64url'),
          },
          { challenge: clientData.challenge, rpId: rp.id, isOriginAllowed: rp.isOriginAllowed },
        );
        added = { verified, userHandle: challenge.userHandle };
      } catch (error) {
        if (error instanceof WebAuthnRefused) {
          logger.warn('passkey registration refused', {
            event: 'passkey_registration_refused',
            address: asker.address,
            username: caller.user.username,
            reason: error.reason,
          });
          throw new PasskeyInvalid(error.reason, { cause: error });
        }
        throw error;
      }
      const { verified, userHandle } = added;
      const id = verified.id.toString('base64url');
      const publicKey = verified.publicKeyBytes.toString('base64url');
      const passkey = { id, name, publicKey, algorithm: verified.algorithm, signCount: verified.signCount, userHandle };
      const user = await store.change((view) => {
        stillSignedIn(deps, view, caller);
        return addPasskey(view, caller.user.username, { ...passkey, createdAt: nowSeconds() }, nowSeconds());
      });
      logger.info('passkey added', { event: 'passkey_added', username: user.username, passkeyId: id, address: asker.address });
      return { user, id };
    },

    /** Removes the caller's passkey `rawId` (the path's, as the router decoded it): the account as stored after it; throws PasskeyNotFound. */
    async remove(asker: Asker, caller: Caller, rawId: string | undefined): Promise<StoredUser> {
      const id = checkCredentialId(rawId ?? '', 'id');
      if (!id.ok) throw new PasskeyNotFound();
      const user = await store.change((view) => {
        stillSignedIn(deps, view, caller);
        return removePasskey(view, caller.user.username, id.value, nowSeconds());
      });
      logger.info('passkey removed', { event: 'passkey_removed', username: user.username, passkeyId: id.value, address: asker.address });
      return user;
    },
  };
}
