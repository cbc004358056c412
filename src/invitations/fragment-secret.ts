/**
 * Browser code for the join and reset pages: the link's secret, taken from the URL fragment (which
 * no request carries, so no proxy or app log sees it, nor a Referer), and then taken off the address
 * bar, so that it is not left in a bookmark, a copied address or a screenshot. It stays in this tab's
 * history entry (history.state, which no other page and no request can read), so a reload finds it
 * again; a spent or refused secret opens nothing, so it may stay there. '' when neither holds one.
 */
export const SECRET_FROM_FRAGMENT = `
var secretFromFragment = function () {
  var text = location.hash.replace(/^#/, '');
  var kept = window.history && history.state !== null && typeof history.state === 'object' && typeof history.state.linkSecret === 'string'
    ? history.state.linkSecret
    : '';
  if (text === '') text = kept;
  if (text !== '' && window.history && history.replaceState) history.replaceState({ linkSecret: text }, '', location.pathname + location.search);
  try {
    return decodeURIComponent(text).trim();
  } catch (error) {
    return text;
  }
};
`;

/**
 * Browser code for the join and reset pages, after SECRET_FROM_FRAGMENT and with the page's \`form\`
 * and \`problem\`: a refused link shows its own message (expired, used, withdrawn, replaced, unknown,
 * too many attempts), nothing to fill in, and the way to the sign-in page (#refused-next); NO_SECRET
 * is the answer for a link without its secret.
 */
export const REFUSED_LINK = `
var refuse = function (answer) {
  byId('loading').hidden = true;
  form.hidden = true;
  say(problem, answer.status === 429 ? 'Too many attempts from here; try again later.' : problemOf(answer));
  byId('refused-next').hidden = false;
};
var NO_SECRET = { status: 401, body: { message: 'This link is not valid; check that the whole link was copied.' } };
`;
