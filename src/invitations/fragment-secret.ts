/**
 * Browser code for the join and reset pages: the link's secret, taken from the URL fragment (which
 * no request carries, so no proxy or app log sees it), and then taken off the address bar, so that
 * it is not left in the history, a bookmark or a screenshot. '' when the fragment holds none.
 */
export const SECRET_FROM_FRAGMENT = `
var secretFromFragment = function () {
  var text = location.hash.replace(/^#/, '');
  if (text !== '' && window.history && history.replaceState) history.replaceState(null, '', location.pathname + location.search);
  try {
    return decodeURIComponent(text).trim();
  } catch (error) {
    return text;
  }
};
`;
