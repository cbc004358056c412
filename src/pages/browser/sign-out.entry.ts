// The sign-out page another site's navigation gets ({base}/logout; routes/logout-page.ts has its
// markup): its button signs out with a same-origin call, which passes the cross-site rule, then
// goes to the sign-in page, passing `rd` on; "Stay signed in" goes there too, signed in.
import { byId, callApi, problemOf, say } from './helpers.js';

const rd = new URLSearchParams(location.search).get('rd');
byId('stay', HTMLAnchorElement).href = rd !== null && rd !== '' ? `login?rd=${encodeURIComponent(rd)}` : 'login';
byId('sign-out').addEventListener('click', () => {
  void callApi('GET', 'api/auth/logout').then((answer) => {
    if (answer.ok || answer.status === 401) location.assign(rd !== null && rd !== '' ? `login?signed_out=1&rd=${encodeURIComponent(rd)}` : 'login?signed_out=1');
    else say(byId('message'), problemOf(answer), '');
  });
});
