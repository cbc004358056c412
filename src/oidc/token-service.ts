import { createHash } from 'node:crypto';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { SessionRecords } from '../auth/session-records.js';
import { OAuthRefused, TooManyAttempts } from '../errors.js';
import { throttleKeyOf } from '../http/client-address.js';
import type { Logger } from '../log/logger.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { AccessTokenStore, Revocation } from './access-tokens.js';
import { idTokenClaims, userClaims } from './claims.js';
import { isClientSecret, type StoredClient } from './clients.js';
import type { ClientStore } from './client-store.js';
import type { CodeBinding, CodeStore, SignedInSession } from './codes.js';
import type { GrantStore, StoredGrant } from './grant-store.js';
import { signJwt } from './jws.js';
import type { Scope } from './parameters.js';
import type { SigningKeySet } from './signing-keys.js';
import type { ClientCredentials, TokenRequest } from './token-request.js';
import { epochSeconds, type EpochMs, type EpochSeconds } from '../time.js';

// The token endpoint's work (RFC 6749 sections 4.1.3 and 6, OpenID Connect Core 3.1.3), revocation
// (RFC 7009) and userinfo (OpenID Connect Core 5.3). Every failure that could be a guess (a wrong
// client secret, an unknown, used or expired code or refresh token, a wrong PKCE verifier) counts
// in the login throttle's per-address window, and a wrong secret also against its client.

interface TokenServiceDeps {
  readonly issuer: string;
  readonly keys: SigningKeySet;
  readonly clients: ClientStore;
  readonly grants: GrantStore;
  readonly codes: CodeStore;
  readonly accessTokens: AccessTokenStore;
  readonly users: UserStore;
  /** The session records: what was got through a session ends with it. */
  readonly sessions: Pick<SessionRecords, 'isOpen'>;
  readonly throttle: LoginThrottle;
  readonly logger: Logger;
  readonly now: () => EpochMs;
}

/** RFC 6749 section 5.1, plus the id_token of OpenID Connect Core section 3.1.3.3. */
interface TokenAnswer {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly id_token: string;
  readonly refresh_token?: string;
  readonly scope: string;
}

/** What a code, access token or refresh token was got through. */
interface TokenHolder {
  readonly username: string;
  readonly sessionKey: string;
  readonly session?: SignedInSession | undefined;
}

/**
 * The account a token or code speaks for, while its sessions have not ended since (the account's
 * session key; and the session it was got through, until that session's cookie would have expired:
 * a session ended before then took its codes and tokens with it, session-records.ts `whenEnding`)
 * and its client still lets it in.
 */
function liveAccount(
  users: UserStore, sessions: Pick<SessionRecords, 'isOpen'>, holder: TokenHolder, client: StoredClient, nowSeconds: number,
): StoredUser | undefined {
  const user = users.find(holder.username);
  if (user === undefined || user.sessionKey !== holder.sessionKey || user.sub === undefined) return undefined;
  const { session } = holder;
  if (session !== undefined && nowSeconds < session.until && !sessions.isOpen(session.id, user.username, user.sessionKey)) return undefined;
  return isAllowedBy(client, user) ? user : undefined;
}

/** The client's `groups` rule: no groups lets everyone in; else the account must be in one of them. */
export function isAllowedBy(client: StoredClient, user: StoredUser): boolean {
  return client.groups === undefined || client.groups.some((group) => user.groups?.includes(group) === true);
}

const grantFailure = (description: string): OAuthRefused => new OAuthRefused('invalid_grant', description);

// A client key the throttle keeps apart from every username: no username holds a control character.
const clientThrottleKey = (clientId: string): string => `\u0000client:${clientId}`;

export type TokenService = ReturnType<typeof createTokenService>;

export function createTokenService(deps: TokenServiceDeps) {
  const { throttle, logger } = deps;
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());
  const accountOf = (holder: TokenHolder, client: StoredClient): StoredUser | undefined =>
    liveAccount(deps.users, deps.sessions, holder, client, nowSeconds());

  const refuse = (address: string, event: string, fields: Record<string, string>, error: OAuthRefused): never => {
    logger.warn('OpenID Connect request refused', { event: 'oidc_refused', address, reason: event, ...fields });
    throw error;
  };
  /** A guess that failed: counted against the address (the login throttle's window, IPv6 by /64). */
  const countFailure = (address: string): void => throttle.recordAddressFailure(throttleKeyOf(address), deps.now());

  /** The client behind `credentials` (`address`: the request's client address); throws OAuthRefused invalid_client, or TooManyAttempts for a throttled one. */
  function authenticateClient(credentials: ClientCredentials, address: string): StoredClient {
    const key = clientThrottleKey(credentials.clientId);
    const wait = throttle.retryAfterSeconds(key, throttleKeyOf(address), deps.now());
    if (wait > 0) throw new TooManyAttempts(wait);
    const client = deps.clients.find(credentials.clientId);
    const invalid = new OAuthRefused('invalid_client', 'The client is unknown, or its credentials are wrong.');
    if (client === undefined) {
      countFailure(address);
      return refuse(address, 'unknown client', {}, invalid);
    }
    if (client.public === true) {
      // A public client has no secret to present; one that presents a secret is not this client.
      if (credentials.secret === undefined) return client;
      countFailure(address);
      return refuse(address, 'secret for a public client', { clientId: client.clientId }, invalid);
    }
    if (credentials.secret === undefined || !isClientSecret(client, credentials.secret)) {
      throttle.recordFailure(key, throttleKeyOf(address), deps.now());
      return refuse(address, 'wrong client secret', { clientId: client.clientId }, invalid);
    }
    return client;
  }

  /** Signs the id_token and, unless already done (a refresh), issues the access token. */
  function answer(
    client: StoredClient, user: StoredUser,
    facts: { scopes: readonly Scope[]; nonce: string | undefined; amr: CodeBinding['amr']; authTime: number; session: SignedInSession | undefined },
    grant: { grantId: string; refreshToken: string } | undefined,
  ): { answer: TokenAnswer; accessTokenDigest: string } {
    const now = nowSeconds();
    const sub = user.sub ?? '';
    const access = deps.accessTokens.issue({
      clientId: client.clientId, username: user.username, sessionKey: user.sessionKey, session: facts.session, scopes: facts.scopes,
      amr: facts.amr, grantId: grant?.grantId,
    }, now);
    const idToken = signJwt(deps.keys.signingKey(client.alg), idTokenClaims({
      issuer: deps.issuer, clientId: client.clientId, user, sub, scopes: facts.scopes, nonce: facts.nonce, amr: facts.amr,
      authTime: facts.authTime, nowSeconds: now,
    }));
    return {
      answer: {
        access_token: access.token,
        token_type: 'Bearer',
        expires_in: access.expiresIn,
        id_token: idToken,
        ...(grant === undefined ? {} : { refresh_token: grant.refreshToken }),
        scope: facts.scopes.join(' '),
      },
      accessTokenDigest: access.digest,
    };
  }

  /** grant_type=authorization_code. */
  async function exchangeCode(
    client: StoredClient, request: Extract<TokenRequest, { grant: 'authorization_code' }>, address: string,
  ): Promise<TokenAnswer> {
    const redemption = deps.codes.redeem(request.code, nowSeconds());
    const fields = { clientId: client.clientId };
    if (!redemption.ok) {
      countFailure(address);
      if (redemption.reason === 'used' && redemption.issued !== undefined) {
        // RFC 6749 section 4.1.2: a code used twice has leaked; what it issued is revoked.
        const { issued } = redemption;
        issued.isRevoked = true;
        if (issued.accessTokenDigest !== undefined) deps.accessTokens.revokeDigest(issued.accessTokenDigest);
        if (issued.grantId !== undefined) {
          deps.accessTokens.revokeGrant(issued.grantId);
          await deps.grants.end(issued.grantId);
        }
      }
      return refuse(address, `code ${redemption.reason}`, fields, grantFailure('The code is unknown, used or expired.'));
    }
    const { binding, issued } = redemption;
    if (binding.clientId !== client.clientId || binding.redirectUri !== request.redirectUri) {
      countFailure(address);
      return refuse(address, 'code of another client or redirect URI', fields, grantFailure('The code was not issued to this client and redirect URI.'));
    }
    // RFC 7636 section 4.6; RFC 9700 section 2.1.1: a verifier without a challenge is a downgrade, refused.
    if (binding.codeChallenge !== undefined || request.codeVerifier !== undefined) {
      const computed = request.codeVerifier === undefined
        ? undefined
        : createHash('sha256').update(request.codeVerifier, 'latin1').digest('base64url');
      if (computed === undefined || computed !== binding.codeChallenge) {
        countFailure(address);
        return refuse(address, 'wrong PKCE verifier', fields, grantFailure('The PKCE code_verifier does not match.'));
      }
    }
    const user = accountOf(binding, client);
    if (user === undefined) return refuse(address, 'session ended', fields, grantFailure('The sign-in behind this code has ended.'));
    let grant: { grantId: string; refreshToken: string } | undefined;
    if (binding.scopes.includes('offline_access')) {
      const issuedGrant = await deps.grants.issue({
        clientId: client.clientId, username: user.username, sessionKey: user.sessionKey,
        ...(binding.session === undefined ? {} : { session: binding.session }), scopes: binding.scopes, amr: binding.amr, authTime: binding.authTime,
      }, nowSeconds());
      grant = { grantId: issuedGrant.grant.id, refreshToken: issuedGrant.token };
      issued.grantId = grant.grantId;
    }
    const result = answer(client, user, binding, grant);
    issued.accessTokenDigest = result.accessTokenDigest;
    if (issued.isRevoked === true) {
      // The code came back while this exchange was writing its grant: neither use gets anything.
      deps.accessTokens.revokeDigest(result.accessTokenDigest);
      if (grant !== undefined) await deps.grants.end(grant.grantId);
      return refuse(address, 'code used twice', fields, grantFailure('The code is unknown, used or expired.'));
    }
    logger.info('OpenID Connect tokens issued', { event: 'oidc_tokens_issued', address, clientId: client.clientId, username: user.username });
    return result.answer;
  }

  /** grant_type=refresh_token (RFC 6749 section 6): rotated, a used one ending its family. */
  async function refresh(
    client: StoredClient, request: Extract<TokenRequest, { grant: 'refresh_token' }>, address: string,
  ): Promise<TokenAnswer> {
    const fields = { clientId: client.clientId };
    // RFC 6749 section 6: no scope beyond the grant's. Checked before the rotation, which would
    // otherwise hand out a new token the refused app never sees, and end its family.
    const known = deps.grants.peek(request.refreshToken);
    const scopes = request.scopes ?? known?.scopes ?? [];
    if (known !== undefined && (scopes.some((scope) => !known.scopes.includes(scope)) || !scopes.includes('openid'))) {
      throw new OAuthRefused('invalid_scope', 'The scope asked for is not within the grant.');
    }
    const isValid = (grant: StoredGrant): boolean => grant.clientId === client.clientId && accountOf(grant, client) !== undefined;
    const outcome = await deps.grants.refresh(request.refreshToken, nowSeconds(), isValid);
    if (!outcome.ok) {
      if (outcome.grant !== undefined) deps.accessTokens.revokeGrant(outcome.grant.id);
      if (outcome.reason !== 'ended') countFailure(address);
      return refuse(address, `refresh token ${outcome.reason}`, fields, grantFailure('The refresh token is unknown, used, expired or ended.'));
    }
    const { grant, token } = outcome;
    // Asked again after the rotation's write: a change made meanwhile (a password, a removal) counts.
    const signedIn = accountOf(grant, client);
    if (signedIn === undefined) return refuse(address, 'session ended', fields, grantFailure('The sign-in behind this refresh token has ended.'));
    return answer(client, signedIn, { scopes, nonce: undefined, amr: grant.amr, authTime: grant.authTime, session: grant.session },
      { grantId: grant.id, refreshToken: token }).answer;
  }

  return {
    authenticateClient,
    /**
     * The token endpoint, after the request was read and the client authenticated (authenticateClient
     * made a throttled address wait before any code or refresh token is looked at).
     */
    token(client: StoredClient, request: TokenRequest, address: string): Promise<TokenAnswer> {
      return request.grant === 'authorization_code' ? exchangeCode(client, request, address) : refresh(client, request, address);
    },

    /**
     * RFC 7009 section 2.1: revokes `token` if it is this client's; unknown tokens are no error (section
     * 2.2). A live token of another client is refused, invalid_grant (RFC 6749 section 5.2: "issued to
     * another client"), and nothing is revoked.
     */
    async revoke(client: StoredClient, token: string, address: string): Promise<void> {
      let outcome: Revocation;
      if (token.includes('.')) {
        const revoked = await deps.grants.revoke(token, client.clientId, nowSeconds());
        if (revoked.grant !== undefined) deps.accessTokens.revokeGrant(revoked.grant.id);
        outcome = revoked.outcome;
      } else {
        outcome = deps.accessTokens.revoke(token, client.clientId, nowSeconds());
      }
      if (outcome === 'another client') {
        refuse(address, 'revocation of another client\'s token', { clientId: client.clientId },
          grantFailure('The token was not issued to this client.'));
      }
    },

    /** The claims userinfo answers for a live access token, or undefined (the 401 of RFC 6750 section 3.1). */
    userinfo(token: string): Record<string, unknown> | undefined {
      const record = deps.accessTokens.find(token, nowSeconds());
      if (record === undefined) return undefined;
      const client = deps.clients.find(record.clientId);
      const user = client === undefined ? undefined : accountOf(record, client);
      return user === undefined ? undefined : userClaims(user, user.sub ?? '', record.scopes);
    },
  };
}
