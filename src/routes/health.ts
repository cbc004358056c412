import { sendJson } from '../http/respond.js';
import type { Route } from './context.js';

export type Lifecycle = 'starting' | 'ready' | 'stopping';

/** GET /healthz: 200 once the store is loaded, 503 while starting or stopping; nothing else is revealed. */
export function healthRoutes(state: () => Lifecycle): Route[] {
  return [
    {
      method: 'GET',
      path: '/healthz',
      handler: (ctx) => (state() === 'ready' ? sendJson(ctx.res, 200, { status: 'ok' }) : sendJson(ctx.res, 503, { status: 'unavailable' })),
    },
  ];
}
