import { SESSION_KEY_FORMAT } from '../auth/session-key.js';
import { TooManyInvitations, TooManyResetLinks } from '../errors.js';
import { checkUsername } from '../validate/auth.js';
import {
  fail, isPlainObject, matching, objectOf, oneOf, optional, pass, unixSeconds, type Checked, type Checker, type CheckedType,
} from '../validate/check.js';
import { checkStoredGroups } from '../validate/groups.js';
import { checkAccessLevel } from '../validate/level.js';
import { checkSubject } from '../validate/profile.js';

// docs/contract/links-and-sessions.md "Invitations", "Reset links": one-time links an administrator makes,
// invitations (a new account) and reset links (a new password for one account). The file holds
// only the SHA-256 digest of each link's secret. A link that was used or withdrawn, or has expired,
// stays in the file a while so its page can say which, then goes.

export const LINKS_FILE = 'invitations.json';
/** docs/contract/links-and-sessions.md "Limits": at most 256 open invitations. Reset links are bounded the same way. */
export const MAX_OPEN_LINKS = 256;
/** Links no longer open are remembered this long after they expire, to tell "used" from "unknown". */
export const CLOSED_LINK_RETENTION_SECONDS = 30 * 86_400;
/** All links remembered, open or not; past it the oldest closed ones go first. */
const MAX_LINKS = 4 * MAX_OPEN_LINKS;
export const LINK_ID_FORMAT = /^[A-Za-z0-9_-]{16}$/;
const DIGEST_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** How the API and the users page name the maker of links made with `gatehouse users invite`: whoever holds the data directory. */
const COMMAND_LINE_MAKER = '(command line)';

/**
 * Why a link opens nothing (each has its own message: errors.ts InvitationInvalid). `replaced`: a reset
 * link withdrawn by a newer one for its account; the file says `withdrawn`, the newer link tells them apart.
 */
export type LinkProblem = 'expired' | 'spent' | 'withdrawn' | 'replaced' | 'unknown';

const checkClosed = objectOf(
  { reason: oneOf(['spent', 'withdrawn'] as const), at: unixSeconds },
  { rejectUnknownKeys: true },
);

/**
 * The account that made a link, by its stable id (`sub`, never a name) and its session key then: the
 * link opens only while that account is an administrator under that same key. Demoting, renaming or
 * deleting it replaces the key (as any credential change does, ending its sessions), and a key is
 * never made again, so its links stay withdrawn when it is promoted again or a name is made again.
 */
const checkMaker = objectOf(
  { sub: checkSubject, sessionKey: matching(SESSION_KEY_FORMAT, 'a session key') },
  { rejectUnknownKeys: true },
);
export type LinkMaker = Readonly<CheckedType<typeof checkMaker>>;

const common = {
  id: matching(LINK_ID_FORMAT, 'a link id'),
  /** SHA-256 of the secret, base64url: the secret itself is never stored. */
  digest: matching(DIGEST_FORMAT, 'a digest'),
  createdAt: unixSeconds,
  expiresAt: unixSeconds,
  /**
   * The name of the administrator who made it, as it was then (to show). Absent for a link made on
   * the command line (no name can stand for that: any text may be a username).
   */
  createdBy: optional(checkUsername),
  /**
   * That administrator's account. A link with `createdBy` and no `maker` was made before links named
   * their maker's account: which account made it cannot be known, so it is withdrawn (link-standing.ts).
   */
  maker: optional(checkMaker),
  /** Absent while the link is open. */
  closed: optional(checkClosed),
};

const checkInvitation = objectOf(
  {
    kind: oneOf(['invitation'] as const),
    ...common,
    /** The new account's name, when the invitation fixes it; else the invitee chooses. */
    username: optional(checkUsername),
    level: checkAccessLevel,
    groups: optional(checkStoredGroups),
  },
  { rejectUnknownKeys: true },
);
export type Invitation = Readonly<CheckedType<typeof checkInvitation>>;

const checkResetLink = objectOf(
  {
    kind: oneOf(['reset'] as const),
    ...common,
    username: checkUsername,
    /**
     * The account's session key when the link was made: a credential change since (or a deletion, or
     * a new account of the same name) withdraws the link, so it never resets someone else's password.
     */
    sessionKey: matching(SESSION_KEY_FORMAT, 'a session key'),
  },
  { rejectUnknownKeys: true },
);
export type ResetLink = Readonly<CheckedType<typeof checkResetLink>>;

export type Link = Invitation | ResetLink;
export type LinkKind = Link['kind'];

const checkLink: Checker<Link> = (input, path) => {
  const result = isPlainObject(input) && input['kind'] === 'reset' ? checkResetLink(input, path) : checkInvitation(input, path);
  if (result.ok && result.value.maker !== undefined && result.value.createdBy === undefined) return fail(`${path}.createdBy`, 'must name the maker');
  return result;
};

const checkLinks: Checker<readonly Link[]> = (input, path): Checked<readonly Link[]> => {
  if (!Array.isArray(input) || input.length > MAX_LINKS) return fail(path, `must be an array of at most ${MAX_LINKS} links`);
  const links: Link[] = [];
  const ids = new Set<string>();
  const digests = new Set<string>();
  for (const [index, item] of input.entries()) {
    const result = checkLink(item, `${path}[${index}]`);
    if (!result.ok) return result;
    if (ids.has(result.value.id) || digests.has(result.value.digest)) return fail(`${path}[${index}]`, 'repeats a link');
    ids.add(result.value.id);
    digests.add(result.value.digest);
    links.push(result.value);
  }
  return pass(links);
};

export const checkLinksDocument = objectOf({ format: oneOf([1]), links: checkLinks }, { rejectUnknownKeys: true });
type LinksDocument = Readonly<CheckedType<typeof checkLinksDocument>>;
export const EMPTY_LINKS: LinksDocument = { format: 1, links: [] };

const isOpenLink = (link: Link, nowSeconds: number): boolean => link.closed === undefined && link.expiresAt > nowSeconds;

/**
 * Why `link` (found by its secret's digest, or not found) opens nothing at `nowSeconds`, or undefined
 * when it is open; `links`, the file's, tell a replaced reset link from a withdrawn one. Only a holder
 * of the link's own secret is told: a guess is `unknown`.
 */
export function problemOf(link: Link | undefined, nowSeconds: number, links: readonly Link[]): LinkProblem | undefined {
  if (link === undefined) return 'unknown';
  if (link.closed !== undefined) return wasReplaced(link, links) ? 'replaced' : link.closed.reason;
  return link.expiresAt <= nowSeconds ? 'expired' : undefined;
}

/** A reset link withdrawn by a newer reset link for its account, made when it was closed (withNewLink). */
function wasReplaced(link: Link, links: readonly Link[]): boolean {
  const { closed } = link;
  return link.kind === 'reset' && closed?.reason === 'withdrawn' && links.some((other) =>
    other.kind === 'reset' && other.id !== link.id && other.username === link.username && other.createdAt === closed.at);
}

/**
 * Whether a link still stands as far as the accounts go (links.ts judges it with the users): its
 * maker is still the administrator it was, and a reset link's account the one it was made for.
 * One that does not is withdrawn, for good.
 */
export type LinkStanding = (link: Link) => boolean;

/** The open links, oldest first: not closed, not expired, and standing. */
export function openLinksOf(document: LinksDocument, nowSeconds: number, stands: LinkStanding): Link[] {
  return document.links.filter((link) => isOpenLink(link, nowSeconds) && stands(link));
}

/** The links still worth remembering at `nowSeconds`: open ones, and closed or expired ones within their retention. */
function pruned(links: readonly Link[], nowSeconds: number): Link[] {
  const kept = links.filter((link) => isOpenLink(link, nowSeconds) || link.expiresAt + CLOSED_LINK_RETENTION_SECONDS > nowSeconds);
  // Past the cap the oldest links no longer open go first; open ones are bounded on their own.
  let excess = kept.length - MAX_LINKS;
  if (excess <= 0) return kept;
  return kept.filter((link) => isOpenLink(link, nowSeconds) || excess-- <= 0);
}

/**
 * The document with `link` (new, open) added. A reset link withdraws the account's earlier open one;
 * open links that no longer stand are marked withdrawn. Throws TooManyInvitations or TooManyResetLinks
 * past MAX_OPEN_LINKS open ones of its kind.
 */
export function withNewLink(document: LinksDocument, link: Link, nowSeconds: number, stands: LinkStanding): LinksDocument {
  const links = pruned(document.links, nowSeconds).map((other) => {
    if (!isOpenLink(other, nowSeconds)) return other;
    // A reset link a newer one replaces is closed at the newer one's making, which tells it apart (wasReplaced).
    if (link.kind === 'reset' && other.kind === 'reset' && other.username === link.username) {
      return closedLink(other, 'withdrawn', Math.min(nowSeconds, link.createdAt));
    }
    return stands(other) ? other : closedLink(other, 'withdrawn', nowSeconds);
  });
  if (links.filter((other) => other.kind === link.kind && isOpenLink(other, nowSeconds)).length >= MAX_OPEN_LINKS) {
    throw link.kind === 'reset' ? new TooManyResetLinks() : new TooManyInvitations();
  }
  return { ...document, links: [...links, link] };
}

/** The document with open link `id` (of `kind`, or any) closed for `reason`, or undefined when there is no such open link. */
export function withClosedLink(
  document: LinksDocument, kind: LinkKind | undefined, id: string, reason: 'spent' | 'withdrawn', nowSeconds: number,
): LinksDocument | undefined {
  let isFound = false;
  const links = document.links.map((link) => {
    if (link.id !== id || (kind !== undefined && link.kind !== kind) || !isOpenLink(link, nowSeconds)) return link;
    isFound = true;
    return closedLink(link, reason, nowSeconds);
  });
  return isFound ? { ...document, links } : undefined;
}

/** The document with link `id`, spent, open again: what claiming it was for could not be done. */
export function withReopenedLink(document: LinksDocument, id: string): LinksDocument {
  const links = document.links.map((link) => {
    if (link.id !== id || link.closed?.reason !== 'spent') return link;
    const { closed: _closed, ...open } = link;
    return open;
  });
  return { ...document, links };
}

function closedLink(link: Link, reason: 'spent' | 'withdrawn', nowSeconds: number): Link {
  return { ...link, closed: { reason, at: nowSeconds } };
}

/** An open link as administrators see it, in the API and on the command line: never its digest or a session key. */
export function linkView(link: Link) {
  const common = {
    id: link.id,
    kind: link.kind,
    createdAt: link.createdAt * 1000,
    expiresAt: link.expiresAt * 1000,
    createdBy: link.createdBy ?? COMMAND_LINE_MAKER,
  };
  if (link.kind === 'reset') return { ...common, username: link.username };
  return { ...common, username: link.username ?? null, level: link.level, groups: link.groups ?? [] };
}
