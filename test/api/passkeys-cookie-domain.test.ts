// Passkeys with --cookie-domain (docs/contract/access.md "Passkeys with --cookie-domain"): the session
// cookie reaches every sub-domain, so the origins accepted are --public-url's and --passkey-origins, never one taken
// from Host; with neither, passkeys are off, their ceremonies refused, the pages silent about them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { addPasskey, creationOptions, newAuthenticator, requestOptions, signIn } from '../helpers/passkeys.js';
import type { TestServer } from '../helpers/server.js';

/** Headers of a request our trusted proxy forwards for a browser on `host`, over https. */
const viaProxy = (host: string): Record<string, string> => ({ host: '127.0.0.1:3000', 'x-forwarded-host': host, 'x-forwarded-proto': 'https' });

/** What a page tells its script about passkeys: its JSON data's passkeysOffered, or the older inline variable. */
function passkeysOffered(html: string): boolean | undefined {
  const data = /<script type="application\/json" id="page-data">([^<]*)<\/script>/.exec(html)?.[1];
  if (data !== undefined) return (JSON.parse(data) as { passkeysOffered?: boolean }).passkeysOffered;
  const inline = /var PASSKEYS_OFFERED = (true|false);/.exec(html)?.[1];
  return inline === undefined ? undefined : inline === 'true';
}

describe('passkeys with a cookie domain, --public-url and --passkey-origins', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({
      GATEHOUSE_TRUST_PROXY: '127.0.0.1',
      GATEHOUSE_COOKIE_DOMAIN: 'example.org',
      GATEHOUSE_PUBLIC_URL: 'https://auth.example.org/gate',
      GATEHOUSE_PASSKEY_ORIGINS: 'https://app.example.org',
    }));
  });
  after(() => server.close());

  /** A USER account with a passkey made on auth.example.org, and its authenticator. */
  const withPasskey = async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const authenticator = newAuthenticator({ origin: 'https://auth.example.org' });
    const added = await addPasskey(server, user.token, user.password, authenticator, { headers: viaProxy('auth.example.org') });
    assert.equal(added.status, 200, added.text);
    return { user, authenticator };
  };

  it('uses the cookie domain as rp.id, and signs in from --public-url\'s origin with a cookie for the domain', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    assert.deepEqual((await creationOptions(server, user.token, viaProxy('auth.example.org')))['rp'], { id: 'example.org', name: 'Gatehouse' });
    const { authenticator } = await withPasskey();
    const signedIn = await signIn(server, authenticator, { headers: viaProxy('auth.example.org') });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.match(String(signedIn.headers['set-cookie']), /Domain=example\.org; .*Secure/);
    assert.equal((await requestOptions(server, undefined, viaProxy('anything.example.org')))['rpId'], 'example.org');
  });

  it('refuses an assertion made on another sub-domain, even sent with that sub-domain\'s Host', async () => {
    const { authenticator } = await withPasskey();
    authenticator.origin = 'https://evil.example.org';
    for (const headers of [viaProxy('evil.example.org'), { host: 'evil.example.org' }, viaProxy('auth.example.org')]) {
      const res = await signIn(server, authenticator, { headers });
      assertError(res, 401, 'PASSKEY_REFUSED');
    }
    assert.ok(server.logs.some((line) => line.includes('passkey_refused') && line.includes('"origin"')));
  });

  it('refuses a registration made on another sub-domain', async () => {
    const user = await createUser(server, root.token, { level: 5 });
    const authenticator = newAuthenticator({ origin: 'https://evil.example.org' });
    const added = await addPasskey(server, user.token, user.password, authenticator, { headers: viaProxy('auth.example.org') });
    assertError(added, 400, 'PASSKEY_INVALID');
    // Sent to that sub-domain, it is not Gatehouse's own origin: refused before the ceremony begins.
    for (const path of ['/api/auth/account/passkeys/options', '/api/auth/account/passkeys']) {
      const there = await server.request({ method: 'POST', path, token: user.token, headers: viaProxy('evil.example.org'), body: { password: user.password } });
      assertError(there, 403, 'NOT_GATEHOUSE_ORIGIN');
    }
  });

  it('accepts an origin listed in --passkey-origins, whatever Host the request names', async () => {
    const { authenticator } = await withPasskey();
    authenticator.origin = 'https://app.example.org';
    for (const headers of [viaProxy('app.example.org'), { host: 'other.example.org' }]) {
      const res = await signIn(server, authenticator, { headers });
      assert.equal(res.status, 200, res.text);
    }
  });

  it('no longer takes the rp.id or origin from a malformed Host', async () => {
    const res = await server.request({ method: 'POST', path: '/api/auth/passkey/options', headers: { host: 'a b' }, body: {} });
    assert.equal(res.status, 200, res.text);
  });
});

describe('passkeys with a cookie domain and neither --public-url nor --passkey-origins', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_TRUST_PROXY: '127.0.0.1', GATEHOUSE_COOKIE_DOMAIN: 'example.org' }));
  });
  after(() => server.close());

  it('says at start-up that passkeys are off, and why', () => {
    const line = server.logs.find((entry) => entry.includes('passkeys are off'));
    assert.ok(line !== undefined, server.logs.join('\n'));
    assert.match(line, /"level":"warn"/);
    assert.match(line, /--cookie-domain example\.org.*--public-url.*--passkey-origins/);
  });

  it('refuses every passkey ceremony with 404 PASSKEYS_OFF, for anyone and whatever the Host', async () => {
    const headers = viaProxy('auth.example.org');
    for (const body of [{}, { username: root.username }]) {
      assertError(await server.request({ method: 'POST', path: '/api/auth/passkey/options', headers, body }), 404, 'PASSKEYS_OFF');
    }
    const credential = newAuthenticator({ origin: 'https://auth.example.org' }).get({ challenge: Buffer.alloc(32, 1).toString('base64url'), rpId: 'example.org' });
    assertError(await server.request({ method: 'POST', path: '/api/auth/passkey', headers: { host: 'auth.example.org' }, body: { credential } }), 404, 'PASSKEYS_OFF');
    // The account's own ceremony on Gatehouse's own origin: localhost, without --public-url.
    assertError(await server.request({ method: 'POST', path: '/api/auth/account/passkeys/options', token: root.token, headers: { host: 'localhost' }, body: {} }), 404, 'PASSKEYS_OFF');
  });

  it('does not offer passkeys on the sign-in page or the account page', async () => {
    for (const path of ['/login', '/gatehouse/account']) {
      const page = await server.request({ path, headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.equal(passkeysOffered(page.text), false, path);
    }
  });
});

describe('passkeys without a cookie domain', () => {
  let server: TestServer;
  before(async () => {
    ({ server } = await startPopulatedServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org' }));
  });
  after(() => server.close());

  it('keep taking rp.id and origin from the Host, --public-url or not, and the pages offer them', async () => {
    assert.equal((await requestOptions(server, undefined, { host: 'gate.example' }))['rpId'], 'gate.example');
    for (const path of ['/login', '/gatehouse/account']) {
      assert.equal(passkeysOffered((await server.request({ path, headers: { accept: 'text/html' } })).text), true, path);
    }
    assert.ok(!server.logs.some((line) => line.includes('passkeys are off')));
  });
});
