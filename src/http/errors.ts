import * as errors from '../errors.js';
import { prepareAnswer, type PreparedAnswer } from './respond.js';

export interface PublicError {
  readonly status: number;
  readonly body: { readonly code: string; readonly message: string };
  /** The body as JSON, serialized once per kind of error. */
  readonly json: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Status, headers and body, built once: what is sent unless the connection must close. */
  readonly prepared: PreparedAnswer;
  /** True for what the operator must see, logged with its cause and stack: anything but a Refusal. */
  readonly isLogged: boolean;
}

/** The `code` of every concrete error class in errors.ts. */
type ErrorCode = {
  [K in keyof typeof errors]: (typeof errors)[K] extends new (...args: never[]) => infer E ? (E extends errors.GatehouseError ? E['code'] : never) : never;
}[keyof typeof errors];

// The one error -> status table. Typed over every error's code, so a new error class without a
// status does not compile (it would otherwise answer 500 and be logged as unexpected).
// Odd statuses come from the contract: spec section 7 makes a duplicate username and a missing user 500.
const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_FAILED: 400,
  CLIENT_ABORTED: 400, // rarely seen: the client is usually gone
  INVALID_JSON: 400,
  INVALID_PATH_PARAMETER: 400,
  AUTH_REQUIRED: 401,
  AUTH_TOKEN_INVALID: 401, // thrown by TokenCodec.verify; routes use AuthRequired
  INVALID_CREDENTIALS: 401,
  SECOND_FACTOR_REQUIRED: 401, // INTERFACE.md "Signing in"
  INVALID_SECOND_FACTOR: 401, // INTERFACE.md "Signing in": a replayed code is a 401
  WRONG_PASSWORD: 403, // INTERFACE.md "The caller's own account": the session is fine, the password is not
  WRONG_CODE: 403,
  SECOND_FACTOR_SESSION_REQUIRED: 403, // the session is valid, but too weak for this change
  TOTP_ALREADY_ENABLED: 409,
  TOTP_NOT_PENDING: 409,
  NOT_ADMINISTRATOR: 403,
  PROXY_REQUIRED: 403,
  UNKNOWN_LEVEL: 403, // fail closed: the gate cannot know which level was meant
  NOT_IN_GROUP: 403,
  INVALID_GROUP_FILTER: 403, // fail closed, as UNKNOWN_LEVEL (nginx turns a 400 into a 500)
  HOST_NOT_ALLOWED: 403, // SECURITY.md "DNS rebinding"
  NOT_FOUND: 404,
  PASSKEY_REFUSED: 401, // INTERFACE.md "Signing in": 401 for anything that does not verify
  PASSKEY_INVALID: 400,
  PASSKEY_NOT_FOUND: 404,
  TOO_MANY_PASSKEYS: 409,
  PASSKEY_ALREADY_REGISTERED: 409,
  TOKEN_NOT_FOUND: 404,
  TOO_MANY_TOKENS: 409,
  METHOD_NOT_ALLOWED: 405,
  LAST_ADMINISTRATOR: 409, // INTERFACE.md: otherwise the service falls back to its initial condition
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_ATTEMPTS: 429,
  USERNAME_TAKEN: 500, // spec section 7
  USER_NOT_FOUND: 500, // spec section 7
  SERVER_BUSY: 503,
  STORE_WRITE_FAILED: 503,
  STORE_OUTCOME_UNKNOWN: 503,
  SERVICE_STOPPING: 503,
};

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const INTERNAL_BODY = { code: 'INTERNAL_ERROR', message: 'Something went wrong on the server.' } as const;
const INTERNAL_JSON = JSON.stringify(INTERNAL_BODY);
const INTERNAL: PublicError = Object.freeze({ status: 500, body: INTERNAL_BODY, json: INTERNAL_JSON, headers: NO_HEADERS, prepared: prepareAnswer(500, INTERNAL_JSON), isLogged: true });

// The answer of each error class without headers of its own, kept while its message stays the
// same: the refusals on the hot path (401, 403, 404) build no object and serialize nothing.
// One entry per class, so an error whose message varies (ValidationFailed) cannot grow it.
const answerByClass = new WeakMap<object, PublicError>();

/** Maps any thrown value to what the client may see. Unknown errors never echo their message. */
export function toPublicError(error: unknown): PublicError {
  if (!(error instanceof errors.GatehouseError)) return INTERNAL;
  const status = (STATUS_BY_CODE as Readonly<Record<string, number>>)[error.code];
  if (status === undefined) return INTERNAL;
  const isLogged = !(error instanceof errors.Refusal);
  if (error instanceof errors.MethodNotAllowed) return answerOf(status, error, { allow: error.allow.join(', ') }, isLogged);
  if (error instanceof errors.TooManyAttempts || error instanceof errors.ServerBusy) {
    return answerOf(status, error, { 'retry-after': String(error.retryAfterSeconds) }, isLogged);
  }
  const known = answerByClass.get(error.constructor);
  if (known !== undefined && known.body.message === error.message) return known;
  const answer = answerOf(status, error, NO_HEADERS, isLogged);
  answerByClass.set(error.constructor, answer);
  return answer;
}

function answerOf(status: number, error: errors.GatehouseError, headers: Readonly<Record<string, string>>, isLogged: boolean): PublicError {
  const body = Object.freeze({ code: error.code, message: error.message });
  const json = JSON.stringify(body);
  return Object.freeze({ status, body, json, headers, prepared: prepareAnswer(status, json, headers), isLogged });
}
