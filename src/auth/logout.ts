import type { RevocationList } from './revocations.js';
import type { Caller } from './session.js';
import type { SessionRecords } from './session-records.js';

/**
 * What logging out ends besides the cookie (docs/contract/flood-api.md "Tokens and cookies"): with
 * `--revoke-on-logout` the token is refused from now on and its session ends; without, nothing,
 * since clients in use log out one session and go on with a copy of its token elsewhere.
 */
export async function endOnLogout(
  deps: { readonly revocations: RevocationList | undefined; readonly sessions: SessionRecords; readonly now: () => number },
  caller: Caller,
): Promise<void> {
  if (deps.revocations === undefined) return;
  await deps.revocations.revoke(caller.token, caller.claims, Math.floor(deps.now() / 1000));
  if (caller.claims.ses !== undefined) await deps.sessions.end(caller.user.username, caller.claims.ses);
}
