import { GatehouseError, MethodNotAllowed, Refusal, ServerBusy, TooManyAttempts, TooManyChallenges } from '../errors.js';
import { prepareAnswer } from './respond.js';

type Headers = Readonly<Record<string, string>>;

export type PublicError = ReturnType<typeof answerOf>;

const NO_HEADERS: Headers = Object.freeze({});
const INTERNAL = answerOf(500, 'INTERNAL_ERROR', 'Something went wrong on the server.', NO_HEADERS, true);

// The answer of each error class without headers of its own, kept while its message stays the
// same: a refusal on the hot path (401, 403) builds no object and serializes nothing.
const answerByClass = new WeakMap<object, PublicError>();

/** Maps any thrown value to what the client may see. Unknown errors never echo their message. */
export function toPublicError(error: unknown): PublicError {
  if (!(error instanceof GatehouseError)) return INTERNAL;
  const known = answerByClass.get(error.constructor);
  if (known !== undefined && known.body.message === error.message) return known;
  let headers = NO_HEADERS;
  if (error instanceof MethodNotAllowed) headers = { allow: error.allow.join(', ') };
  else if (error instanceof TooManyAttempts || error instanceof ServerBusy || error instanceof TooManyChallenges) {
    headers = { 'retry-after': String(error.retryAfterSeconds) };
  }
  const answer = answerOf(error.status, error.code, error.message, headers, !(error instanceof Refusal));
  if (headers === NO_HEADERS) answerByClass.set(error.constructor, answer);
  return answer;
}

/**
 * An error's answer: the body also as JSON, and `prepared` (status, headers and body, built once) is
 * what is sent unless the connection must close. `isLogged` for what the operator must see, with its
 * cause and stack: anything but a Refusal.
 */
function answerOf(status: number, code: string, message: string, headers: Headers, isLogged: boolean) {
  const body = Object.freeze({ code, message });
  const json = JSON.stringify(body);
  return Object.freeze({ status, body, json, headers, prepared: prepareAnswer(status, json, headers), isLogged });
}
