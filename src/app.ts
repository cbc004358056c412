import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ProxyTrust } from './http/client-address.js';
import { readCookie } from './http/cookies.js';
import { isExpectedError, toPublicError } from './http/errors.js';
import { parseQuery } from './http/query.js';
import { sendJson } from './http/respond.js';
import { createRouter } from './http/router.js';
import type { Logger } from './log/logger.js';
import type { Handler, RequestContext, Route } from './routes/context.js';

export interface AppOptions {
  /** Routes under the base URI (the API). */
  readonly apiRoutes: readonly Route[];
  /** Routes always at the root (health). */
  readonly rootRoutes: readonly Route[];
  readonly baseUri: string;
  readonly proxyTrust: ProxyTrust;
  readonly logger: Logger;
}

/** Builds the request listener. No I/O happens here; everything it needs is passed in. */
export function createApp(options: AppOptions): RequestListener {
  const { baseUri, logger, proxyTrust } = options;
  const router = createRouter<Handler>([
    ...options.rootRoutes,
    ...options.apiRoutes.map((route) => ({ ...route, path: `${baseUri}${route.path}` })),
  ]);
  const isRequestLogged = logger.isEnabled('info');

  const fail = (req: IncomingMessage, res: ServerResponse, path: string, error: unknown): void => {
    if (!isExpectedError(error)) logger.error('request failed', error, { method: req.method, path });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { status, body, headers } = toPublicError(error);
    // A body we did not read to the end would be parsed as the next request: close instead.
    sendJson(res, status, body, req.complete ? headers : Object.assign({}, headers, { connection: 'close' }));
  };

  const logRequest = (req: IncomingMessage, status: number, path: string, address: string, startedAt: number): void => {
    logger.request(req.method ?? '', path, status, Math.round((performance.now() - startedAt) * 100) / 100, address);
  };

  return (req, res) => {
    const startedAt = performance.now();
    const address = proxyTrust.clientAddress(req);
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart < 0 ? url : url.slice(0, queryStart);
    try {
      const match = router.match(req.method ?? 'GET', path);
      const query = queryStart < 0 ? EMPTY_QUERY : parseQuery(url.slice(queryStart + 1));
      const cookieToken = readCookie(req.headers.cookie, 'jwt');
      const queryToken = query['token'];
      const ctx: RequestContext = {
        req,
        res,
        query,
        param: match.param,
        address,
        credentials: {
          cookieToken: cookieToken === '' ? undefined : cookieToken,
          queryToken: queryToken === '' ? undefined : queryToken,
        },
      };
      const pending = match.handler(ctx);
      if (pending !== undefined) pending.catch((error: unknown) => fail(req, res, path, error));
    } catch (error) {
      fail(req, res, path, error);
    }
    if (!isRequestLogged) return;
    // Most answers (verify above all) are written synchronously: log them now rather than
    // paying for a listener per request.
    if (res.writableEnded) logRequest(req, res.statusCode, path, address, startedAt);
    // Status 0 when the connection closed before the whole answer was sent (the client went
    // away, or the stop cut it off): statusCode would still show the 200 node:http presets.
    else res.once('close', () => logRequest(req, res.writableFinished ? res.statusCode : 0, path, address, startedAt));
  };
}

const EMPTY_QUERY: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);
