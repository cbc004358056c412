import { OAuthRefused } from '../../errors.js';
import { receiveBody } from '../../http/body.js';
import type { RequestContext } from '../../routes/context.js';
import { isFormContentType, parseForm, type FormParameters } from '../form.js';

// What the provider's endpoints share on the wire: form bodies in. Their RFC 6749 section 5.2 error
// answers are built by http/errors.ts (a route with `errorForm: 'oauth'`) and sent by src/app.ts,
// under the connection policy of every error answer.

/** Far above any token, revocation or authorize request; the form is read before any client is known. */
const MAX_FORM_BYTES = 16 * 1024;

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
