import type { StoredUser, UserStore } from '../store/users.js';
import { isAdministrator } from '../validate/level.js';
import type { LinkStanding } from './link-file.js';

/**
 * How links stand with the accounts `users` holds now (docs/contract/links-and-sessions.md "Links and
 * their maker"). A link made by an administrator stands while the account it names by `sub` is an
 * administrator under the session key it had then: demoted, renamed or deleted, it has another key
 * (or none), and since keys are random and never made twice, its links stay withdrawn if it is promoted
 * again or its name is made again. A link that names its maker by name only (made before links named
 * an account) stands no more: whose it was cannot be known. One made on the command line names no
 * maker and stands. A reset link also needs its account to be the one it was made for.
 */
export function linkStandingOf(users: Pick<UserStore, 'find' | 'list' | 'version'>): LinkStanding {
  // Accounts by sub, rebuilt when the users have changed since it was built.
  let index: { version: number; bySub: Map<string, StoredUser> } | undefined;
  const accountOf = (sub: string): StoredUser | undefined => {
    if (index?.version !== users.version) {
      const bySub = new Map<string, StoredUser>();
      for (const user of users.list()) if (user.sub !== undefined) bySub.set(user.sub, user);
      index = { version: users.version, bySub };
    }
    return index.bySub.get(sub);
  };
  return (link) => {
    if (link.maker === undefined) {
      if (link.createdBy !== undefined) return false;
    } else {
      const maker = accountOf(link.maker.sub);
      if (maker === undefined || !isAdministrator(maker.level) || maker.sessionKey !== link.maker.sessionKey) return false;
    }
    return link.kind !== 'reset' || users.find(link.username)?.sessionKey === link.sessionKey;
  };
}
