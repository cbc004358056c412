// RP-Initiated Logout 1.0 section 2 without a valid id_token_hint (oidc/pages/provider-pages.ts has
// its markup): the person confirms; the server has already checked the query (a
// post_logout_redirect_uri it holds is registered for the client it names), so the script may
// return there afterwards, with the state.
import { byId, callApi, problemOf, say } from '../../../pages/browser/helpers.js';

const query = new URLSearchParams(location.search);
const back = query.get('post_logout_redirect_uri');
const state = query.get('state');
const signOut = byId('sign-out', HTMLButtonElement);
signOut.addEventListener('click', () => {
  signOut.disabled = true;
  void callApi('GET', '../api/auth/logout').then((answer) => {
    // 401: there was no session to end; the person is signed out either way.
    if (!answer.ok && answer.status !== 401) {
      signOut.disabled = false;
      return say(byId('message'), problemOf(answer));
    }
    if (back !== null && back !== '') {
      let target = back;
      if (state !== null && state !== '') target += `${back.indexOf('?') >= 0 ? '&' : '?'}state=${encodeURIComponent(state)}`;
      return location.replace(target);
    }
    signOut.hidden = true;
    byId('done').hidden = false;
    return undefined;
  });
});
