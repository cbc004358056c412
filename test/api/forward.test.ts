import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, createUser, deleteUser, nowSeconds, signToken, startPopulatedServer, updateUser, uniqueName, type TestUser } from '../helpers/api.js';
import { rawExchange } from '../helpers/raw-socket.js';
import { CLIENT_SETTINGS, startTestServer, type RequestOptions, type TestResponse, type TestServer } from '../helpers/server.js';

const FORWARD = '/api/auth/forward';
const OTHER_SECRET = 'another-secret-that-is-at-least-32-characters';

function forward(server: TestServer, options: Partial<RequestOptions> & { query?: string } = {}): Promise<TestResponse> {
  const { query, ...rest } = options;
  return server.request({ ...rest, path: `${options.path ?? FORWARD}${query ?? ''}` });
}

function assertAllowed(res: TestResponse, username: string, level: 'ADMINISTRATOR' | 'USER'): void {
  assert.equal(res.status, 200, `expected 200, got ${res.status} ${res.text}`);
  assert.equal(res.headers['remote-user'], username);
  assert.equal(res.headers['remote-level'], level);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.equal(res.headers['set-cookie'], undefined);
}

function assertRefused(res: TestResponse, status: 401 | 403): void {
  assertError(res, status);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['remote-user'], undefined);
  assert.equal(res.headers['remote-level'], undefined);
}

describe('{base}/api/auth/forward', () => {
  describe('in the initial condition (no user yet)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.close());

    it('answers 401 to everyone: the gate fails closed, unlike verify', async () => {
      assertRefused(await forward(server), 401);
      assertRefused(await forward(server, { query: '?level=USER' }), 401);
      assertRefused(await forward(server, { token: signToken({ username: 'nobody', iat: nowSeconds(server), exp: nowSeconds(server) + 60 }) }), 401);
    });
  });

  describe('once users exist', () => {
    let server: TestServer;
    let root: TestUser;
    let user: TestUser;
    before(async () => {
      ({ server, root } = await startPopulatedServer());
      user = await createUser(server, root.token, { level: 5 });
    });
    after(() => server.close());

    it('answers 200 with Remote-User, Remote-Level and no-store for a valid jwt cookie', async () => {
      const res = await forward(server, { token: root.token });
      assertAllowed(res, root.username, 'ADMINISTRATOR');
      assert.deepEqual(res.json, {});
    });

    it('names the level ADMINISTRATOR or USER whatever form it is stored in', async () => {
      for (const [level, expected] of [[10, 'ADMINISTRATOR'], ['ADMINISTRATOR', 'ADMINISTRATOR'], [5, 'USER'], ['USER', 'USER']] as const) {
        const someone = await createUser(server, root.token, { level });
        assertAllowed(await forward(server, { token: someone.token }), someone.username, expected);
      }
    });

    it('answers 401 {code, message} with no-store without credentials', async () => {
      assertRefused(await forward(server), 401);
    });

    it('accepts the token of the original request from X-Original-URI (nginx)', async () => {
      const res = await forward(server, { headers: { 'x-original-uri': `/api/torrents/abc/contents/0/data?token=${user.token}` } });
      assertAllowed(res, user.username, 'USER');
    });

    it('accepts the token of the original request from X-Forwarded-Uri (Traefik, Caddy)', async () => {
      const res = await forward(server, { headers: { 'x-forwarded-uri': `/download?x=1&token=${user.token}` } });
      assertAllowed(res, user.username, 'USER');
    });

    it('accepts ?token= on the forward request itself', async () => {
      assertAllowed(await forward(server, { query: `?token=${user.token}` }), user.username, 'USER');
    });

    it('never logs a token, from any of the places it is read', async () => {
      const someone = await createUser(server, root.token);
      await forward(server, { query: `?token=${someone.token}` });
      await forward(server, { headers: { 'x-original-uri': `/a?token=${someone.token}`, 'x-forwarded-uri': `/b?token=${someone.token}` } });
      await forward(server, { token: someone.token });
      assert.ok(server.logs.some((line) => line.includes('/api/auth/forward')), 'the requests are logged');
      assert.ok(!server.logs.some((line) => line.includes(someone.token.split('.')[2] ?? '')), 'no log line holds the token');
    });

    describe('precedence: cookie, then X-Original-URI, then X-Forwarded-Uri, then ?token=', () => {
      it('uses the cookie over every query token', async () => {
        const res = await forward(server, {
          token: user.token,
          query: `?token=${root.token}`,
          headers: { 'x-original-uri': `/?token=${root.token}`, 'x-forwarded-uri': `/?token=${root.token}` },
        });
        assertAllowed(res, user.username, 'USER');
      });

      it('refuses an invalid cookie even when a query token is valid (only the first credential counts)', async () => {
        assertRefused(await forward(server, { token: 'not.a.token', headers: { 'x-original-uri': `/?token=${user.token}` } }), 401);
        assertRefused(await forward(server, { token: 'not.a.token', query: `?token=${user.token}` }), 401);
      });

      it('uses X-Original-URI over X-Forwarded-Uri and over ?token=', async () => {
        const res = await forward(server, { query: `?token=${root.token}`, headers: { 'x-original-uri': `/a?token=${user.token}`, 'x-forwarded-uri': `/b?token=${root.token}` } });
        assertAllowed(res, user.username, 'USER');
      });

      it('falls through to X-Forwarded-Uri when X-Original-URI carries no token', async () => {
        const res = await forward(server, { headers: { 'x-original-uri': '/a?x=1', 'x-forwarded-uri': `/b?token=${user.token}` } });
        assertAllowed(res, user.username, 'USER');
      });

      it('uses X-Forwarded-Uri over ?token=', async () => {
        const res = await forward(server, { query: `?token=${root.token}`, headers: { 'x-forwarded-uri': `/b?token=${user.token}` } });
        assertAllowed(res, user.username, 'USER');
      });

      it('falls through to ?token= when neither header carries a token', async () => {
        const res = await forward(server, { query: `?token=${user.token}`, headers: { 'x-original-uri': '/a', 'x-forwarded-uri': '/b?token=' } });
        assertAllowed(res, user.username, 'USER');
      });

      it('judges the first token found: an invalid one in X-Original-URI is not rescued by ?token=', async () => {
        assertRefused(await forward(server, { query: `?token=${user.token}`, headers: { 'x-original-uri': '/a?token=garbage' } }), 401);
      });
    });

    describe('every session check applies', () => {
      it('refuses an expired token', async () => {
        const someone = await createUser(server, root.token);
        server.clock.advanceSeconds(7 * 24 * 3600);
        try {
          assertRefused(await forward(server, { token: someone.token }), 401);
          assertRefused(await forward(server, { headers: { 'x-original-uri': `/?token=${someone.token}` } }), 401);
        } finally {
          server.clock.advanceSeconds(-7 * 24 * 3600);
        }
      });

      it('refuses a token signed with another secret', async () => {
        const forged = signToken({ username: root.username, iat: nowSeconds(server), exp: nowSeconds(server) + 3600 }, OTHER_SECRET);
        assertRefused(await forward(server, { token: forged }), 401);
        assertRefused(await forward(server, { headers: { 'x-original-uri': `/?token=${forged}` } }), 401);
      });

      it('refuses the token of a deleted user', async () => {
        const someone = await createUser(server, root.token);
        assert.equal((await deleteUser(server, root.token, someone.username)).status, 200);
        assertRefused(await forward(server, { token: someone.token }), 401);
      });

      it('refuses a token issued before a password change', async () => {
        const someone = await createUser(server, root.token);
        assert.equal((await updateUser(server, root.token, someone.username, { password: 'a-new-password' })).status, 200);
        assertRefused(await forward(server, { token: someone.token }), 401);
      });

      it('accepts a content token (extra claims, no session key) for an existing user', async () => {
        const content = signToken({ username: user.username, iat: nowSeconds(server), exp: nowSeconds(server) + 3600, hash: 'abc', indices: '0,1' });
        assertAllowed(await forward(server, { headers: { 'x-original-uri': `/api/torrents/abc/contents/0,1/data?token=${content}` } }), user.username, 'USER');
      });

      it('sees a demotion at once', async () => {
        const someone = await createUser(server, root.token, { level: 10 });
        assertAllowed(await forward(server, { token: someone.token, query: '?level=ADMINISTRATOR' }), someone.username, 'ADMINISTRATOR');
        assert.equal((await updateUser(server, root.token, someone.username, { level: 5 })).status, 200);
        assertRefused(await forward(server, { token: someone.token, query: '?level=ADMINISTRATOR' }), 401);
      });
    });

    describe('?level= on the forward URL', () => {
      it('answers 403 to a valid USER session for level=ADMINISTRATOR', async () => {
        const res = await forward(server, { token: user.token, query: '?level=ADMINISTRATOR' });
        assertRefused(res, 403);
        assert.equal((res.json as { code: string }).code, 'NOT_ADMINISTRATOR');
      });

      it('answers 200 to an administrator for level=ADMINISTRATOR', async () => {
        assertAllowed(await forward(server, { token: root.token, query: '?level=ADMINISTRATOR' }), root.username, 'ADMINISTRATOR');
      });

      it('answers 401, not 403, without a session for level=ADMINISTRATOR', async () => {
        assertRefused(await forward(server, { query: '?level=ADMINISTRATOR' }), 401);
      });

      it('lets any valid session through for level=USER', async () => {
        assertAllowed(await forward(server, { token: user.token, query: '?level=USER' }), user.username, 'USER');
        assertAllowed(await forward(server, { token: root.token, query: '?level=USER' }), root.username, 'ADMINISTRATOR');
      });

      it('answers 403 to everyone for an unknown level, and logs each distinct mistake once, with its value', async () => {
        const levels = ['administrator', 'ADMIN', '10', '', 'USER '];
        for (const level of levels) {
          const query = `?level=${encodeURIComponent(level)}`;
          const res = await forward(server, { token: root.token, query });
          assertRefused(res, 403);
          assert.equal((res.json as { code: string }).code, 'UNKNOWN_LEVEL', level);
          assertRefused(await forward(server, { query }), 403);
        }
        const warnings = server.logs.filter((line) => line.includes('unknown level')).map((line) => (JSON.parse(line) as { askedLevel?: string; level: string }));
        assert.deepEqual(warnings.map((line) => line.askedLevel), levels);
        assert.ok(warnings.every((line) => line.level === 'warn'));
      });

      it('logs at most 32 distinct unknown levels, so strangers cannot flood the log', async () => {
        const before = server.logs.filter((line) => line.includes('unknown level')).length;
        for (let i = 0; i < 50; i++) assertRefused(await forward(server, { query: `?level=made-up-${i}` }), 403);
        assert.ok(server.logs.filter((line) => line.includes('unknown level')).length <= 32, 'bounded');
        assert.ok(server.logs.filter((line) => line.includes('unknown level')).length > before);
      });
    });

    describe('hostile X-Original-URI values', () => {
      const hostile: ReadonlyArray<[string, string]> = [
        ['no query', '/a/path'],
        ['only ?', '/a?'],
        ['an empty token', '/a?token='],
        ['a token that is a bad escape', '/a?token=%zz'],
        ['a bare token name', '/a?token'],
        ['many &', `/a?${'&'.repeat(5000)}`],
        ['a huge query', `/a?x=${'y'.repeat(12_000)}`],
        ['not a path at all', 'garbage'],
        ['a fragment', '/a#?token=x'],
        ['Latin-1 bytes', '/caf\u00e9?token=\u00e9\u00e9'],
      ];
      for (const [what, uri] of hostile) {
        it(`answers 401 for ${what}, never an error`, async () => {
          assertRefused(await forward(server, { headers: { 'x-original-uri': uri } }), 401);
        });
      }

      it('finds the token after other parameters with bad escapes and many &', async () => {
        assertAllowed(await forward(server, { headers: { 'x-original-uri': `/a?x=%zz&${'&'.repeat(2000)}token=${user.token}` } }), user.username, 'USER');
      });

      it('takes the first of duplicated token parameters', async () => {
        assertAllowed(await forward(server, { headers: { 'x-original-uri': `/a?token=${user.token}&token=garbage` } }), user.username, 'USER');
        assertRefused(await forward(server, { headers: { 'x-original-uri': `/a?token=garbage&token=${user.token}` } }), 401);
      });

      it('ignores a query past the size cap, even when it holds a valid token', async () => {
        assertRefused(await forward(server, { headers: { 'x-original-uri': `/a?x=${'y'.repeat(9000)}&token=${user.token}` } }), 401);
      });

      it('answers 401 for UTF-8 bytes in the header, sent raw', async () => {
        const res = await rawExchange(
          server.port,
          Buffer.concat([Buffer.from(`GET ${FORWARD} HTTP/1.1\r\nHost: x\r\nX-Original-URI: /\u00e9?token=`), Buffer.from('日本', 'utf8'), Buffer.from('\r\nConnection: close\r\n\r\n')]),
        );
        assert.equal(res.status, 401);
      });
    });

    describe('methods and bodies', () => {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PURGE', 'PROPFIND']) {
        it(`answers ${method} with the same decision`, async () => {
          const allowed = await forward(server, { method, token: user.token });
          assert.equal(allowed.status, 200);
          assert.equal(allowed.headers['remote-user'], user.username);
          const refused = await forward(server, { method });
          assert.equal(refused.status, 401);
          if (method !== 'HEAD') assertRefused(refused, 401);
        });
      }

      it('answers at once, and closes, when a request announces a body it never sends', async () => {
        for (const cookie of [`jwt=${user.token}`, 'jwt=none']) {
          const res = await rawExchange(server.port, `POST ${FORWARD} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`);
          assert.equal(res.status, cookie === 'jwt=none' ? 401 : 200, res.text);
          assert.equal(res.headers['connection'], 'close');
          assert.ok(res.closedByServer, 'the server closed the connection instead of waiting for the body');
        }
      });

      it('answers at once, and closes, for a chunked body that never comes', async () => {
        const res = await rawExchange(server.port, `PUT ${FORWARD} HTTP/1.1\r\nHost: x\r\nCookie: jwt=${user.token}\r\nTransfer-Encoding: chunked\r\n\r\n`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['connection'], 'close');
        assert.ok(res.closedByServer);
      });

      it('never parses a sent body as a next request', async () => {
        const smuggled = `GET ${FORWARD} HTTP/1.1\r\nHost: x\r\nCookie: jwt=${root.token}\r\n\r\n`;
        const res = await rawExchange(server.port, `POST ${FORWARD} HTTP/1.1\r\nHost: x\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`);
        assert.equal(res.status, 401);
        assert.equal(res.text.match(/HTTP\/1\.1 /g)?.length, 1, res.text);
        assert.ok(!res.text.includes(root.username));
      });

      it('answers two requests on one keep-alive connection', async () => {
        const res = await rawExchange(
          server.port,
          `GET ${FORWARD} HTTP/1.1\r\nHost: x\r\nCookie: jwt=${user.token}\r\n\r\nGET ${FORWARD} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
        const statuses = [...res.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1]);
        assert.deepEqual(statuses, ['200', '401']);
        assert.ok(res.closedByServer);
      });
    });

    describe('usernames that need encoding', () => {
      const names = ['Ada Lovelace', 'Zoë 🐈 שלום', '100%', '%41', 'x%0D%0AInjected: 1', 'a:b;c,d"e'];
      for (const name of names) {
        it(`sends ${JSON.stringify(name)} percent-encoded in Remote-User, which decodes back to it`, async () => {
          const someone = await createUser(server, root.token, { username: `${name} ${uniqueName('')}` });
          const res = await forward(server, { token: someone.token });
          assert.equal(res.status, 200);
          const header = res.headers['remote-user'];
          assert.equal(typeof header, 'string');
          assert.match(header as string, /^(?:[A-Za-z0-9\-._~@]|%[0-9A-F]{2})+$/);
          assert.equal(decodeURIComponent(header as string), someone.username);
          assert.equal(res.headers['injected'], undefined);
        });
      }

      it('passes a plain ASCII name unchanged', async () => {
        const someone = await createUser(server, root.token, { username: uniqueName('plain.name_1') });
        assert.equal((await forward(server, { token: someone.token })).headers['remote-user'], someone.username);
      });

      it('encodes every character outside A-Z a-z 0-9 - . _ ~ @, the apostrophe and ampersand included', async () => {
        const someone = await createUser(server, root.token, { username: uniqueName("o'brien&co+1=a/b") });
        const res = await forward(server, { token: someone.token });
        assert.equal(res.headers['remote-user'], someone.username.replace("o'brien&co+1=a/b", 'o%27brien%26co%2B1%3Da%2Fb'));
        const mail = await createUser(server, root.token, { username: uniqueName('Ada.L_~@example.org') });
        assert.equal((await forward(server, { token: mail.token })).headers['remote-user'], mail.username);
      });

      it('encodes a space and a non-ASCII letter as %20 and UTF-8 bytes', async () => {
        const someone = await createUser(server, root.token, { username: uniqueName('José Ñ') });
        const res = await forward(server, { token: someone.token });
        assert.equal(res.headers['remote-user'], someone.username.replace('José Ñ', 'Jos%C3%A9%20%C3%91'));
      });
    });

    describe('the login redirect (Traefik, Caddy)', () => {
      const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
      const traefik = { ...browser, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/torrents?view=all&sort=name' };
      const rdOf = (location: string): string | null => new URL(location, 'http://base.invalid').searchParams.get('rd');

      it('answers 302 to the login page with rd = the original URL, for a browser without a session', async () => {
        const res = await forward(server, { query: '?login=/login', headers: traefik });
        assert.equal(res.status, 302);
        assert.equal(res.headers['location'], `/login?rd=${encodeURIComponent('https://app.example/torrents?view=all&sort=name')}`);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['remote-user'], undefined);
      });

      it('leaves rd out when it would be longer than 2,048 characters (nginx answers 502 to a Location over its 4 KiB buffer)', async () => {
        const long = { ...traefik, 'x-forwarded-uri': `/search?q=${'x'.repeat(2_100)}` };
        const res = await forward(server, { query: '?login=/login', headers: long });
        assert.equal(res.status, 302);
        assert.equal(res.headers['location'], '/login');
        const fits = { ...traefik, 'x-forwarded-uri': `/search?q=${'x'.repeat(1_900)}` };
        assert.equal(rdOf((await forward(server, { query: '?login=/login', headers: fits })).headers['location'] ?? ''), `https://app.example/search?q=${'x'.repeat(1_900)}`);
      });

      it('appends rd with & when the login URL already has a query', async () => {
        const res = await forward(server, { query: `?login=${encodeURIComponent('/auth/login?theme=dark')}`, headers: traefik });
        assert.equal(res.status, 302);
        assert.equal(res.headers['location'], `/auth/login?theme=dark&rd=${encodeURIComponent('https://app.example/torrents?view=all&sort=name')}`);
      });

      it('uses X-Original-URI and Host when there is no X-Forwarded-Uri, as a path without a scheme', async () => {
        const res = await forward(server, { query: '?login=/login', headers: { ...browser, 'x-original-uri': '/files/a%20b?x=1' } });
        assert.equal(res.status, 302);
        assert.equal(rdOf(res.headers['location'] ?? ''), '/files/a%20b?x=1');
      });

      it('builds an absolute rd from X-Original-URI, Host and X-Forwarded-Proto', async () => {
        const res = await forward(server, { query: '?login=/login', headers: { ...browser, host: 'flood.example', 'x-forwarded-proto': 'http', 'x-original-uri': '/x' } });
        assert.equal(rdOf(res.headers['location'] ?? ''), 'http://flood.example/x');
      });

      it('redirects without rd when the original URL cannot be built', async () => {
        for (const headers of [browser, { ...browser, 'x-forwarded-uri': 'no-slash' }, { ...browser, 'x-forwarded-uri': '/a b' }, { ...browser, 'x-forwarded-uri': `/${'a'.repeat(9000)}` }]) {
          const res = await forward(server, { query: '?login=/login', headers });
          assert.equal(res.status, 302);
          assert.equal(res.headers['location'], '/login');
        }
      });

      it('does not build an absolute rd from a host holding a path, userinfo or spaces', async () => {
        for (const host of ['evil.example/x', 'a@evil.example', 'a b', 'evil.example\\x']) {
          const res = await forward(server, { query: '?login=/login', headers: { ...traefik, 'x-forwarded-host': host } });
          assert.equal(rdOf(res.headers['location'] ?? ''), '/torrents?view=all&sort=name', host);
        }
      });

      it('keeps answering 401 to API clients (no text/html in Accept)', async () => {
        for (const accept of ['application/json', 'application/json, text/plain, */*', '*/*']) {
          assertRefused(await forward(server, { query: '?login=/login', headers: { ...traefik, accept } }), 401);
        }
      });

      it('answers 401 without login= on the forward URL', async () => {
        assertRefused(await forward(server, { headers: traefik }), 401);
      });

      it('ignores a login value that is not a plain path or an allowed http(s) URL', async () => {
        for (const login of ['//evil.example/login', '/\\evil.example', 'login', 'javascript:alert(1)', 'https://evil.example/login', 'http://app.example@evil.example/', '/log in', '/a\r\nX: y', 'ftp://app.example/']) {
          assertRefused(await forward(server, { query: `?login=${encodeURIComponent(login)}`, headers: traefik }), 401);
        }
      });

      it('never turns a 403 into a redirect', async () => {
        // A browser gets the 403 page (test/api/forbidden-page.test.ts); an API client the JSON refusal.
        const page = await forward(server, { token: user.token, query: '?level=ADMINISTRATOR&login=/login', headers: traefik });
        assert.equal(page.status, 403);
        assert.equal(page.headers['location'], undefined);
        assertRefused(await forward(server, { token: user.token, query: '?level=ADMINISTRATOR&login=/login', headers: { ...traefik, accept: 'application/json' } }), 403);
        assertRefused(await forward(server, { query: '?level=typo&login=/login', headers: traefik }), 403);
      });

      it('answers 200 for a browser with a session', async () => {
        assertAllowed(await forward(server, { token: user.token, query: '?login=/login', headers: traefik }), user.username, 'USER');
      });
    });
  });

  describe('with an allowed redirect host', () => {
    let server: TestServer;
    before(async () => {
      ({ server } = await startPopulatedServer({ GATEHOUSE_ALLOWED_REDIRECT_HOSTS: 'auth.example,app.example' }));
    });
    after(() => server.close());

    it('redirects to an absolute login URL on an allowed host', async () => {
      const res = await forward(server, {
        query: `?login=${encodeURIComponent('https://AUTH.example:8443/login')}`,
        headers: { accept: 'text/html', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/' },
      });
      assert.equal(res.status, 302);
      assert.equal(res.headers['location'], `https://AUTH.example:8443/login?rd=${encodeURIComponent('https://app.example/')}`);
    });

    it('still ignores an absolute login URL on any other host', async () => {
      const res = await forward(server, { query: `?login=${encodeURIComponent('https://evil.example/login')}`, headers: { accept: 'text/html' } });
      assertRefused(res, 401);
    });
  });

  describe('with --revoke-on-logout', () => {
    let server: TestServer;
    let root: TestUser;
    before(async () => {
      ({ server, root } = await startPopulatedServer({ GATEHOUSE_REVOKE_ON_LOGOUT: 'true' }));
    });
    after(() => server.close());

    it('closes the gate for a token once it has logged out, in every place it may travel', async () => {
      const someone = await createUser(server, root.token);
      assert.equal((await forward(server, { token: someone.token })).status, 200);
      assert.equal((await server.request({ path: '/api/auth/logout', token: someone.token })).status, 200);
      assertRefused(await forward(server, { token: someone.token }), 401);
      assertRefused(await forward(server, { headers: { 'x-original-uri': `/?token=${someone.token}` } }), 401);
      assertRefused(await forward(server, { query: `?token=${someone.token}` }), 401);
    });
  });

  describe('with --auth none', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ GATEHOUSE_AUTH: 'none' });
    });
    after(() => server.close());

    it('lets no one through: the built-in _config administrator is not a session', async () => {
      assertRefused(await forward(server), 401);
      assertRefused(await forward(server, { token: signToken({ username: '_config', iat: nowSeconds(server), exp: nowSeconds(server) + 60 }) }), 401);
    });
  });

  describe('under a base URI', () => {
    let server: TestServer;
    let token: string;
    before(async () => {
      server = await startTestServer({ GATEHOUSE_BASE_URI: '/flood' });
      const res = await server.request({ method: 'POST', path: '/flood/api/auth/register', body: { username: 'based', password: 'based-password', client: CLIENT_SETTINGS, level: 10 } });
      assert.equal(res.status, 200);
      token = res.cookieToken ?? '';
    });
    after(() => server.close());

    it('answers at {base}/api/auth/forward', async () => {
      assertAllowed(await forward(server, { path: `/flood${FORWARD}`, token }), 'based', 'ADMINISTRATOR');
      assertRefused(await forward(server, { path: `/flood${FORWARD}` }), 401);
    });

    it('is not at the root path', async () => {
      assertError(await forward(server, { token }), 404);
    });
  });
});
