// Typed errors for every refusal the service makes. Each has a permanent `code`;
// messages are for people and may change. Only http/errors.ts maps them to statuses.

export interface Problem {
  readonly path: string;
  readonly message: string;
}

export abstract class GatehouseError extends Error {
  abstract readonly code: string;
}

/**
 * A refusal the service makes on purpose (bad input, no or weak credentials, busy, stopping):
 * answered from the error table and never logged, so it is built without a stack trace, which
 * was a fifth of the CPU of a 404 or 401 answer. What the operator must see (a failed store
 * write, a bug) is not a Refusal and keeps its stack.
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

export class ValidationFailed extends Refusal {
  readonly code = 'VALIDATION_FAILED';
  readonly problems: readonly Problem[];
  constructor(problems: readonly Problem[]) {
    const first = problems[0];
    super(first === undefined ? 'The request is invalid.' : `${first.path || 'body'}: ${first.message}`);
    this.problems = problems;
  }
}

export class InvalidJson extends Refusal {
  readonly code = 'INVALID_JSON';
  constructor(message = 'The body is not valid JSON.') {
    super(message);
  }
}

export class BodyTooLarge extends Refusal {
  readonly code = 'BODY_TOO_LARGE';
  constructor(maxBytes: number) {
    super(`The body is larger than ${maxBytes} bytes.`);
  }
}

export class UnsupportedMediaType extends Refusal {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  constructor() {
    super('The body must be sent as application/json.');
  }
}

export class InvalidPathParameter extends Refusal {
  readonly code = 'INVALID_PATH_PARAMETER';
  constructor() {
    super('The path does not name a valid user.');
  }
}

/** Every token failure and every missing credential: one status, one body. */
export class AuthRequired extends Refusal {
  readonly code = 'AUTH_REQUIRED';
  constructor() {
    super('Authentication is required.');
  }
}

export class InvalidCredentials extends Refusal {
  readonly code = 'INVALID_CREDENTIALS';
  constructor() {
    super('Username or password is incorrect.');
  }
}

/**
 * The password was right, but the account has TOTP and no code came (INTERFACE.md "Signing in").
 * Flood's login screen shows this message, so it says where a code can be given.
 */
export class SecondFactorRequired extends Refusal {
  readonly code = 'SECOND_FACTOR_REQUIRED';
  constructor() {
    super('This account signs in in two steps: use the Gatehouse sign-in page and enter the code from your authenticator app (an API client sends it as "code" with the password).');
  }
}

/** The password was right, the code was not (wrong, outside the skew, already used). */
export class InvalidSecondFactor extends Refusal {
  readonly code = 'INVALID_SECOND_FACTOR';
  constructor() {
    super('The code is incorrect or was already used.');
  }
}

/** The caller's own account: the current password given to confirm a change is wrong. */
export class WrongPassword extends Refusal {
  readonly code = 'WRONG_PASSWORD';
  constructor() {
    super('The current password is incorrect.');
  }
}

/**
 * A password-only session asked to change what protects an account that has a second factor
 * (SECURITY.md "Second factors are changed only with a second factor").
 */
export class SecondFactorSessionRequired extends Refusal {
  readonly code = 'SECOND_FACTOR_SESSION_REQUIRED';
  constructor() {
    super('This account has a second factor: sign in with it (a code or a passkey) to change its password, second factors or machine tokens.');
  }
}

/** Confirming TOTP set-up with a code the new authenticator did not show. */
export class WrongCode extends Refusal {
  readonly code = 'WRONG_CODE';
  constructor() {
    super('The code does not match; check the time on the device and try the next one.');
  }
}

export class TotpAlreadyEnabled extends Refusal {
  readonly code = 'TOTP_ALREADY_ENABLED';
  constructor() {
    super('TOTP is already set up for this account; remove it first to set up a new authenticator.');
  }
}

/** Confirm without a set-up in progress (none begun, expired, or the account changed meanwhile). */
export class TotpNotPending extends Refusal {
  readonly code = 'TOTP_NOT_PENDING';
  constructor() {
    super('No TOTP set-up is in progress (it lasts 10 minutes); start again.');
  }
}

export class NotAdministrator extends Refusal {
  readonly code = 'NOT_ADMINISTRATOR';
  constructor() {
    super('This action needs an administrator.');
  }
}

/** The forward URL asks for a level other than ADMINISTRATOR or USER: an operator's typo, refused for everyone. */
export class UnknownLevel extends Refusal {
  readonly code = 'UNKNOWN_LEVEL';
  constructor() {
    super('The proxy asks for an access level that does not exist.');
  }
}

/** The account is in none of the groups the forward URL names (INTERFACE.md "The gate"). */
export class NotInGroup extends Refusal {
  readonly code = 'NOT_IN_GROUP';
  constructor() {
    super('This account is not in a group allowed here.');
  }
}

/** The forward URL's `group=` is not a list of valid group names: an operator's typo, refused for everyone. */
export class InvalidGroupFilter extends Refusal {
  readonly code = 'INVALID_GROUP_FILTER';
  constructor() {
    super('The proxy asks for groups that are not valid group names.');
  }
}

export class TooManyMachineTokens extends Refusal {
  readonly code = 'TOO_MANY_TOKENS';
  constructor() {
    super('This account has as many machine tokens as it may have; revoke one first.');
  }
}

export class MachineTokenNotFound extends Refusal {
  readonly code = 'TOKEN_NOT_FOUND';
  constructor() {
    super('This account has no machine token with that id.');
  }
}

/** A passkey sign-in that does not verify (INTERFACE.md "Signing in"): one answer for every reason, kept in `reason` for the log. */
export class PasskeyRefused extends Refusal {
  readonly code = 'PASSKEY_REFUSED';
  readonly reason: string;
  constructor(reason: string, options?: ErrorOptions) {
    super('The passkey was not accepted.', options);
    this.reason = reason;
  }
}

/** A passkey registration that does not verify; the reason is one of ours, never the client's text. */
export class PasskeyInvalid extends Refusal {
  readonly code = 'PASSKEY_INVALID';
  readonly reason: string;
  constructor(reason: string, options?: ErrorOptions) {
    super(`The passkey could not be added: ${reason}.`, options);
    this.reason = reason;
  }
}

export class PasskeyNotFound extends Refusal {
  readonly code = 'PASSKEY_NOT_FOUND';
  constructor() {
    super('This account has no passkey with that id.');
  }
}

export class TooManyPasskeys extends Refusal {
  readonly code = 'TOO_MANY_PASSKEYS';
  constructor() {
    super('This account has as many passkeys as it may have; remove one first.');
  }
}

export class PasskeyTaken extends Refusal {
  readonly code = 'PASSKEY_ALREADY_REGISTERED';
  constructor() {
    super('This passkey is already registered.');
  }
}

export class RouteNotFound extends Refusal {
  readonly code = 'NOT_FOUND';
  constructor() {
    super('There is nothing at this path.');
  }
}

export class MethodNotAllowed extends Refusal {
  readonly code = 'METHOD_NOT_ALLOWED';
  readonly allow: readonly string[];
  constructor(allow: readonly string[]) {
    super('This path does not answer that method.');
    this.allow = allow;
  }
}

export class UsernameTaken extends Refusal {
  readonly code = 'USERNAME_TAKEN';
  constructor() {
    super('That username is already taken.');
  }
}

export class UserNotFound extends Refusal {
  readonly code = 'USER_NOT_FOUND';
  constructor() {
    super('No user has that username.');
  }
}

export class LastAdministrator extends Refusal {
  readonly code = 'LAST_ADMINISTRATOR';
  constructor() {
    super('The last administrator cannot be deleted or demoted.');
  }
}

export class TooManyAttempts extends Refusal {
  readonly code = 'TOO_MANY_ATTEMPTS';
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('Too many failed logins; try again later.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ServerBusy extends Refusal {
  readonly code = 'SERVER_BUSY';
  readonly retryAfterSeconds = 1;
  constructor() {
    super('The server is busy; try again shortly.');
  }
}

/** A change could not be made durable; nothing was acknowledged. */
export class StoreWriteFailed extends GatehouseError {
  readonly code = 'STORE_WRITE_FAILED';
  constructor(options?: { cause: unknown }) {
    super('The change could not be saved; it was not applied.', options);
  }
}

/** The change is in the file but could not be confirmed durable (directory fsync failed, no rollback). */
export class StoreOutcomeUnknown extends GatehouseError {
  readonly code = 'STORE_OUTCOME_UNKNOWN';
  constructor(options?: { cause: unknown }) {
    super('The change was written but could not be confirmed as saved; check before retrying.', options);
  }
}

/** The store is closed because the service is stopping; nothing was applied. */
export class StoreClosed extends Refusal {
  readonly code = 'SERVICE_STOPPING';
  constructor() {
    super('The service is stopping; the change was not applied.');
  }
}

/** A request that arrived while the service stops (the forward endpoint answers it, nothing else). */
export class ServiceStopping extends Refusal {
  readonly code = 'SERVICE_STOPPING';
  constructor() {
    super('The service is stopping; try again shortly.');
  }
}

/** The client went away (or was cut off by a timeout) before its request was read or served. */
export class ClientAborted extends Refusal {
  readonly code = 'CLIENT_ABORTED';
  constructor() {
    super('The request was abandoned before it was complete.');
  }
}

/** With `--auth none`, a request that did not come through a trusted proxy or loopback. */
export class ProxyRequired extends Refusal {
  readonly code = 'PROXY_REQUIRED';
  constructor() {
    super('Without accounts, this service only answers its authenticating proxy.');
  }
}

/** With no users yet, a registration through a host name nobody listed (DNS rebinding: SECURITY.md). */
export class HostNotAllowed extends Refusal {
  readonly code = 'HOST_NOT_ALLOWED';
  /** `offlineInstruction`: how to create the administrator offline where this service runs (a sentence ending in the command). */
  constructor(offlineInstruction: string) {
    super(`The first administrator can only be registered through localhost, an IP address or a host name listed in --allowed-hosts (GATEHOUSE_ALLOWED_HOSTS). Or create it offline: ${offlineInstruction}`);
  }
}

/** The token was refused; `reason` says why, for tests and debug logs only. */
export class TokenInvalid extends Refusal {
  readonly code = 'AUTH_TOKEN_INVALID';
  readonly reason: string;
  constructor(reason: string) {
    super(`Token refused: ${reason}.`);
    this.reason = reason;
  }
}
