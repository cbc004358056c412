// prompt=login and max_age (OpenID Connect Core section 3.1.2.1) ask for a new sign-in: the sign-in
// page returns to authorize with a mark saying after which moment a session counts as new. The mark
// travels in the URL, so whoever sends the browser to authorize (someone at a signed-in browser, a
// page that starts the app's sign-in) can write it too: one written by hand must count for nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claimsOf, createUser, login, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { authorizationRequest, discover, followAuthorization, registerClient, type Discovery, type RegisteredClient } from '../helpers/relying-party.js';
import type { TestServer } from '../helpers/server.js';

describe('the sign-in page\'s mark of a new sign-in', () => {
  let server: TestServer;
  let root: TestUser;
  let discovery: Discovery;
  let client: RegisteredClient;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
    discovery = await discover(server);
    client = await registerClient(server, root.token, { redirectUris: ['https://app.example.org/cb'] });
  });
  after(() => server.close());

  for (const extra of [{ prompt: 'login' }, { max_age: '60' }]) {
    it(`a mark written by hand does not pass an old session for ${Object.keys(extra)[0]}`, async () => {
      const user = await createUser(server, root.token);
      const signedInAt = Number(claimsOf(user.token)['iat']);
      server.clock.advanceSeconds(120);
      for (const mark of ['0', String(signedInAt), String(signedInAt - 1)]) {
        const attempt = authorizationRequest(discovery, client, { extra: { ...extra, gatehouse_signed_in_after: mark } });
        const { location } = await followAuthorization(server, attempt, user.token);
        assert.equal(location.pathname, '/login', `mark ${mark}: ${location.href}`);
        assert.equal(location.searchParams.get('code'), null);
      }
    });
  }

  it('the mark the sign-in page got is good once a new session is made, not for the old one', async () => {
    const user = await createUser(server, root.token);
    server.clock.advanceSeconds(120);
    const attempt = authorizationRequest(discovery, client, { extra: { prompt: 'login' } });
    const { location } = await followAuthorization(server, attempt, user.token);
    const back = new URL(location.searchParams.get('rd') ?? '', location);
    assert.equal((await followAuthorization(server, { ...attempt, url: back.href }, user.token)).location.pathname, '/login');
    const fresh = (await login(server, user.username, user.password)).cookieToken ?? '';
    const { location: app } = await followAuthorization(server, { ...attempt, url: back.href }, fresh);
    assert.ok(app.searchParams.get('code') !== null, app.href);
  });

  it('a real mark copied from an earlier sign-in counts for nothing later, or for another app', async () => {
    const user = await createUser(server, root.token);
    const other = await registerClient(server, root.token, { redirectUris: ['https://other.example.org/cb'] });
    server.clock.advanceSeconds(120);
    const first = authorizationRequest(discovery, client, { extra: { prompt: 'login' } });
    const { location } = await followAuthorization(server, first, user.token);
    const mark = new URL(location.searchParams.get('rd') ?? '', location).searchParams.get('gatehouse_signed_in_after') ?? '';
    assert.notEqual(mark, '');
    const fresh = (await login(server, user.username, user.password)).cookieToken ?? '';
    const elsewhere = authorizationRequest(discovery, other, { extra: { prompt: 'login', gatehouse_signed_in_after: mark } });
    assert.equal((await followAuthorization(server, elsewhere, fresh)).location.pathname, '/login', 'another app');
    server.clock.advanceSeconds(3600);
    const later = authorizationRequest(discovery, client, { extra: { prompt: 'login', gatehouse_signed_in_after: mark } });
    assert.equal((await followAuthorization(server, later, fresh)).location.pathname, '/login', 'an hour later');
  });
});
