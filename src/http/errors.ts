import * as errors from '../errors.js';

export interface PublicError {
  readonly status: number;
  readonly body: { readonly code: string; readonly message: string };
  readonly headers: Readonly<Record<string, string>>;
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
  NOT_ADMINISTRATOR: 403,
  PROXY_REQUIRED: 403,
  UNKNOWN_LEVEL: 403, // fail closed: the gate cannot know which level was meant
  HOST_NOT_ALLOWED: 403, // SECURITY.md "DNS rebinding"
  NOT_FOUND: 404,
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

const INTERNAL: PublicError = {
  status: 500,
  body: { code: 'INTERNAL_ERROR', message: 'Something went wrong on the server.' },
  headers: {},
};

/** Maps any thrown value to what the client may see. Unknown errors never echo their message. */
export function toPublicError(error: unknown): PublicError {
  if (!(error instanceof errors.GatehouseError)) return INTERNAL;
  const status = (STATUS_BY_CODE as Readonly<Record<string, number>>)[error.code];
  if (status === undefined) return INTERNAL;
  const headers: Record<string, string> = {};
  if (error instanceof errors.MethodNotAllowed) headers['allow'] = error.allow.join(', ');
  if (error instanceof errors.TooManyAttempts || error instanceof errors.ServerBusy) {
    headers['retry-after'] = String(error.retryAfterSeconds);
  }
  return { status, body: { code: error.code, message: error.message }, headers };
}

/** True for errors we expect from clients; anything else is logged with its cause. */
export function isExpectedError(error: unknown): boolean {
  return error instanceof errors.GatehouseError && toPublicError(error) !== INTERNAL && error.code !== 'STORE_WRITE_FAILED' && error.code !== 'STORE_OUTCOME_UNKNOWN';
}
