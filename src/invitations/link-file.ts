import { SESSION_KEY_FORMAT } from '../auth/session-key.js';
import { TooManyInvitations, TooManyResetLinks } from '../errors.js';
import { checkUsername } from '../validate/auth.js';
import {
  fail, isPlainObject, matching, objectOf, oneOf, optional, pass, unixSeconds, type Checked, type Checker, type CheckedType,
} from '../validate/check.js';
import { checkStoredGroups } from '../validate/groups.js';
import { checkAccessLevel } from '../validate/level.js';

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
export const COMMAND_LINE_MAKER = '(command line)';

/** Why a link opens nothing (each has its own message: errors.ts InvitationInvalid). */
export type LinkProblem = 'expired' | 'spent' | 'withdrawn' | 'unknown';

const checkClosed = objectOf(
  { reason: oneOf(['spent', 'withdrawn'] as const), at: unixSeconds },
  { rejectUnknownKeys: true },
);

const common = {
  id: matching(LINK_ID_FORMAT, 'a link id'),
  /** SHA-256 of the secret, base64url: the secret itself is never stored. */
  digest: matching(DIGEST_FORMAT, 'a digest'),
  createdAt: unixSeconds,
  expiresAt: unixSeconds,
  /**
   * The administrator who made it; the link opens only while that account is one. Absent for a link
   * made on the command line (no name can stand for that: any text may be a username).
   */
  createdBy: optional(checkUsername),
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

const checkLink: Checker<Link> = (input, path) =>
  isPlainObject(input) && input['kind'] === 'reset' ? checkResetLink(input, path) : checkInvitation(input, path);

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
export type LinksDocument = Readonly<CheckedType<typeof checkLinksDocument>>;
export const EMPTY_LINKS: LinksDocument = { format: 1, links: [] };

export const isOpenLink = (link: Link, nowSeconds: number): boolean => link.closed === undefined && link.expiresAt > nowSeconds;

/** Why `link` (found by its secret's digest, or not found) opens nothing at `nowSeconds`, or undefined when it is open. */
export function problemOf(link: Link | undefined, nowSeconds: number): LinkProblem | undefined {
  if (link === undefined) return 'unknown';
  if (link.closed !== undefined) return link.closed.reason;
  return link.expiresAt <= nowSeconds ? 'expired' : undefined;
}

/** The open links of one kind, oldest first. */
export function openLinksOf(document: LinksDocument, kind: LinkKind, nowSeconds: number): Link[] {
  return document.links.filter((link) => link.kind === kind && isOpenLink(link, nowSeconds));
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
 * The document with `link` (new, open) added. A reset link withdraws the account's earlier open one.
 * Throws TooManyInvitations or TooManyResetLinks past MAX_OPEN_LINKS open ones of its kind.
 */
export function withNewLink(document: LinksDocument, link: Link, nowSeconds: number): LinksDocument {
  const links = pruned(document.links, nowSeconds).map((other) =>
    link.kind === 'reset' && other.kind === 'reset' && other.username === link.username && isOpenLink(other, nowSeconds)
      ? closedLink(other, 'withdrawn', nowSeconds)
      : other,
  );
  if (links.filter((other) => other.kind === link.kind && isOpenLink(other, nowSeconds)).length >= MAX_OPEN_LINKS) {
    throw link.kind === 'reset' ? new TooManyResetLinks() : new TooManyInvitations();
  }
  return { ...document, links: [...links, link] };
}

/** The document with open link `id` (of `kind`) closed for `reason`, or undefined when there is no such open link. */
export function withClosedLink(
  document: LinksDocument, kind: LinkKind, id: string, reason: 'spent' | 'withdrawn', nowSeconds: number,
): LinksDocument | undefined {
  let isFound = false;
  const links = document.links.map((link) => {
    if (link.id !== id || link.kind !== kind || !isOpenLink(link, nowSeconds)) return link;
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
