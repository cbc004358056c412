import { amrAfterChange, passkeyAmr } from '../auth/amr.js';
import { PasskeyInvalid, PasskeyNotFound, PasskeyRefused, PasskeysOff, TooManyPasskeys, ValidationFailed } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import { throttleKeyOf } from '../http/client-address.js';
import { sendJson } from '../http/respond.js';
import { addPasskey, recordPasskeyUse, removePasskey } from './rules.js';
import type { StoredUser } from '../store/users.js';
import {
  checkCredentialId, checkNewPasskeyBody, checkPasskeyOptionsBody, checkPasskeyRemovalBody, checkPasskeySignInBody,
  MAX_PASSKEYS,
} from './checks.js';
import { CHALLENGE_LIMITS, type ChallengeEntry, type ChallengeStore } from './challenges.js';
import { COSE_ALGORITHMS, decodeCoseKey } from './cose.js';
import { decoyCredentialIds, newUserHandle } from './decoys.js';
import type { RelyingParties, RelyingParty } from './relying-party.js';
import { readClientData, verifyAuthentication, verifyRegistration, WebAuthnRefused } from './verify.js';
import { callerOf, readCheckedBody, type RequestContext, type Route, type RouteDeps, stillSignedIn } from '../routes/context.js';
import { epochSeconds, type EpochSeconds } from '../time.js';

interface PasskeyRouteDeps extends RouteDeps {
  readonly challenges: ChallengeStore;
  /** The key unknown usernames' decoy credential ids are made with (passkeys/decoys.ts). */
  readonly decoyKey: Buffer;
  /** Where passkeys are used (passkeys/relying-party.ts), settled at start-up. */
  readonly relyingParties: RelyingParties;
}

const RP_NAME = 'Gatehouse';

/**
 * Passkeys (WebAuthn Level 3): sign-in options and sign-in for anyone, and the caller's own
 * passkeys (docs/contract/accounts.md "Passkeys", "The caller's own account"). Verification is in verify.ts beside it.
 */
export function passkeyRoutes(deps: PasskeyRouteDeps): Route[] {
  const { config, store, challenges, cookies, logger } = deps;
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());
  const timeout = CHALLENGE_LIMITS.ttlMs;

  // Off: every ceremony is refused; removing a passkey needs no relying party and stays possible.
  const relyingParty = (ctx: RequestContext): RelyingParty => {
    if (deps.relyingParties.offReason !== undefined) throw new PasskeysOff();
    const rp = deps.relyingParties.forHost(deps.proxyTrust.browserHost(ctx.req));
    if (rp === undefined) {
      throw new ValidationFailed([{ path: 'Host', message: 'must be a host name, for the passkey relying party' }]);
    }
    return rp;
  };

  const issue = (ctx: RequestContext, entry: ChallengeEntry): string =>
    challenges.issue(entry, throttleKeyOf(ctx.address), deps.now()).toString('base64url');

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
  const refuse = (ctx: RequestContext, reason: string, cause?: unknown): PasskeyRefused => {
    logger.warn('passkey sign-in refused', { event: 'passkey_refused', address: ctx.address, reason });
    return new PasskeyRefused(reason, cause === undefined ? undefined : { cause });
  };
  const refusedAs = <T>(ctx: RequestContext, verify: () => T): T => {
    try {
      return verify();
    } catch (error) {
      if (error instanceof WebAuthnRefused) throw refuse(ctx, error.reason, error);
      throw error;
    }
  };

  return [
    { method: 'POST', path: '/api/auth/passkey/options', access: 'passkeySignInOptions', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, checkPasskeyOptionsBody, config.maxBodyBytes);
      const rp = relyingParty(ctx);
      let allowCredentials: string[] = [];
      if (body.username !== undefined) {
        const passkeys = store.find(body.username)?.passkeys;
        // An account without passkeys answers like an unknown name: decoys, never an empty list.
        allowCredentials = passkeys === undefined
          ? decoyCredentialIds(deps.decoyKey, body.username)
          : passkeys.map((passkey) => passkey.id);
      }
      const challenge = issue(ctx, { ceremony: 'get', username: body.username, userHandle: undefined });
      sendJson(
        ctx.res,
        200,
        {
          challenge,
          timeout,
          rpId: rp.id,
          allowCredentials: allowCredentials.map((id) => ({ type: 'public-key', id })),
          userVerification: 'preferred',
        },
      );
    } },
    { method: 'POST', path: '/api/auth/passkey', access: 'passkeySignIn', body: 'json', async handler(ctx) {
      const { credential } = await readCheckedBody(ctx, checkPasskeySignInBody, config.maxBodyBytes);
      const { response } = credential;
      const rp = relyingParty(ctx);
      const clientData = refusedAs(ctx, () => readClientData(response.clientDataJSON));
      // Taken before anything else is judged: a challenge is spent by any attempt to use it.
      const challenge = challenges.take(clientData.challenge, deps.now());
      if (challenge?.ceremony !== 'get') throw refuse(ctx, 'challenge unknown, used or expired');
      const user = ownerOf(credential.id);
      const passkey = user?.passkeys?.find((held) => held.id === credential.id);
      if (user === undefined || passkey === undefined) throw refuse(ctx, 'unknown credential');
      if (challenge.username !== undefined && challenge.username !== user.username) {
        throw refuse(ctx, 'credential of another account than the options named');
      }
      if (response.userHandle != null && response.userHandle.toString('base64url') !== passkey.userHandle) {
        throw refuse(ctx, 'user handle');
      }
      const result = refusedAs(ctx, () => {
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
      if (current === undefined) throw refuse(ctx, 'passkey removed or used concurrently');
      logger.info('passkey sign-in succeeded', {
        event: 'passkey_login_succeeded',
        address: ctx.address,
        username: current.username,
        isUserVerified: result.isUserVerified,
      });
      sendJson(
        ctx.res,
        200,
        { success: true, username: current.username, level: current.level },
        { 'set-cookie': await cookies.begin(ctx, current, passkeyAmr(result.isUserVerified)) },
      );
    } },
    {
      method: 'POST', path: '/api/auth/account/passkeys/options', access: 'passkeyCreationOptions', body: 'json',
      async handler(ctx) {
      const caller = callerOf(ctx);
      // Nothing is read from a body; one sent (`{}`) is accepted and dropped.
      await readJsonBody(ctx.req, config.maxBodyBytes);
      const rp = relyingParty(ctx);
      const user = caller.user;
      const passkeys = user.passkeys ?? [];
      if (passkeys.length >= MAX_PASSKEYS) throw new TooManyPasskeys();
      // One user.id per account, so an authenticator replaces its old credential for us, not adds one.
      const userHandle = passkeys[0]?.userHandle ?? newUserHandle();
      const challenge = issue(ctx, { ceremony: 'create', username: user.username, userHandle });
      sendJson(
        ctx.res,
        200,
        {
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
        },
      );
    } },
    { method: 'POST', path: '/api/auth/account/passkeys', access: 'addPasskey', body: 'json', async handler(ctx) {
      const { name, credential, password } = await readCheckedBody(ctx, checkNewPasskeyBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
      const rp = relyingParty(ctx);
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
            address: ctx.address,
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
      logger.info('passkey added', {
        event: 'passkey_added',
        username: user.username,
        passkeyId: id,
        address: ctx.address,
      });
      // Every other session ends; this one goes on under a new cookie, claiming what it proved.
      const cookie = await cookies.carryOver(ctx, caller, user, amrAfterChange(caller.claims.amr, user));
      sendJson(ctx.res, 200, { id, name }, { 'set-cookie': cookie });
    } },
    { method: 'DELETE', path: '/api/auth/account/passkeys/:id', access: 'removePasskey', body: 'json', async handler(ctx) {
      const { password } = await readCheckedBody(ctx, checkPasskeyRemovalBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
      const id = checkCredentialId(ctx.params['id'] ?? '', 'id');
      if (!id.ok) throw new PasskeyNotFound();
      const user = await store.change((view) => {
        stillSignedIn(deps, view, caller);
        return removePasskey(view, caller.user.username, id.value, nowSeconds());
      });
      logger.info('passkey removed', {
        event: 'passkey_removed',
        username: user.username,
        passkeyId: id.value,
        address: ctx.address,
      });
      const cookie = await cookies.carryOver(ctx, caller, user, amrAfterChange(caller.claims.amr, user));
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookie });
    } },
  ];
}
