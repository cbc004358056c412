import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credentials } from '../auth/session.js';
import type { BodyUse } from '../http/body-policy.js';

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
