// Typed errors for every refusal the service makes, one table: a permanent `code`, the HTTP status
// it is answered with, and a message for people (it may change). http/errors.ts builds the answers.

export interface Problem {
  readonly path: string;
  readonly message: string;
}

export abstract class GatehouseError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
}

/**
 * A refusal the service makes on purpose (bad input, no or weak credentials, busy, stopping):
 * never logged, so it is built without a stack trace, which was a fifth of the CPU of a 404 or
 * 401 answer. What the operator must see (a failed store write, a bug) keeps its stack.
 */
export abstract class Refusal extends GatehouseError {
  constructor(message: string, options?: ErrorOptions) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message, options);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
  }
}

/** The base of a refusal whose message is fixed, or made from its one argument. */
function refusal<A = void>(code: string, status: number, message: string | ((argument: A) => string)) {
  return class extends Refusal {
    readonly code = code;
    readonly status = status;
    constructor(argument: A, options?: ErrorOptions) {
      super(typeof message === 'string' ? message : message(argument), options);
    }
  };
}

export class ValidationFailed extends Refusal {
  readonly code = 'VALIDATION_FAILED';
  readonly status = 400;
  readonly problems: readonly Problem[];
  constructor(problems: readonly Problem[]) {
    const first = problems[0];
    super(first === undefined ? 'The request is invalid.' : `${first.path || 'body'}: ${first.message}`);
    this.problems = problems;
  }
}

export class InvalidJson extends Refusal {
  readonly code = 'INVALID_JSON';
  readonly status = 400;
  constructor(message = 'The body is not valid JSON.') {
    super(message);
  }
}

export class BodyTooLarge extends refusal<number>('BODY_TOO_LARGE', 413,
  (max) => `The body is larger than ${max} bytes.`) {}
export class UnsupportedMediaType extends refusal('UNSUPPORTED_MEDIA_TYPE', 415,
  'The body must be sent as application/json.') {}
export class InvalidPathParameter extends refusal('INVALID_PATH_PARAMETER', 400,
  'The path does not name a valid user.') {}
/** The client went away (or was cut off by a timeout) before its request was read or served. */
export class ClientAborted extends refusal('CLIENT_ABORTED', 400,
  'The request was abandoned before it was complete.') {}

/** Every token failure and every missing credential: one status, one body. */
export class AuthRequired extends refusal('AUTH_REQUIRED', 401, 'Authentication is required.') {}
/** Thrown by TokenCodec.verify; `reason`, also its `cause`, is for tests and debug logs only (routes answer AuthRequired). */
export class TokenInvalid extends refusal<string>('AUTH_TOKEN_INVALID', 401, (reason) => `Token refused: ${reason}.`) {
  readonly reason: string;
  constructor(reason: string) {
    super(reason, { cause: reason });
    this.reason = reason;
  }
}
export class InvalidCredentials extends refusal('INVALID_CREDENTIALS', 401, 'Username or password is incorrect.') {}
/**
 * The password was right, but the account has TOTP and no code came (docs/contract/accounts.md "Two-step sign-in").
 * Flood's login screen shows this message, so it says where a code can be given.
 */
export class SecondFactorRequired extends refusal('SECOND_FACTOR_REQUIRED', 401,
  'This account signs in in two steps: use the Gatehouse sign-in page and enter the code from your authenticator app (an API client sends it as "code" with the password).') {}
/** The password was right, the code was not (wrong, outside the skew, already used): docs/contract/accounts.md "Two-step sign-in". */
export class InvalidSecondFactor extends refusal('INVALID_SECOND_FACTOR', 401,
  'The code is incorrect or was already used.') {}
/** A passkey sign-in that does not verify: one 401 whatever the reason the route logs (docs/contract/accounts.md "Passkeys"). */
export class PasskeyRefused extends refusal<string>('PASSKEY_REFUSED', 401, 'The passkey was not accepted.') {}

/** docs/contract/accounts.md "The caller's own account": the session is fine, the password given to confirm a change is not. */
export class WrongPassword extends refusal('WRONG_PASSWORD', 403, 'The current password is incorrect.') {}
/**
 * A one-factor session asked to change a way into an account that has a second factor (auth/access.ts
 * `two-once-enrolled`): adding, changing or removing a password, TOTP, passkey or machine token.
 */
export class SecondFactorSessionRequired extends refusal('SECOND_FACTOR_SESSION_REQUIRED', 403,
  'This account has a second factor: sign in with two factors (your password and a code, or a passkey that checked your PIN or biometric) to change its password, second factors or machine tokens.') {}
/** A change under /api/auth/ that another site started (docs/contract/access.md "Cross-site rule"): Fetch Metadata, else Origin. */
export class CrossSiteRequest extends refusal('CROSS_SITE_REQUEST', 403,
  'This request came from another site; changes are only accepted from Gatehouse\'s own pages and API clients.') {}
/** A `home` row asked on another origin (docs/contract/own-origin.md); the argument: the account page, when known. */
export class NotGatehouseOrigin extends refusal<string | undefined>('NOT_GATEHOUSE_ORIGIN', 403,
  (accountUrl) => accountUrl === undefined
    ? 'Accounts and administration answer only on Gatehouse\'s own address, not on an app\'s: open Gatehouse on localhost, or set --public-url to its address.'
    : `Accounts and administration answer only on Gatehouse's own address, not on an app's. Open ${accountUrl}`) {}
/** Confirming TOTP set-up with a code the new authenticator did not show. */
export class WrongCode extends refusal('WRONG_CODE', 403,
  'The code does not match; check the time on the device and try the next one.') {}
export class NotAdministrator extends refusal('NOT_ADMINISTRATOR', 403, 'This action needs an administrator.') {}
/** With `--auth none`, a request that did not come through a trusted proxy or loopback. */
export class ProxyRequired extends refusal('PROXY_REQUIRED', 403,
  'Without accounts, this service only answers its authenticating proxy.') {}
/** The forward URL asks for a level other than ADMINISTRATOR or USER: an operator's typo, refused for everyone. */
export class UnknownLevel extends refusal('UNKNOWN_LEVEL', 403,
  'The proxy asks for an access level that does not exist.') {}
/** The account is in none of the groups the forward URL names (docs/contract/gate.md "The query"). */
export class NotInGroup extends refusal('NOT_IN_GROUP', 403, 'This account is not in a group allowed here.') {}
/** The forward URL's `group=` is no list of group names: refused for everyone (nginx turns a 400 into a 500). */
export class InvalidGroupFilter extends refusal('INVALID_GROUP_FILTER', 403,
  'The proxy asks for groups that are not valid group names.') {}
/**
 * With no users yet, a registration through a host name nobody listed (docs/security-notes.md "DNS
 * rebinding"). The argument says how to create the administrator offline (a sentence ending in the command).
 */
export class HostNotAllowed extends refusal<string>('HOST_NOT_ALLOWED', 403,
  (offlineInstruction) => `The first administrator can only be registered through localhost, an IP address, --public-url's host or a host name listed in --allowed-hosts (GATEHOUSE_ALLOWED_HOSTS). Or create it offline: ${offlineInstruction}`) {}

/**
 * An invitation's or reset link's secret that opens nothing
 * (docs/contract/links-and-sessions.md "Using a link"): one code, and one message for each reason,
 * which the join and reset pages show.
 */
const LINK_PROBLEMS: Readonly<Record<'expired' | 'spent' | 'withdrawn' | 'replaced' | 'unknown', string>> = {
  expired: 'This link has expired; ask for a new one.',
  spent: 'This link has already been used; each link works once.',
  withdrawn: 'This link was withdrawn; ask for a new one.',
  replaced: 'A newer link was made for this account and replaced this one; use the newest link you were sent.',
  unknown: 'This link is not valid; check that the whole link was copied.',
};
export class InvitationInvalid extends refusal<keyof typeof LINK_PROBLEMS>('INVITATION_INVALID', 401,
  (problem) => LINK_PROBLEMS[problem]) {}
export class ResetLinkInvalid extends refusal<keyof typeof LINK_PROBLEMS>('RESET_LINK_INVALID', 401,
  (problem) => LINK_PROBLEMS[problem]) {}

export class RouteNotFound extends refusal('NOT_FOUND', 404, 'There is nothing at this path.') {}
export class SessionNotFound extends refusal('SESSION_NOT_FOUND', 404, 'This account has no open session with that id.') {}
export class InvitationNotFound extends refusal('INVITATION_NOT_FOUND', 404, 'There is no open invitation with that id.') {}
export class MachineTokenNotFound extends refusal('TOKEN_NOT_FOUND', 404,
  'This account has no machine token with that id.') {}
export class PasskeyNotFound extends refusal('PASSKEY_NOT_FOUND', 404, 'This account has no passkey with that id.') {}
/** With --cookie-domain and neither --public-url nor --passkey-origins (docs/contract/access.md "Passkeys with --cookie-domain"). */
export class PasskeysOff extends refusal('PASSKEYS_OFF', 404,
  'Passkeys are off on this server: with --cookie-domain set, --public-url or --passkey-origins must say where they are used.') {}
/** A passkey registration that does not verify; the reason is one of ours, never the client's text. */
export class PasskeyInvalid extends refusal<string>('PASSKEY_INVALID', 400,
  (reason) => `The passkey could not be added: ${reason}.`) {}

export class MethodNotAllowed extends refusal('METHOD_NOT_ALLOWED', 405, 'This path does not answer that method.') {
  readonly allow: readonly string[];
  constructor(allow: readonly string[]) {
    super();
    this.allow = allow;
  }
}

export class TotpAlreadyEnabled extends refusal('TOTP_ALREADY_ENABLED', 409,
  'TOTP is already set up for this account; remove it first to set up a new authenticator.') {}
/** Confirm without a set-up in progress (none begun, expired, or the account changed meanwhile). */
export class TotpNotPending extends refusal('TOTP_NOT_PENDING', 409,
  'No TOTP set-up is in progress (it lasts 10 minutes); start again.') {}
export class TooManyMachineTokens extends refusal('TOO_MANY_TOKENS', 409,
  'This account has as many machine tokens as it may have; revoke one first.') {}
export class TooManyPasskeys extends refusal('TOO_MANY_PASSKEYS', 409,
  'This account has as many passkeys as it may have; remove one first.') {}
export class TooManyInvitations extends refusal('TOO_MANY_INVITATIONS', 409,
  'As many invitations are open as may be; withdraw one first.') {}
export class TooManyResetLinks extends refusal('TOO_MANY_RESET_LINKS', 409,
  'As many reset links are open as may be; wait until some are used or expire.') {}
export class PasskeyTaken extends refusal('PASSKEY_ALREADY_REGISTERED', 409, 'This passkey is already registered.') {}
/** docs/contract/flood-api.md "Responses": without an administrator the service falls back to its initial condition. */
export class LastAdministrator extends refusal('LAST_ADMINISTRATOR', 409,
  'The last administrator cannot be deleted or demoted.') {}
// The spec makes a duplicate username and a missing user 500 (docs/contract/flood-api.md "Errors").
export class UsernameTaken extends refusal('USERNAME_TAKEN', 500, 'That username is already taken.') {}
export class UserNotFound extends refusal('USER_NOT_FOUND', 500, 'No user has that username.') {}
/** A name that looks like an existing account's (store/account-rules.ts): refused as a taken name is, same code and status. */
export class UsernameLookAlike extends refusal('USERNAME_TAKEN', 500,
  'That username is taken: an account exists whose name differs from it only in case, width or invisible characters.') {}

export class TooManyAttempts extends refusal('TOO_MANY_ATTEMPTS', 429, 'Too many failed logins; try again later.') {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super();
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** No room for another passkey challenge without dropping someone else's before it expires (passkeys/challenges.ts). */
export class TooManyChallenges extends refusal('TOO_MANY_CHALLENGES', 503,
  'Too many passkey sign-ins are in progress; try again in a few minutes.') {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super();
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ServerBusy extends refusal('SERVER_BUSY', 503, 'The server is busy; try again shortly.') {
  readonly retryAfterSeconds = 1;
}

// OpenID Connect clients (docs/contract/oidc.md "Clients" and "Limits").
export class ClientNotFound extends refusal('CLIENT_NOT_FOUND', 404, 'No sign-in app has that id.') {}
export class TooManyClients extends refusal('TOO_MANY_CLIENTS', 409,
  'Gatehouse has as many sign-in apps as it may have; remove one first.') {}
export class ClientNameTaken extends refusal('CLIENT_NAME_TAKEN', 409, 'A sign-in app already has that name.') {}
export class PublicClientSecret extends refusal('PUBLIC_CLIENT_HAS_NO_SECRET', 409,
  'That sign-in app is public (it uses PKCE): it has no secret.') {}

/** The error codes of RFC 6749 sections 4.1.2.1 and 5.2, RFC 7009 section 2.2.1 and OpenID Connect Core section 3.1.2.6. */
export type OAuthErrorCode =
  | 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type'
  | 'invalid_scope' | 'access_denied' | 'unsupported_response_type' | 'unsupported_token_type' | 'login_required'
  | 'request_not_supported' | 'request_uri_not_supported' | 'registration_not_supported' | 'temporarily_unavailable';

/**
 * A refusal of an OpenID Connect endpoint, answered in RFC 6749's own form (`{error, error_description}`
 * at the token endpoint, `?error=` on a redirect) by the provider's routes; `code` is the same word in upper case.
 */
export class OAuthRefused extends Refusal {
  readonly code: string;
  readonly status: number;
  readonly error: OAuthErrorCode;
  constructor(error: OAuthErrorCode, description: string) {
    super(description);
    this.error = error;
    this.code = `OAUTH_${error.toUpperCase()}`;
    // RFC 6749 section 5.2: 401 for a client that failed to authenticate, 400 for the rest.
    this.status = error === 'invalid_client' ? 401 : 400;
  }
}

/** A change could not be made durable; nothing was acknowledged. */
export class StoreWriteFailed extends GatehouseError {
  readonly code = 'STORE_WRITE_FAILED';
  readonly status = 503;
  constructor(options?: { cause: unknown }) {
    super('The change could not be saved; it was not applied.', options);
  }
}

/** The change is in the file but could not be confirmed durable (directory fsync failed, no rollback). */
export class StoreOutcomeUnknown extends GatehouseError {
  readonly code = 'STORE_OUTCOME_UNKNOWN';
  readonly status = 503;
  constructor(options?: { cause: unknown }) {
    super('The change was written but could not be confirmed as saved; check before retrying.', options);
  }
}

/** The store is closed because the service is stopping; nothing was applied. */
export class StoreClosed extends refusal('SERVICE_STOPPING', 503,
  'The service is stopping; the change was not applied.') {}
/** A request that arrived while the service stops (the forward endpoint answers it, nothing else). */
export class ServiceStopping extends refusal('SERVICE_STOPPING', 503, 'The service is stopping; try again shortly.') {}
