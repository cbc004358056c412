// What the users page's script offers the sections a feature adds (invitations, OpenID Connect's
// sign-in apps): each is a script of its own, placed before the page's, which waits for the page
// with onUsersPage; the page's script calls startUsersSections once it is set up, before it first
// loads the accounts.
import type { JsonObject } from './helpers.js';

export interface UsersPage {
  /** `../api/auth/` + path. */
  api(path: string): string;
  /** The API path of one account. */
  userPath(name: string): string;
  /** Groups typed as "a, b": trimmed, empty parts dropped; undefined (and a message) when one is not a group name. */
  parseGroups(text: string): string[] | undefined;
  isAdministrator(level: unknown): boolean;
  /** A time in milliseconds since the epoch, as the reader's locale writes it; 'never' for none. */
  when(ms: unknown): string;
  plural(count: number, noun: string): string;
  /** A small label; className 'admin' or 'off' colours it. */
  tag(text: string, className?: string): HTMLElement;
  /** Adds buttons of a feature's own to each account's actions (drawn with every load). */
  onAccountActions(draw: (user: JsonObject, actions: HTMLElement) => void): void;
  /** The page's problem message, and its status message (for what was done). */
  readonly problem: HTMLElement;
  readonly status: HTMLElement;
}

const EVENT = 'gatehouse:users-page';

/** For a section's script: runs `init` with the page once the page's script is set up. */
export function onUsersPage(init: (page: UsersPage) => void): void {
  document.addEventListener(EVENT, (event) => {
    // Dispatched only by startUsersSections, with the page as its detail.
    if (event instanceof CustomEvent) init(event.detail as UsersPage);
  });
}

/** For the page's script: hands the page to every section's script that waits for it. */
export function startUsersSections(page: UsersPage): void {
  document.dispatchEvent(new CustomEvent(EVENT, { detail: page }));
}
