import { PASSWORD_ONLY } from '../../auth/amr.js';
import { OAuthRefused } from '../../errors.js';
import { NO_STORE, prepareAnswer, sendJson, sendPrepared, sendStatic } from '../../http/respond.js';
import type { Logger } from '../../log/logger.js';
import type { BuiltPage, Sha256Base64 } from '../../pages/shell.js';
import type { RequestContext, Route } from '../../routes/context.js';
import type { StoredUser } from '../../store/users.js';
import { isAdministrator } from '../../validate/level.js';
import { authorizeAnswer, type AuthorizeDeps, type AuthorizeSession } from '../authorize-flow.js';
import { readRedirectTarget } from '../authorize-request.js';
import type { StoredClient } from '../clients.js';
import type { AccessTokenStore } from '../access-tokens.js';
import type { ClientStore } from '../client-store.js';
import type { FormParameters } from '../form.js';
import { buildNotOpenPage } from '../pages/not-open-page.js';
import { buildNoRedirectPage } from '../pages/provider-pages.js';
import { SCOPES } from '../parameters.js';
import type { SigningKeySet } from '../signing-keys.js';
import type { TokenService } from '../token-service.js';
import { readClientCredentials, readTokenRequest } from '../token-request.js';
import { createCors } from './cors.js';
import { readFormBody, strictQuery } from './wire.js';
import { epochSeconds, type EpochMs } from '../../time.js';

interface ProviderRouteDeps {
  readonly issuer: string;
  readonly clients: ClientStore;
  readonly tokens: TokenService;
  /** Read only to tell which app an access token was issued to (CORS at userinfo). */
  readonly accessTokens: Pick<AccessTokenStore, 'find'>;
  readonly keys: SigningKeySet;
  readonly authorize: Omit<AuthorizeDeps, 'needsTwoFactors'>;
  /** --require-mfa and --require-mfa-for-admins: as if every client (for administrators) had `mfa`. */
  readonly requireMfa: boolean;
  readonly requireMfaForAdmins: boolean;
  readonly maxBodyBytes: number;
  readonly logger: Logger;
  readonly sha256Base64: Sha256Base64;
  readonly now: () => EpochMs;
}

/** Public documents: apps fetch them, and may keep them a few minutes. */
const PUBLIC_DOCUMENT = Object.freeze({ 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' });

/**
 * The OpenID Connect provider's endpoints (docs/contract/oidc.md "Endpoints"): discovery, JWKS,
 * authorize, token, userinfo and revocation. Apps reach them cross-site by design; the session cookie
 * counts only at authorize (never `?token=`), and only client credentials or access tokens elsewhere.
 */
export function providerRoutes(deps: ProviderRouteDeps): Route[] {
  const { issuer, tokens } = deps;
  const discovery = prepareAnswer(200, JSON.stringify(discoveryDocument(issuer)), PUBLIC_DOCUMENT);
  const noRedirectPages = new Map<string, BuiltPage>();
  const noRedirect = (ctx: RequestContext, reason: string): void => {
    let page = noRedirectPages.get(reason);
    if (page === undefined) {
      page = buildNoRedirectPage(reason, deps.sha256Base64);
      noRedirectPages.set(reason, page);
    }
    sendStatic(ctx.res, 400, page.body, page.headers);
  };
  const notOpenPage = buildNotOpenPage(deps.sha256Base64);
  const cors = createCors(deps.clients);
  /** The app the request's client credentials name (client_id in the form, or Basic), for CORS; undefined when they are malformed. */
  const namedClient = (parameters: FormParameters, authorization: string | undefined): StoredClient | undefined => {
    try {
      return deps.clients.find(readClientCredentials(parameters, authorization).clientId);
    } catch {
      return undefined;
    }
  };
  const needsTwoFactors = (client: StoredClient, user: StoredUser): boolean =>
    client.mfa === true || deps.requireMfa || (deps.requireMfaForAdmins && isAdministrator(user.level));
  const authorizeDeps: AuthorizeDeps = { ...deps.authorize, needsTwoFactors };

  /**
   * The session the judge found in the cookie (the row counts no `?token=`), when it is one Gatehouse
   * made: a token without `sid` was not signed in here.
   */
  const sessionOf = (ctx: RequestContext): AuthorizeSession | undefined => {
    const { caller } = ctx.admission;
    if (caller === undefined || caller.claims.sid === undefined) return undefined;
    const { ses, exp } = caller.claims;
    return {
      user: caller.user,
      amr: caller.claims.amr ?? PASSWORD_ONLY,
      signedInAt: Math.floor(caller.claims.iat),
      session: ses === undefined ? undefined : { id: ses, until: Math.floor(exp) },
    };
  };

  const authorize = async (ctx: RequestContext, parameters: FormParameters | undefined): Promise<void> => {
    if (parameters === undefined) return noRedirect(ctx, 'The request is malformed (a parameter is repeated or badly encoded).');
    const target = readRedirectTarget(parameters, (clientId) => deps.clients.find(clientId));
    if (!target.ok) return noRedirect(ctx, target.reason);
    const answer = await authorizeAnswer(authorizeDeps, target, parameters, sessionOf(ctx));
    if (answer.kind === 'not-open') {
      const page = notOpenPage(answer);
      return sendStatic(ctx.res, 403, page.body, page.headers);
    }
    // No Referer: the authorize URL (state, nonce) is the app's business, not the next page's.
    sendStatic(ctx.res, 303, Buffer.alloc(0), { location: answer.location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-length': 0 });
  };

  /** RFC 6750 section 2.1 (header) or 2.2 (form body); both at once is invalid_request. */
  const bearerToken = async (ctx: RequestContext): Promise<string | undefined> => {
    const header = ctx.req.headers.authorization;
    const fromHeader = header === undefined ? undefined : /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header)?.[1] ?? '';
    if (ctx.req.method !== 'POST' || ctx.req.headers['content-type'] === undefined) return fromHeader;
    const fromBody = (await readFormBody(ctx, deps.maxBodyBytes)).get('access_token');
    if (fromHeader !== undefined && fromBody !== undefined) throw new OAuthRefused('invalid_request', 'The access token came twice.');
    return fromHeader ?? fromBody;
  };

  const userinfo = async (ctx: RequestContext): Promise<void> => {
    let token: string | undefined;
    try {
      token = await bearerToken(ctx);
    } catch (error) {
      cors.allow(ctx, 'any');
      throw error;
    }
    const claims = token === undefined || token === '' ? undefined : tokens.userinfo(token);
    // The app the token was issued to; a refusal names no live app, and says nothing any app may not read.
    const issuedTo = claims === undefined ? undefined : deps.accessTokens.find(token ?? '', epochSeconds(deps.now()))?.clientId;
    cors.allow(ctx, issuedTo === undefined ? 'any' : deps.clients.find(issuedTo));
    if (claims !== undefined) return sendJson(ctx.res, 200, claims, NO_STORE);
    sendPrepared(ctx.res, token === undefined ? NO_TOKEN : INVALID_TOKEN);
  };

  return [
    {
      method: 'GET', path: '/.well-known/openid-configuration', access: 'oidcDiscovery', body: 'none',
      handler: (ctx) => sendPrepared(ctx.res, discovery),
    },
    {
      method: 'GET', path: '/oidc/jwks', access: 'oidcKeys', body: 'none',
      handler: (ctx) => sendJson(ctx.res, 200, deps.keys.jwks(epochSeconds(deps.now())), PUBLIC_DOCUMENT),
    },
    { method: 'GET', path: '/oidc/authorize', access: 'oidcAuthorize', body: 'none', handler: (ctx) => authorize(ctx, strictQuery(ctx)) },
    {
      // OpenID Connect Core section 3.1.2.1: the same request as a form post.
      method: 'POST', path: '/oidc/authorize', access: 'oidcAuthorizeForm', body: 'form',
      async handler(ctx) {
        let parameters: FormParameters | undefined;
        try {
          parameters = await readFormBody(ctx, deps.maxBodyBytes);
        } catch (error) {
          if (!(error instanceof OAuthRefused)) throw error;
          parameters = undefined;
        }
        await authorize(ctx, parameters);
      },
    },
    {
      method: 'POST', path: '/oidc/token', access: 'oidcToken', body: 'form', errorForm: 'oauth',
      async handler(ctx) {
        cors.allow(ctx, undefined);
        const parameters = await readFormBody(ctx, deps.maxBodyBytes);
        cors.allow(ctx, namedClient(parameters, ctx.req.headers.authorization));
        const client = tokens.authenticateClient(readClientCredentials(parameters, ctx.req.headers.authorization), ctx.address);
        const answer = await tokens.token(client, readTokenRequest(parameters), ctx.address);
        sendJson(ctx.res, 200, answer, NO_STORE);
      },
    },
    { method: 'GET', path: '/oidc/userinfo', access: 'oidcUserinfo', body: 'none', errorForm: 'oauth', handler: userinfo },
    { method: 'POST', path: '/oidc/userinfo', access: 'oidcUserinfoForm', body: 'form', errorForm: 'oauth', handler: userinfo },
    {
      method: 'POST', path: '/oidc/revoke', access: 'oidcRevoke', body: 'form', errorForm: 'oauth',
      async handler(ctx) {
        cors.allow(ctx, undefined);
        const parameters = await readFormBody(ctx, deps.maxBodyBytes);
        cors.allow(ctx, namedClient(parameters, ctx.req.headers.authorization));
        const client = tokens.authenticateClient(readClientCredentials(parameters, ctx.req.headers.authorization), ctx.address);
        const token = parameters.get('token');
        if (token === undefined || token.length > 128) throw new OAuthRefused('invalid_request', 'The token parameter is missing or malformed.');
        await tokens.revoke(client, token, ctx.address);
        // RFC 7009 section 2.2: 200 whether or not the token was known.
        sendJson(ctx.res, 200, {}, NO_STORE);
      },
    },
    ...cors.preflightRoutes(),
  ];
}

// RFC 6750 section 3: the 401 of userinfo, with no token and with one that is not (or no longer) good.
const NO_TOKEN = prepareAnswer(401, JSON.stringify({ error: 'invalid_request', error_description: 'An access token is required.' }),
  { 'www-authenticate': 'Bearer realm="Gatehouse"' });
const INVALID_TOKEN = prepareAnswer(401, JSON.stringify({ error: 'invalid_token', error_description: 'The access token is unknown, expired or revoked.' }),
  { 'www-authenticate': 'Bearer realm="Gatehouse", error="invalid_token"' });

/** OpenID Connect Discovery 1.0 section 3, with the values docs/contract/oidc.md "Discovery" lists. */
function discoveryDocument(issuer: string) {
  const methods = ['client_secret_basic', 'client_secret_post', 'none'];
  return {
    issuer,
    authorization_endpoint: `${issuer}/oidc/authorize`,
    token_endpoint: `${issuer}/oidc/token`,
    userinfo_endpoint: `${issuer}/oidc/userinfo`,
    jwks_uri: `${issuer}/oidc/jwks`,
    end_session_endpoint: `${issuer}/oidc/logout`,
    revocation_endpoint: `${issuer}/oidc/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    token_endpoint_auth_methods_supported: methods,
    revocation_endpoint_auth_methods_supported: methods,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...SCOPES],
    claims_supported: [
      'sub', 'iss', 'aud', 'azp', 'exp', 'iat', 'auth_time', 'nonce', 'amr',
      'preferred_username', 'name', 'email', 'email_verified', 'groups',
    ],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}
