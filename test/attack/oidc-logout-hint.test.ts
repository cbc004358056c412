// RP-Initiated Logout 1.0 with an id_token_hint: the hint is the app's word on who is signing out. It
// signs the browser out at once only when it names the account signed in there (its `sub`) and is
// this provider's (expired ones accepted, as the spec allows). Any other hint (another account's, one
// for nobody signed in) gets the page with a "Sign out" button: otherwise any page holding any
// id_token of any account, or an old one found in a log, signs out whoever is signed in.
// RP-Initiated Logout 1.0 section 2 also says the endpoint MUST take POST (a form), judged the same.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertTokenWorks, CLEARED_COOKIE, createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { discover, registerClient, signInThrough, type Discovery, type RegisteredClient } from '../helpers/relying-party.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const AFTER_LOGOUT = 'https://app.example.org/bye';

describe('RP-initiated logout judges the hint against the signed-in account', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: ['https://app.example.org/cb'], postLogoutRedirectUris: [AFTER_LOGOUT] });
  });
  after(() => server.close());

  /** A fresh account signed in, its cookie, and an id_token the app got for it. */
  async function signedIn(): Promise<{ user: TestUser; cookie: string; idToken: string }> {
    const user = await createUser(server, root.token);
    const cookie = (await login(server, user.username, user.password)).cookieToken ?? '';
    const { tokens } = await signInThrough(server, discovery, client, cookie);
    return { user, cookie, idToken: tokens.id_token };
  }

  const headers = { accept: 'text/html', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' };
  const getLogout = (query: Record<string, string>, cookie?: string): Promise<TestResponse> =>
    server.request({ path: `/oidc/logout?${new URLSearchParams(query).toString()}`, headers, ...(cookie === undefined ? {} : { token: cookie }) });
  const postLogout = (form: Record<string, string>, cookie?: string): Promise<TestResponse> =>
    server.request({
      method: 'POST', path: '/oidc/logout', body: new URLSearchParams(form).toString(),
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, ...(cookie === undefined ? {} : { token: cookie }),
    });

  const assertConfirmPage = (response: TestResponse, what: string): void => {
    assert.equal(response.status, 200, `${what}: ${response.text.slice(0, 200)}`);
    assert.match(response.text, />Sign out</, what);
    assert.equal(response.headers['set-cookie'], undefined, what);
  };

  it('another account\'s hint gets the page with a "Sign out" button, and the session goes on', async () => {
    const victim = await signedIn();
    const other = await signedIn();
    const response = await getLogout({ id_token_hint: other.idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 's' }, victim.cookie);
    assertConfirmPage(response, 'another account\'s hint');
    await assertTokenWorks(server, victim.cookie, victim.user.username);
  });

  it('another account\'s expired hint too', async () => {
    const victim = await signedIn();
    const other = await signedIn();
    server.clock.advanceSeconds(7200);
    assertConfirmPage(await getLogout({ id_token_hint: other.idToken }, victim.cookie), 'an expired hint of another account');
    await assertTokenWorks(server, victim.cookie, victim.user.username);
  });

  it('a hint with nobody signed in signs nothing out at once: the page', async () => {
    const { idToken } = await signedIn();
    assertConfirmPage(await getLogout({ id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT }), 'no session');
  });

  it('the signed-in account\'s own hint signs out at once, expired too', async () => {
    const fresh = await signedIn();
    const now = await getLogout({ id_token_hint: fresh.idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 'xyz' }, fresh.cookie);
    assert.equal(now.status, 303, now.text);
    assert.equal(now.headers.location, `${AFTER_LOGOUT}?state=xyz`);
    assert.deepEqual(now.headers['set-cookie'], [CLEARED_COOKIE]);
    const old = await signedIn();
    server.clock.advanceSeconds(7200);
    const later = await getLogout({ id_token_hint: old.idToken }, old.cookie);
    assert.equal(later.status, 200, later.text);
    assert.match(later.text, /signed out of Gatehouse/);
    assert.deepEqual(later.headers['set-cookie'], [CLEARED_COOKIE]);
  });

  it('takes POST (a form) and judges it the same', async () => {
    const own = await signedIn();
    const signedOut = await postLogout({ id_token_hint: own.idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 'p1' }, own.cookie);
    assert.equal(signedOut.status, 303, signedOut.text);
    assert.equal(signedOut.headers.location, `${AFTER_LOGOUT}?state=p1`);
    assert.deepEqual(signedOut.headers['set-cookie'], [CLEARED_COOKIE]);

    // Another account's hint: the page, reached at the GET address with what it needs (never the hint).
    const victim = await signedIn();
    const other = await signedIn();
    const asked = await postLogout({ id_token_hint: other.idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 'p2' }, victim.cookie);
    assert.equal(asked.status, 303, asked.text);
    assert.equal(asked.headers['set-cookie'], undefined);
    const page = new URL(String(asked.headers.location), 'https://auth.example.org/oidc/logout');
    assert.equal(page.pathname, '/oidc/logout');
    assert.deepEqual(Object.fromEntries(page.searchParams), { client_id: client.clientId, post_logout_redirect_uri: AFTER_LOGOUT, state: 'p2' });
    assertConfirmPage(await getLogout(Object.fromEntries(page.searchParams), victim.cookie), 'the page the POST leads to');
    await assertTokenWorks(server, victim.cookie, victim.user.username);

    // client_id and a registered URI, no hint: the same page, returning there.
    const named = await postLogout({ client_id: client.clientId, post_logout_redirect_uri: AFTER_LOGOUT });
    assert.equal(named.status, 303, named.text);
    assert.equal(new URL(String(named.headers.location), 'https://auth.example.org/').searchParams.get('post_logout_redirect_uri'), AFTER_LOGOUT);
  });

  it('refuses a POST that cannot go back to the app with the same 400 page as GET, never a redirect', async () => {
    const { cookie, idToken } = await signedIn();
    for (const form of [{ id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' }, { post_logout_redirect_uri: AFTER_LOGOUT }]) {
      const response = await postLogout(form, cookie);
      assert.equal(response.status, 400, JSON.stringify(form));
      assert.equal(response.headers.location, undefined);
      assert.equal(response.headers['set-cookie'], undefined);
    }
    const json = await server.request({ method: 'POST', path: '/oidc/logout', body: { id_token_hint: idToken }, token: cookie, headers });
    assert.equal(json.status, 400, json.text);
    assert.equal(json.headers['set-cookie'], undefined);
  });
});
