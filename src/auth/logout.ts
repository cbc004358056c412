import type { RevocationList } from './revocations.js';
import type { Caller } from './session.js';
import type { SessionRecords } from './session-records.js';
import { epochSeconds, type EpochMs } from '../time.js';

/**
 * Who asks to sign out, for what signing out ends (docs/contract/links-and-sessions.md "Signing out"):
 * - `browser`: a person signing out in a browser (`GET {base}/logout`, OpenID Connect's RP logout, or
 *   `GET /api/auth/logout` sent with `Sec-Fetch-Site`, which browsers send to https and localhost only);
 * - `script`: `GET /api/auth/logout` without it: Flood's own test suite, scripts that sign out one copy of a token
 *   and go on with another (docs/contract/flood-api.md "Tokens and cookies"), a browser over plain http elsewhere.
 */
type SignOutBy = 'browser' | 'script';

/**
 * What signing out ends besides the cookie. A browser's sign-out ends the session's record, with or
 * without `--revoke-on-logout`: its cookie and every `?token=` copy are refused from then on, it
 * leaves the sessions list, and what apps got through it ends (session-records.ts). A script's ends
 * nothing more, since clients in use log out one copy and go on with another (the lead's decision,
 * for Flood's own suite, which logs out and then keeps using the same cookie). With
 * `--revoke-on-logout` the token is refused from now on and its session ends, whoever asks.
 * A token without a session record (`ses`: the content token, tokens issued before records
 * existed) is judged as before.
 */
export async function endOnLogout(
  deps: { readonly revocations: RevocationList | undefined; readonly sessions: SessionRecords; readonly now: () => EpochMs },
  caller: Caller,
  by: SignOutBy,
): Promise<void> {
  if (deps.revocations !== undefined) await deps.revocations.revoke(caller.token, caller.claims, epochSeconds(deps.now()));
  const isRecordEnding = by === 'browser' || deps.revocations !== undefined;
  if (isRecordEnding && caller.claims.ses !== undefined) await deps.sessions.end(caller.user.username, caller.claims.ses);
}
