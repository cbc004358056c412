// The forward endpoint and a token found in a URL (the original request's `?token=`, or the
// forward URL's own): honoured for download tools, never for a browser's page load or a request
// another site's page started, so that a link carrying someone's token cannot make a signed-in
// browser act as that someone (login CSRF: the session cookie is SameSite=Strict, so a browser
// leaves it off exactly those requests).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const FORWARD = '/api/auth/forward';

// What the clients send, as observed: Chromium 120 navigating, wget 1.21, curl 7.88, aria2c 1.36.
const CHROMIUM_NAVIGATION = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8',
  'sec-fetch-site': 'cross-site',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-user': '?1',
};
const DOWNLOAD_TOOLS: Readonly<Record<string, Record<string, string>>> = {
  wget: { accept: '*/*', 'user-agent': 'Wget/1.21.3' },
  curl: { accept: '*/*', 'user-agent': 'curl/7.88.1' },
  aria2c: { accept: '*/*', 'user-agent': 'aria2/1.36.0' },
  'a media player without Accept': { 'user-agent': 'VLC/3.0.18 LibVLC/3.0.18' },
};

describe('a token in a URL at the forward endpoint', () => {
  let server: TestServer;
  let root: TestUser;
  let victim: TestUser;
  let attacker: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
    victim = await createUser(server, root.token, { level: 5 });
    attacker = await createUser(server, root.token, { level: 5 });
  });
  after(() => server.close());

  /** The forward check as a proxy asks it: the original URI carries the attacker's token. */
  function check(headers: Record<string, string>, options: { uriHeader?: 'x-original-uri' | 'x-forwarded-uri'; query?: string } = {}): Promise<TestResponse> {
    const uriHeader = options.uriHeader ?? 'x-original-uri';
    const path = `${FORWARD}${options.query ?? ''}`;
    const original = options.query === undefined ? { [uriHeader]: `/settings?token=${attacker.token}` } : {};
    return server.request({ path, headers: { accept: 'application/json', ...original, ...headers } });
  }

  for (const [tool, headers] of Object.entries(DOWNLOAD_TOOLS)) {
    it(`honours it for ${tool}`, async () => {
      for (const uriHeader of ['x-original-uri', 'x-forwarded-uri'] as const) {
        const res = await check(headers, { uriHeader });
        assert.equal(res.status, 200, `${uriHeader}: ${res.text}`);
        assert.equal(res.headers['remote-user'], attacker.username);
      }
    });
  }

  it('ignores it for a browser navigation from another site: 401, or the login redirect when asked', async () => {
    for (const uriHeader of ['x-original-uri', 'x-forwarded-uri'] as const) {
      const res = await check(CHROMIUM_NAVIGATION, { uriHeader });
      assert.equal(res.status, 401, `${uriHeader}: ${res.text}`);
      assert.equal(res.headers['remote-user'], undefined);
    }
    const redirected = await check(CHROMIUM_NAVIGATION, { query: `?login=/login&token=${attacker.token}` });
    assert.equal(redirected.status, 302, redirected.text);
    assert.match(String(redirected.headers.location), /^\/login/);
  });

  const refusedAlone: ReadonlyArray<readonly [string, Record<string, string>]> = [
    ['Accept with text/html and no Fetch Metadata (a browser on a plain-http site)', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }],
    ['Accept: TEXT/HTML in upper case', { accept: 'TEXT/HTML' }],
    ['Sec-Fetch-Mode: navigate alone', { accept: '*/*', 'sec-fetch-mode': 'navigate' }],
    ['Sec-Fetch-Mode: nested-navigate', { accept: '*/*', 'sec-fetch-mode': 'nested-navigate' }],
    ['an unknown Sec-Fetch-Mode', { accept: '*/*', 'sec-fetch-mode': 'teleport' }],
    ['Sec-Fetch-Site: cross-site (an image or fetch from another site)', { accept: 'image/avif,image/webp,*/*', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }],
    ['Sec-Fetch-Site: same-site (a sibling sub-domain)', { accept: '*/*', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' }],
    ['an unknown Sec-Fetch-Site', { accept: '*/*', 'sec-fetch-site': 'elsewhere' }],
  ];
  for (const [name, headers] of refusedAlone) {
    it(`ignores it for ${name}`, async () => {
      const res = await check(headers);
      assert.equal(res.status, 401, res.text);
      assert.equal(res.headers['remote-user'], undefined);
    });
  }

  it('honours it for a request the site itself or the user started that is not a page load', async () => {
    for (const site of ['same-origin', 'none']) {
      const res = await check({ accept: '*/*', 'sec-fetch-site': site, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'video' });
      assert.equal(res.status, 200, `${site}: ${res.text}`);
      assert.equal(res.headers['remote-user'], attacker.username);
    }
  });

  it('applies the same rule to ?token= on the forward URL itself (Caddy passes the client\'s query there when the URL has none)', async () => {
    assert.equal((await check(CHROMIUM_NAVIGATION, { query: `?token=${attacker.token}` })).status, 401);
    const tool = await check(DOWNLOAD_TOOLS['wget'] ?? {}, { query: `?token=${attacker.token}` });
    assert.equal(tool.headers['remote-user'], attacker.username);
  });

  it('judges the cookie, never the URL token, when a browser sends its own session', async () => {
    const res = await check({ ...CHROMIUM_NAVIGATION, 'sec-fetch-site': 'same-origin', cookie: `jwt=${victim.token}` });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['remote-user'], victim.username);
  });
});
