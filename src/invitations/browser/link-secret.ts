// What the join and reset pages share: the link's secret, taken from the URL fragment (which no
// request carries, so no proxy or app log sees it, nor a Referer), and then taken off the address
// bar, so that it is not left in a bookmark, a copied address or a screenshot. It stays in this
// tab's history entry (history.state, which no other page and no request can read), so a reload
// finds it again; a spent or refused secret opens nothing, so it may stay there.
import { byId, isObject, problemOf, say, type Answer } from '../../pages/browser/helpers.js';

/** The secret of the link that opened this page; '' when neither the fragment nor the history entry holds one. */
export function secretFromFragment(): string {
  let text = location.hash.replace(/^#/, '');
  const state: unknown = history.state;
  const kept = isObject(state) && typeof state['linkSecret'] === 'string' ? state['linkSecret'] : '';
  if (text === '') text = kept;
  if (text !== '') history.replaceState({ linkSecret: text }, '', location.pathname + location.search);
  try {
    return decodeURIComponent(text).trim();
  } catch {
    return text;
  }
}

/** The answer for a link without its secret. */
export const NO_SECRET: Answer = { status: 401, ok: false, body: { message: 'This link is not valid; check that the whole link was copied.' } };

/**
 * A refused link: its own message (expired, used, withdrawn, replaced, unknown, too many
 * attempts), nothing to fill in, and the way to the sign-in page (#refused-next).
 */
export function refuse(form: HTMLElement, problem: HTMLElement, answer: Answer): void {
  byId('loading').hidden = true;
  form.hidden = true;
  say(problem, answer.status === 429 ? 'Too many attempts from here; try again later.' : problemOf(answer));
  byId('refused-next').hidden = false;
}
