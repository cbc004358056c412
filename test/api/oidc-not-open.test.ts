// A signed-in account an app's groups refuse (docs/contract/oidc.md, authorize), over real HTTP:
// Gatehouse's own page instead of an instant access_denied: who is signed in, that this app is not
// open to that account, a way to sign in as someone else (the same-origin sign-out, which comes back
// to the same authorization) and a way back to the app with access_denied, its state and iss.
// prompt=none keeps the redirect.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertTokenRefused, CLEARED_COOKIE, createUser, login as signIn, startPopulatedServer, updateUser, type TestUser } from '../helpers/api.js';
import {
  authorizationRequest, callbackOf, discover, followAuthorization, pathOf, registerClient, signInThrough,
  type Discovery, type RegisteredClient,
} from '../helpers/relying-party.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const ISSUER = 'https://auth.example.org';
const REDIRECT = 'https://app.example.org/cb?tenant=1';

/** The href of the link whose text is `text`, HTML entities undone. */
function hrefOf(page: string, text: string): string {
  const link = new RegExp(`<a [^>]*href="([^"]*)"[^>]*>${text}</a>`).exec(page);
  assert.ok(link !== null, `no link "${text}" in ${page}`);
  return (link[1] ?? '').replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

describe('an app not open to the signed-in account', () => {
  let server: TestServer;
  let root: TestUser;
  let outsider: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: ISSUER }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { name: 'Media <b>"&\' app', redirectUris: [REDIRECT], groups: ['media'] });
    outsider = await createUser(server, root.token, { prefix: 'outsider' });
  });
  after(() => server.close());

  const pageFor = async (extra: Record<string, string> = {}): Promise<{ response: TestResponse; url: string; state: string }> => {
    const attempt = authorizationRequest(discovery, client, { extra });
    const response = await server.request({ path: pathOf(attempt.url), token: outsider.token, headers: { accept: 'text/html' } });
    return { response, url: attempt.url, state: attempt.state };
  };

  it('shows a 403 page naming the account and the app, with no redirect and no script', async () => {
    const { response } = await pageFor();
    assert.equal(response.status, 403, response.text.slice(0, 300));
    assert.equal(response.headers.location, undefined);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.ok(response.text.includes(`<strong id="username">${outsider.username}</strong>`), response.text);
    // The app's name is the administrator's text: escaped, never markup.
    assert.ok(response.text.includes('Media &lt;b&gt;&quot;&amp;&#39; app'), response.text);
    assert.ok(!response.text.includes('<b>"'));
    assert.match(response.text, /is not open to your account/);
    assert.match(String(response.headers['content-security-policy']), /script-src 'none'; /);
    assert.doesNotMatch(response.text, /<script/);
  });

  it('"Back to the app" returns access_denied to the registered redirect URI, with the state and iss', async () => {
    const { response, state } = await pageFor();
    const back = new URL(hrefOf(response.text, 'Back to the app'));
    assert.equal(`${back.origin}${back.pathname}`, 'https://app.example.org/cb');
    assert.equal(back.searchParams.get('tenant'), '1');
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), state);
    assert.equal(back.searchParams.get('iss'), ISSUER);
    assert.equal(back.searchParams.get('code'), null);
  });

  it('"Sign in as someone else" signs out (a same-origin navigation) and comes back to the same authorization', async () => {
    const { response, url } = await pageFor();
    const switchHref = hrefOf(response.text, 'Sign in as someone else');
    const signOut = new URL(switchHref, `${ISSUER}/oidc/authorize`);
    assert.equal(signOut.pathname, '/logout');
    const rd = signOut.searchParams.get('rd') ?? '';
    assert.ok(rd.startsWith('oidc/authorize?'), rd);
    assert.deepEqual(new URLSearchParams(rd.slice(rd.indexOf('?') + 1)), new URL(url).searchParams);
    // A cross-site navigation to it signs nothing out (its own page asks); this one is same-origin.
    // Signing out ends the session (docs/contract/links-and-sessions.md "Signing out"): a session of
    // its own, so the other tests keep theirs.
    const leaving = (await signIn(server, outsider.username, outsider.password)).cookieToken ?? '';
    const sameOrigin = await server.request({
      path: `${signOut.pathname}${signOut.search}`, token: leaving,
      headers: { accept: 'text/html', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' },
    });
    assert.equal(sameOrigin.status, 303);
    assert.deepEqual(sameOrigin.headers['set-cookie'], [CLEARED_COOKIE]);
    await assertTokenRefused(server, leaving);
    const login = new URL(String(sameOrigin.headers.location), `${ISSUER}/logout`);
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('rd'), rd);
    // Whoever signs in next is sent back to the same request: a member gets a code.
    const member = await createUser(server, root.token, { prefix: 'member' });
    assert.equal((await updateUser(server, root.token, member.username, { groups: ['media'] })).status, 200);
    const again = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: member.username, password: member.password } });
    const answer = await server.request({ path: `/${rd}`, token: again.cookieToken ?? '', headers: { accept: 'text/html' } });
    assert.equal(answer.status, 303);
    assert.ok(new URL(String(answer.headers.location)).searchParams.get('code') !== null);
  });

  it('a form POST to authorize gets the same page', async () => {
    const attempt = authorizationRequest(discovery, client);
    const response = await server.request({
      method: 'POST', path: '/oidc/authorize', token: outsider.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, body: new URL(attempt.url).search.slice(1),
    });
    assert.equal(response.status, 403);
    assert.ok(response.text.includes(outsider.username));
  });

  it('prompt=none keeps the redirect with access_denied, the state and iss: no page', async () => {
    const attempt = authorizationRequest(discovery, client, { extra: { prompt: 'none' } });
    const { location } = await followAuthorization(server, attempt, outsider.token);
    assert.equal(callbackOf(location, attempt, discovery).get('error'), 'access_denied');
  });

  it('a member of the app\'s groups still gets a code at once', async () => {
    const member = await createUser(server, root.token, { prefix: 'insider' });
    assert.equal((await updateUser(server, root.token, member.username, { groups: ['media'] })).status, 200);
    const session = await server.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: member.username, password: member.password } });
    await signInThrough(server, discovery, client, session.cookieToken ?? '');
  });
});
