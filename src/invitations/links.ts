import { createHash, randomBytes } from 'node:crypto';
import { InvitationInvalid, ResetLinkInvalid } from '../errors.js';
import { openDocumentStore } from '../store/document-store.js';
import type { StoreFileSystem } from '../store/file-system.js';
import type { AccessLevel } from '../validate/level.js';
import {
  checkLinksDocument, EMPTY_LINKS, LINKS_FILE, openLinksOf, problemOf, withClosedLink, withNewLink, withReopenedLink,
  type Invitation, type Link, type LinkKind, type LinkMaker, type LinkProblem, type LinkStanding, type ResetLink,
} from './link-file.js';
import type { EpochSeconds } from '../time.js';

/** A link's secret: 256 random bits, base64url (43 characters), sent only in the link's fragment. */
const LINK_SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;
/** docs/contract/links-and-sessions.md "Invitations", "Reset links": an invitation lasts `days` (1 to 30, default 7); a reset link 24 hours. */
export const RESET_LINK_SECONDS = 86_400;

const digestOf = (secret: string): string => createHash('sha256').update(secret, 'latin1').digest('base64url');

export type LinkStore = Awaited<ReturnType<typeof openLinkStore>>;

/** The administrator making a link: its name now (to show), its account's `sub` and session key. */
export interface MakingAdministrator extends LinkMaker {
  readonly username: string;
}

interface NewInvitation {
  readonly username?: string | undefined;
  readonly level: AccessLevel;
  readonly groups?: readonly string[] | undefined;
  readonly expiresAt: number;
  /** The administrator making it; undefined on the command line. */
  readonly createdBy: MakingAdministrator | undefined;
}

interface NewResetLink {
  readonly username: string;
  readonly sessionKey: string;
  readonly createdBy: MakingAdministrator;
}

const madeBy = (maker: MakingAdministrator | undefined) =>
  (maker === undefined ? {} : { createdBy: maker.username, maker: { sub: maker.sub, sessionKey: maker.sessionKey } });

/** The error a link of `kind` is refused with. */
const invalid = (kind: LinkKind, problem: LinkProblem): Error =>
  kind === 'reset' ? new ResetLinkInvalid(problem) : new InvitationInvalid(problem);

/**
 * Invitations and reset links (link-file.ts) in invitations.json, through the document store: a link
 * is made, withdrawn or spent once the file holds it. Secrets are made here and only their digests
 * kept. A link that no longer `stands` (link-standing.ts) is withdrawn: it opens nothing, is not
 * listed, and is marked so at the next link made. Throws DocumentCorrupt on load.
 */
export async function openLinkStore(deps: { fs: StoreFileSystem; dataDir: string; nowSeconds: () => EpochSeconds; stands: LinkStanding }) {
  const { nowSeconds, stands } = deps;
  /** Why `link` opens nothing now, or undefined; `links` (the file's) tell a replaced reset link apart. */
  const problemNow = (link: Link | undefined, links: readonly Link[] = store.current.links): LinkProblem | undefined =>
    problemOf(link, nowSeconds(), links) ?? (link === undefined || stands(link) ? undefined : 'withdrawn');
  const store = await openDocumentStore({
    fs: deps.fs,
    dataDir: deps.dataDir,
    fileName: LINKS_FILE,
    description: 'invitations file',
    check: checkLinksDocument,
    empty: EMPTY_LINKS,
  });
  // Digest -> link, rebuilt when the file has changed since it was last built.
  let index: { version: number; byDigest: Map<string, Link> } | undefined;
  const linkOf = (secret: string): Link | undefined => {
    if (!LINK_SECRET_FORMAT.test(secret)) return undefined;
    if (index?.version !== store.version) {
      index = { version: store.version, byDigest: new Map(store.current.links.map((link) => [link.digest, link])) };
    }
    return index.byDigest.get(digestOf(secret));
  };

  const make = async (link: (id: string, digest: string, now: number) => Link) => {
    const secret = randomBytes(32).toString('base64url');
    const made = link(randomBytes(12).toString('base64url'), digestOf(secret), nowSeconds());
    await store.change((current) => ({ next: withNewLink(current, made, nowSeconds(), stands), result: undefined }));
    return { id: made.id, secret, expiresAt: made.expiresAt };
  };

  return {
    /** Makes an invitation; resolves with its secret (for the link, never stored) once the file holds it. Throws TooManyInvitations. */
    makeInvitation(invitation: NewInvitation) {
      return make((id, digest, now): Invitation => ({
        kind: 'invitation',
        id,
        digest,
        createdAt: now,
        expiresAt: invitation.expiresAt,
        ...madeBy(invitation.createdBy),
        ...(invitation.username === undefined ? {} : { username: invitation.username }),
        level: invitation.level,
        ...(invitation.groups === undefined || invitation.groups.length === 0 ? {} : { groups: invitation.groups }),
      }));
    },
    /** Makes a reset link good for RESET_LINK_SECONDS, withdrawing the account's earlier one. Throws TooManyResetLinks. */
    makeResetLink(reset: NewResetLink) {
      return make((id, digest, now): ResetLink => ({
        kind: 'reset',
        id,
        digest,
        createdAt: now,
        expiresAt: now + RESET_LINK_SECONDS,
        ...madeBy(reset.createdBy),
        username: reset.username,
        sessionKey: reset.sessionKey,
      }));
    },
    /** The open link of `kind` that `secret` opens, judged in memory; else throws InvitationInvalid or ResetLinkInvalid. */
    find<K extends LinkKind>(kind: K, secret: string): Extract<Link, { kind: K }> {
      const link = linkOf(secret);
      const problem = link === undefined || link.kind !== kind ? 'unknown' : problemNow(link);
      if (problem !== undefined) throw invalid(kind, problem);
      return link as Extract<Link, { kind: K }>;
    },
    /**
     * Spends open link `link` once the file holds it: of parallel claims one wins, the others throw
     * InvitationInvalid or ResetLinkInvalid ("spent"). `stillValid` runs inside the change and may
     * throw to refuse (the link stays open).
     */
    claim<L extends Link>(link: L, stillValid: (link: L) => void = () => undefined): Promise<L> {
      return store.change((current) => {
        const now = nowSeconds();
        const latest = current.links.find((other) => other.id === link.id);
        const problem = latest === undefined ? 'unknown' : problemNow(latest, current.links);
        if (problem !== undefined) throw invalid(link.kind, problem);
        stillValid(latest as L);
        const next = withClosedLink(current, link.kind, link.id, 'spent', now);
        if (next === undefined) throw invalid(link.kind, 'unknown');
        return { next, result: latest as L };
      });
    },
    /** Opens a spent link again, when what it was claimed for could not be done. */
    release(link: Link): Promise<void> {
      return store.change((current) => ({ next: withReopenedLink(current, link.id), result: undefined }));
    },
    /** Withdraws open link `id`, an invitation or a reset link; false when there is no such open link. */
    withdraw(id: string): Promise<boolean> {
      return store.change((current) => {
        const link = current.links.find((other) => other.id === id);
        const next = problemNow(link) === undefined ? withClosedLink(current, undefined, id, 'withdrawn', nowSeconds()) : undefined;
        return next === undefined ? { next: current, result: false } : { next, result: true };
      });
    },
    /** The open links, invitations and reset links, oldest first. */
    openLinks: (): Link[] => openLinksOf(store.current, nowSeconds(), stands),
    close: (): Promise<void> => store.close(),
  };
}
