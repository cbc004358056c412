import { sendJson } from '../http/respond.js';
import type { Handler, Route } from './context.js';

/**
 * GET /healthz: 200 while serving, 503 once stopping; nothing else is revealed. The port opens
 * only after the store has loaded, so there is no "starting" answer to give.
 */
export function healthRoutes(isStopping: () => boolean): Route[] {
  const handler: Handler = (ctx) => {
    if (isStopping()) sendJson(ctx.res, 503, { status: 'unavailable' });
    else sendJson(ctx.res, 200, { status: 'ok' });
  };
  return [{ method: 'GET', path: '/healthz', access: 'health', body: 'none', handler }];
}
