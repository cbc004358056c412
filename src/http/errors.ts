import { GatehouseError, MethodNotAllowed, OAuthRefused, Refusal, ServerBusy, TooManyAttempts, TooManyChallenges } from '../errors.js';
import { NO_STORE, prepareAnswer } from './respond.js';

type Headers = Readonly<Record<string, string>>;

/** A route's error answers: Gatehouse's `{code, message}`, or RFC 6749 section 5.2's `{error, error_description}`
 * (docs/contract/oidc.md, the endpoints an app calls); src/app.ts sends either under one connection policy. */
export type ErrorForm = 'gatehouse' | 'oauth';

type GatehouseErrorBody = Readonly<{ code: string; message: string }>;
type OAuthErrorBody = Readonly<{ error: string; error_description: string }>;

/** An error's answer: `prepared` (status, headers and body, built once) is sent unless the connection must close. */
export interface PublicError<Body = GatehouseErrorBody | OAuthErrorBody> {
  readonly status: number;
  readonly body: Body;
  readonly json: string;
  readonly headers: Headers;
  readonly prepared: ReturnType<typeof prepareAnswer>;
  /** For what the operator must see, with its cause and stack: anything but a Refusal. */
  readonly isLogged: boolean;
}

// RFC 6749 section 5.2: invalid_client is 401 with the scheme the client may authenticate by.
const CLIENT_CHALLENGE = 'Basic realm="Gatehouse", charset="UTF-8"';

const NO_HEADERS: Headers = Object.freeze({});
const INTERNAL = answerOf(500, { code: 'INTERNAL_ERROR', message: 'Something went wrong on the server.' }, NO_HEADERS, true);

// The answer of each error class without headers of its own, kept while its message stays the
// same: a refusal on the hot path (401, 403) builds no object and serializes nothing.
const answerByClass = new WeakMap<object, PublicError<GatehouseErrorBody>>();

/**
 * Maps any thrown value to what the client may see, in the route's form. Unknown errors never echo
 * their message. In the OAuth form only OAuthRefused and TooManyAttempts change shape; any other
 * error is answered as on every route.
 */
export function toPublicError(error: unknown): PublicError<GatehouseErrorBody>;
export function toPublicError(error: unknown, form: ErrorForm): PublicError;
export function toPublicError(error: unknown, form: ErrorForm = 'gatehouse'): PublicError {
  if (form === 'oauth') {
    const answer = oauthAnswerOf(error);
    if (answer !== undefined) return answer;
  }
  if (!(error instanceof GatehouseError)) return INTERNAL;
  const known = answerByClass.get(error.constructor);
  if (known !== undefined && known.body.message === error.message) return known;
  let headers = NO_HEADERS;
  if (error instanceof MethodNotAllowed) headers = { allow: error.allow.join(', ') };
  else if (error instanceof TooManyAttempts || error instanceof ServerBusy || error instanceof TooManyChallenges) {
    headers = { 'retry-after': String(error.retryAfterSeconds) };
  }
  const answer = answerOf(error.status, { code: error.code, message: error.message }, headers, !(error instanceof Refusal));
  if (headers === NO_HEADERS) answerByClass.set(error.constructor, answer);
  return answer;
}

/** RFC 6749 section 5.2's answer for a refusal, and `temporarily_unavailable` (429) for the throttle. */
function oauthAnswerOf(error: unknown): PublicError<OAuthErrorBody> | undefined {
  if (error instanceof TooManyAttempts) {
    const body = { error: 'temporarily_unavailable', error_description: error.message };
    return answerOf(429, body, { ...NO_STORE, 'retry-after': String(error.retryAfterSeconds) }, false);
  }
  if (!(error instanceof OAuthRefused)) return undefined;
  const headers = error.status === 401 ? { ...NO_STORE, 'www-authenticate': CLIENT_CHALLENGE } : NO_STORE;
  return answerOf(error.status, { error: error.error, error_description: error.message }, headers, false);
}

function answerOf<Body>(status: number, body: Body, headers: Headers, isLogged: boolean): PublicError<Body> {
  const json = JSON.stringify(body);
  return Object.freeze({ status, body: Object.freeze(body), json, headers, prepared: prepareAnswer(status, json, headers), isLogged });
}
