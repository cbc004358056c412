import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credentials } from '../auth/session.js';
import { ValidationFailed } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import type { BodyUse } from '../http/body-policy.js';
import type { Checker } from '../validate/check.js';

/** What a handler gets: the parsed pieces of one request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: Readonly<Record<string, string>>;
  /** The raw path parameter, still percent-encoded. */
  readonly param: string | undefined;
  readonly address: string;
  readonly credentials: Credentials;
}

export type Handler = (ctx: RequestContext) => Promise<void> | void;

export interface Route {
  readonly method: string;
  readonly path: string;
  /** What the route does with a request body (http/body-policy.ts); every route says. */
  readonly body: BodyUse;
  readonly handler: Handler;
}

/** The request's JSON body as `check` accepts it; else throws ValidationFailed with the problems. */
export async function readCheckedBody<T>(ctx: RequestContext, check: Checker<T>, maxBodyBytes: number): Promise<T> {
  const result = check(await readJsonBody(ctx.req, maxBodyBytes), '');
  if (!result.ok) throw new ValidationFailed(result.problems);
  return result.value;
}
