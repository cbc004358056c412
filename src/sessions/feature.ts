import type { Feature } from '../feature.js';
import { SESSIONS_SECTION } from './account-section.js';
import { sessionRoutes } from './routes.js';

/**
 * The sessions people see (docs/contract/links-and-sessions.md "Sessions"): listing and ending them,
 * where there are accounts, and the account page's section that does. The account page is served
 * under authMethod "none" too, so its section is there either way.
 */
export const SESSIONS: Feature = {
  name: 'sessions',
  async open(deps) {
    const sections = { account: [SESSIONS_SECTION] };
    return deps.config.authMethod === 'none' ? { sections } : { routes: sessionRoutes(deps), sections };
  },
};
