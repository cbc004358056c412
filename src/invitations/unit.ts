import { pageRoutes, type PageSection, type Sha256Base64 } from '../pages/shell.js';
import type { Feature } from '../feature.js';
import type { Route, RouteDeps } from '../routes/context.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { buildJoinPage } from './join-page.js';
import { linkStandingOf } from './link-standing.js';
import { openLinkStore } from './links.js';
import { buildResetPage } from './reset-page.js';
import { invitationRoutes } from './routes.js';
import { createLinkService } from './service.js';
import { INVITATIONS_USERS_PAGE } from './users-page-section.js';
import { epochSeconds } from '../time.js';

/**
 * Invitations and reset links, as one feature the composition adds
 * (docs/contract/links-and-sessions.md): its file in the data directory, its routes and pages, its
 * part of the users page. Throws DocumentCorrupt when invitations.json cannot be loaded.
 */
async function openInvitations(
  deps: RouteDeps & { readonly fs: StoreFileSystem; readonly sha256Base64: Sha256Base64; readonly isPasskeyOffered: boolean },
): Promise<{ readonly routes: Route[]; readonly usersPage: PageSection; close(): Promise<void> }> {
  const links = await openLinkStore({
    fs: deps.fs, dataDir: deps.config.dataDir, nowSeconds: () => epochSeconds(deps.now()), stands: linkStandingOf(deps.store),
  });
  return {
    routes: [
      ...invitationRoutes({ ...deps, linkService: createLinkService({ ...deps, links }) }),
      ...pageRoutes('joinPage', buildJoinPage(deps.sha256Base64, {
        minPasswordLength: deps.config.passwordMinimums.gatehouse, isPasskeyOffered: deps.isPasskeyOffered,
      })),
      ...pageRoutes('resetPage', buildResetPage(deps.sha256Base64, { minPasswordLength: deps.config.passwordMinimums.gatehouse })),
    ],
    usersPage: INVITATIONS_USERS_PAGE,
    close: () => links.close(),
  };
}

/** Invitations and reset links make accounts: authMethod "none" has none. */
export const INVITATIONS: Feature = {
  name: 'invitations',
  async open(deps) {
    if (deps.config.authMethod === 'none') return {};
    const invitations = await openInvitations(deps);
    return { routes: invitations.routes, sections: { users: [invitations.usersPage] }, close: invitations.close };
  },
};
