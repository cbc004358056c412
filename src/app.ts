import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ACCESS, type AccessRow } from './auth/access.js';
import type { Judge } from './auth/judge.js';
import { MethodNotAllowed, RouteNotFound } from './errors.js';
import { announcesBody } from './http/body.js';
import { createBodyPolicy } from './http/body-policy.js';
import type { ProxyTrust } from './http/client-address.js';
import { readCookie } from './http/cookies.js';
import { toPublicError, type ErrorForm, type PublicError } from './http/errors.js';
import { isLingering, type LingerLimits } from './http/lingering-close.js';
import { parseQuery } from './http/query.js';
import { sendPrepared, sendRawJson } from './http/respond.js';
import { createRouter, type RouteMissing } from './http/router.js';
import type { Logger } from './log/logger.js';
import type { AccountPageElsewhere } from './pages/elsewhere.js';
import type { RequestContext, Route } from './routes/context.js';

interface AppOptions {
  /** Routes under the base URI (the API). */
  readonly apiRoutes: readonly Route[];
  /** Routes always at the root (health). */
  readonly rootRoutes: readonly Route[];
  readonly baseUri: string;
  /** Admits every request by its route's row of the access table before the handler runs. */
  readonly judge: Judge;
  readonly proxyTrust: ProxyTrust;
  readonly logger: Logger;
  /** The body cap: also what a route that takes no body reads and drops at most. */
  readonly maxBodyBytes: number;
  /** Answers a page under {base}/gatehouse/ refused on an app's origin (instead of the 403), or returns false. */
  readonly accountPageElsewhere: AccountPageElsewhere;
  /** How a connection closed under a client still sending lingers; tests shorten it. */
  readonly lingerLimits?: LingerLimits;
}

/**
 * Builds node:http's 'request' listener and its 'checkContinue' listener (the same, for a request
 * that waits for 100 Continue). No I/O happens here; everything it needs is passed in.
 */
export function createApp(options: AppOptions) {
  const { baseUri, logger, proxyTrust } = options;
  const entryOf = (route: Route, path: string) => ({ method: route.method, path, handler: withRowOf(route) });
  const router = createRouter([
    ...options.rootRoutes.map((route) => entryOf(route, route.path)),
    ...options.apiRoutes.map((route) => entryOf(route, `${baseUri}${route.path}`)),
  ]);
  const bodyPolicy = createBodyPolicy(options.maxBodyBytes, options.lingerLimits);
  const isRequestLogged = logger.isEnabled('info');

  const sendError = (req: IncomingMessage, res: ServerResponse, answer: PublicError): void => {
    // A body still arriving would be parsed as the next request: close (gracefully) instead.
    if (bodyPolicy.closeIfBodyPending(req)) {
      sendRawJson(res, answer.status, answer.json, Object.assign({}, answer.headers, { connection: 'close' }));
    } else {
      sendPrepared(res, answer.prepared);
    }
  };

  const fail = (req: IncomingMessage, res: ServerResponse, path: string, error: unknown, form: ErrorForm = 'gatehouse'): void => {
    if (options.accountPageElsewhere(req, res, path, error)) return;
    const answer = toPublicError(error, form);
    if (answer.isLogged) logger.error('request failed', error, { method: req.method, path });
    if (res.headersSent) res.destroy();
    else sendError(req, res, answer);
  };

  // 404 and 405 are answered without an error thrown: the answers are built once (405: per path).
  const notFound = toPublicError(new RouteNotFound());
  const notAllowed = new Map<readonly string[], PublicError>();
  const answerOfMiss = (miss: RouteMissing): PublicError => {
    if (miss.allow === undefined) return notFound;
    let answer = notAllowed.get(miss.allow);
    if (answer === undefined) {
      answer = toPublicError(new MethodNotAllowed(miss.allow));
      notAllowed.set(miss.allow, answer);
    }
    return answer;
  };

  const logRequest = (req: IncomingMessage, status: number, path: string, address: string, startedAt: number): void => {
    logger.request(req.method ?? '', path, status, Math.round((performance.now() - startedAt) * 100) / 100, address);
  };

  const dispatch = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
    // A request the parser read behind one that was refused with a lingering close: its client
    // was told the connection closes, so it is dropped unanswered, never served.
    if (isLingering(req.socket)) return;
    const startedAt = performance.now();
    const address = proxyTrust.clientAddress(req);
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart < 0 ? url : url.slice(0, queryStart);
    let form: ErrorForm | undefined;
    try {
      const match = router.match(req.method ?? 'GET', path);
      if (match.handler === undefined) {
        sendError(req, res, answerOfMiss(match));
      } else {
        const { route, row } = match.handler;
        form = route.errorForm;
        const query = queryStart < 0 ? EMPTY_QUERY : parseQuery(url.slice(queryStart + 1));
        // An empty cookie or `token=` is no credential.
        const cookieToken = readCookie(req.headers.cookie, 'jwt') || undefined;
        const credentials = { cookieToken, queryToken: query['token'] || undefined };
        const admission = options.judge.admit(row, req, credentials, address);
        const ctx: RequestContext = { req, res, query, params: match.params, address, credentials, row, admission };
        // Most requests announce no body and expect nothing: the handler runs at once.
        const admitted = expectsContinue || announcesBody(req)
          ? bodyPolicy.admit(route.body, req, res, expectsContinue)
          : undefined;
        const pending = admitted === undefined ? route.handler(ctx) : admitted.then(() => route.handler(ctx));
        if (pending !== undefined) pending.catch((error: unknown) => fail(req, res, path, error, form));
      }
    } catch (error) {
      fail(req, res, path, error, form);
    }
    if (!isRequestLogged) return;
    // Most answers (verify above all) are written synchronously: log them now rather than
    // paying for a listener per request.
    if (res.writableEnded) logRequest(req, res.statusCode, path, address, startedAt);
    // Status 0 when the connection closed before the whole answer was sent (the client went
    // away, or the stop cut it off): statusCode would still show the 200 node:http presets.
    else res.once('close', () => logRequest(req, res.writableFinished ? res.statusCode : 0, path, address, startedAt));
  };

  const handleRequest: RequestListener = (req, res) => dispatch(req, res, false);
  const handleCheckContinue: RequestListener = (req, res) => dispatch(req, res, true);
  return { handleRequest, handleCheckContinue };
}

/** A route with its row of the access table (auth/access.ts), looked up once. */
function withRowOf(route: Route): { readonly route: Route; readonly row: AccessRow } {
  return { route, row: ACCESS[route.access] };
}

const EMPTY_QUERY: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);
