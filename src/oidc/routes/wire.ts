import type { ServerResponse } from 'node:http';
import { OAuthRefused, TooManyAttempts } from '../../errors.js';
import { receiveBody } from '../../http/body.js';
import { sendJson } from '../../http/respond.js';
import type { RequestContext } from '../../routes/context.js';
import { isFormContentType, parseForm, type FormParameters } from '../form.js';

// What the provider's endpoints share on the wire: form bodies in, RFC 6749 section 5 answers out.

/** Far above any token, revocation or authorize request; the form is read before any client is known. */
const MAX_FORM_BYTES = 16 * 1024;

/** RFC 6749 section 5.1: token answers are never stored by a cache. */
export const NO_STORE = Object.freeze({ 'cache-control': 'no-store', pragma: 'no-cache' });

/** The request's form body, parsed strictly; throws OAuthRefused invalid_request (a JSON or empty body included). */
export async function readFormBody(ctx: RequestContext, maxBodyBytes: number): Promise<FormParameters> {
  if (!isFormContentType(ctx.req.headers['content-type'])) {
    throw new OAuthRefused('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  const chunks: Buffer[] = [];
  const length = await receiveBody(ctx.req, Math.min(maxBodyBytes, MAX_FORM_BYTES), chunks);
  // Latin-1 keeps every byte as one character: anything not visible ASCII is refused by the parser.
  const parsed = parseForm(Buffer.concat(chunks, length).toString('latin1'));
  if (!parsed.ok) throw new OAuthRefused('invalid_request', `The form holds ${parsed.problem}.`);
  return parsed.parameters;
}

/** The query string of the request (without "?"), parsed strictly; undefined when it is not a good form. */
export function strictQuery(ctx: RequestContext): FormParameters | undefined {
  const url = ctx.req.url ?? '';
  const start = url.indexOf('?');
  const parsed = parseForm(start < 0 ? '' : url.slice(start + 1));
  return parsed.ok ? parsed.parameters : undefined;
}

/**
 * An RFC 6749 section 5.2 error answer for OAuthRefused (401 with WWW-Authenticate for invalid_client)
 * or TooManyAttempts (429 with Retry-After); anything else is rethrown for the app's error answer.
 */
export function sendOAuthError(res: ServerResponse, error: unknown): void {
  if (error instanceof TooManyAttempts) {
    sendJson(res, 429, { error: 'temporarily_unavailable', error_description: error.message },
      { ...NO_STORE, 'retry-after': String(error.retryAfterSeconds) });
    return;
  }
  if (!(error instanceof OAuthRefused)) throw error;
  const challenge = error.status === 401 ? { 'www-authenticate': 'Basic realm="Gatehouse", charset="UTF-8"' } : {};
  sendJson(res, error.status, { error: error.error, error_description: error.message }, { ...NO_STORE, ...challenge });
}
