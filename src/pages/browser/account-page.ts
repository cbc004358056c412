// What the account page's script offers its sections, its own (machine tokens) and those the features
// add (authenticator app, passkeys, name and e-mail, sessions): each feature's section is a script of
// its own, placed before the page's, which waits for the page with onAccountPage; the page's script
// calls startSections once it is set up, before it first loads the account.
import type { Answer, JsonObject } from './helpers.js';

export interface AccountPage {
  /** Runs `draw` with every account loaded (GET ../api/auth/account), in the order sections asked. */
  onAccount(draw: (account: JsonObject) => void): void;
  /** Runs `load` after every account loaded and drawn (the sessions, asked only then); reload waits for it. */
  afterAccount(load: () => Promise<void>): void;
  /** The account as last loaded, or null before it is. */
  account(): JsonObject | null;
  /** Loads the account again and draws it; a caller without a session goes to sign in. */
  reload(): Promise<void>;
  /** One call from a form or a button: its message cleared first; a lost session goes to sign in. */
  send(form: HTMLFormElement | null, message: HTMLElement, method: string, path: string, body?: unknown): Promise<Answer>;
  /**
   * One change: the call, then the account drawn again, then its message (a 'done' says so only
   * once the page shows what was done). Resolves with the answer.
   */
  change(form: HTMLFormElement | null, message: HTMLElement, method: string, path: string, body: unknown, doneText: string): Promise<Answer>;
  /** To the sign-in page, and back here after. */
  toSignIn(): void;
  /** A time from an answer (seconds or milliseconds since the epoch, or a date), as the reader's locale writes it. */
  when(value: unknown): string;
  /** Replaces the children of `parent` with `entries`; `empty` shows when there are none. */
  fill(parent: HTMLElement, entries: readonly HTMLElement[], empty?: HTMLElement): void;
  /** A list item with a title, details and a remove button that a second click confirms. */
  item(title: string, details: string, verb: string, label: string, onRemove: () => void): HTMLElement;
  /** `action` on a second click of `target` (no dialog: a removal is one deliberate step more). */
  onSecondClick(target: HTMLButtonElement, armedText: string, action: () => void): void;
  /** Whether this server offers passkeys (the page's data). */
  readonly passkeysOffered: boolean;
}

const EVENT = 'gatehouse:account-page';

/** For a section's script: runs `init` with the page once the page's script is set up. */
export function onAccountPage(init: (page: AccountPage) => void): void {
  document.addEventListener(EVENT, (event) => {
    // Dispatched only by startSections, with the page as its detail.
    if (event instanceof CustomEvent) init(event.detail as AccountPage);
  });
}

/** For the page's script: hands the page to every section's script that waits for it. */
export function startSections(page: AccountPage): void {
  document.dispatchEvent(new CustomEvent(EVENT, { detail: page }));
}
