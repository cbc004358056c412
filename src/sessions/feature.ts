import type { Feature } from '../feature.js';
import { sessionRoutes } from './routes.js';

/** The sessions people see (docs/contract/links-and-sessions.md "Sessions"): listing and ending them, where there are accounts. */
export const SESSIONS: Feature = {
  name: 'sessions',
  async open(deps) {
    return deps.config.authMethod === 'none' ? {} : { routes: sessionRoutes(deps) };
  },
};
