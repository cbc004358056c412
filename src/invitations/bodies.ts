import { checkNewUsername, passwordChecker } from '../validate/auth.js';
import { integerIn, objectOf, optional, stringOf, type Checker } from '../validate/check.js';
import { checkGroups } from '../validate/groups.js';
import { checkAccessLevel } from '../validate/level.js';

// docs/contract/links-and-sessions.md "Invitations", "Reset links": what the invitation and reset routes take.

export const MAX_INVITATION_DAYS = 30;
export const DEFAULT_INVITATION_DAYS = 7;

/** POST /api/auth/invites: the name it fixes (else the invitee chooses), level, groups, lifetime in days. */
export const checkNewInvitationBody = objectOf({
  username: optional(checkNewUsername),
  level: checkAccessLevel,
  groups: optional(checkGroups),
  days: optional(integerIn(1, MAX_INVITATION_DAYS)),
});

/**
 * A link's secret as sent back by its page. Any string up to a bound is taken: one that is not a
 * secret we could have made is judged "unknown" (and counted by the throttle), not a 400, so a
 * mangled link gets the same answer as a wrong one.
 */
const checkSecret = stringOf({ minLength: 1, maxLength: 256, allowControlCharacters: true });

/** POST /api/auth/join/check and /api/auth/reset/check: what the link is, before anything is typed. */
export const checkSecretBody = objectOf({ secret: checkSecret });

/** POST /api/auth/join: the secret, the name when the invitation leaves it to the invitee, the password. */
export function joinBodyChecker(minPasswordLength: number) {
  return objectOf({
    secret: checkSecret,
    username: optional(checkNewUsername),
    password: passwordChecker(minPasswordLength),
  });
}

/** POST /api/auth/reset: the secret and the new password. */
export function resetBodyChecker(minPasswordLength: number): Checker<{ secret: string; password: string }> {
  return objectOf({ secret: checkSecret, password: passwordChecker(minPasswordLength) });
}
