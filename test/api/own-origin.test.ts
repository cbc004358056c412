// Gatehouse's own origin (docs/contract/own-origin.md): accounts and administration answer only there.
// A script on an app's page runs with the signed-in person's cookie, an administrator's two-factor
// session included; every row of the table marked `home` refuses it there with 403 NOT_GATEHOUSE_ORIGIN,
// before the credential is read, while the sign-in surface (`any`) keeps working on the app's site.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { totpCode } from '../../src/totp/codes.js';
import { ACCESS, ACTIONS, type AccessRow, type Action } from '../../src/auth/access.js';
import { assertError, createUser, type TestUser } from '../helpers/api.js';
import { CLIENT_SETTINGS, startTestServer, type RequestOptions, type TestResponse, type TestServer } from '../helpers/server.js';
import { enrolTotp } from '../helpers/two-factor.js';

const APP = 'app.example.org';
const PUBLIC_URL = 'https://auth.example.org';
const FLOOD_URL = 'https://flood.example.org';

const HOME_ROWS = ACTIONS.filter((action) => ACCESS[action].origin === 'home');
const ANY_ROWS = ACTIONS.filter((action) => ACCESS[action].origin === 'any');
// The seven Flood endpoints of the `home` rows: they also answer on a Flood web client's origin.
const FLOOD_HOME_ROWS: readonly Action[] = ['register', 'listUsers', 'updateUser', 'updateUserWaysIn', 'deleteUser'];
// OpenID Connect's unit is on only with --public-url: without it these rows have no route.
const OPENID_CONNECT_ROWS: readonly Action[] = [
  ...ACTIONS.filter((action) => action.startsWith('oidc')), 'listClients', 'addClient', 'updateClient', 'removeClient', 'updateProfile',
];
const isAccountPage = (row: AccessRow): boolean => row.path.startsWith('/gatehouse/');

/** The request of `row` (path parameters filled in, a body of the row's type); the origin check comes before all of it. */
function requestOf(row: AccessRow, headers: Record<string, string>, token: string | undefined): RequestOptions {
  const path = row.path.replace(/:[a-zA-Z]+/g, 'someone');
  const method = row.method === '*' ? 'GET' : row.method;
  const hasBody = method === 'POST' || method === 'PATCH';
  const body = !hasBody ? undefined : row.body === 'form' ? 'client_id=x' : {};
  return {
    method,
    path,
    headers: { ...headers, ...(row.body === 'form' && hasBody ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(body === undefined ? {} : { body }),
    ...(token === undefined ? {} : { token }),
  };
}

/** `server` as a browser on `host` reaches it: every request carries that Host unless it says otherwise. */
function at(server: TestServer, host: string): TestServer {
  return Object.assign(Object.create(server) as TestServer, {
    request: (options: RequestOptions) => server.request({ ...options, headers: { host, ...options.headers } }),
  });
}

/**
 * The first account, an administrator (registered on the test's own address, 127.0.0.1, which the
 * first registration's host check takes), with TOTP and its two-factor session made on the home origin.
 */
async function twoFactorAdministrator(server: TestServer, home: TestServer): Promise<{ admin: TestUser; token: string; seed: Buffer }> {
  const admin = await createUser(server, undefined, { prefix: 'root', level: 10 });
  const { token, seed } = await enrolTotp(home, admin);
  return { admin, token, seed };
}

function assertNotGatehouseOrigin(res: TestResponse, what: string): void {
  assert.equal(res.status, 403, `${what}: ${res.status} ${res.text}`);
  assertError(res, 403, 'NOT_GATEHOUSE_ORIGIN');
}

function codeOf(res: TestResponse): unknown {
  return typeof res.json === 'object' && res.json !== null ? (res.json as Record<string, unknown>)['code'] : undefined;
}

describe('Gatehouse\'s own origin with --public-url, a Flood origin, and the test as a trusted proxy', () => {
  let server: TestServer;
  let home: TestServer;
  let token: string;
  let admin: TestUser;
  let seed: Buffer;

  before(async () => {
    server = await startTestServer({
      GATEHOUSE_PUBLIC_URL: PUBLIC_URL,
      GATEHOUSE_FLOOD_URL: FLOOD_URL,
      GATEHOUSE_TRUST_PROXY: '127.0.0.1',
      GATEHOUSE_THROTTLE_USER: '1000',
    });
    home = at(server, 'auth.example.org');
    ({ admin, token, seed } = await twoFactorAdministrator(server, home));
  });
  after(() => server.close());

  it('has a route for every row of the table here, so each row below is asked of a real handler', async () => {
    for (const action of ACTIONS) {
      if (action.startsWith('proxy')) continue; // --auth none only
      // No cookie: some rows (logout, logout everywhere) would end the session the other tests use.
      const res = await home.request(requestOf(ACCESS[action], {}, undefined));
      assert.notEqual(codeOf(res), 'ROUTE_NOT_FOUND', action);
      assert.notEqual(codeOf(res), 'NOT_GATEHOUSE_ORIGIN', action);
    }
  });

  for (const action of HOME_ROWS) {
    const row: AccessRow = ACCESS[action];
    if (isAccountPage(row)) continue;
    it(`refuses ${action} (${row.method} ${row.path}) on an app's site with an administrator's two-factor cookie`, async () => {
      assertNotGatehouseOrigin(await server.request(requestOf(row, { host: APP }, token)), action);
    });
  }

  it('refuses before the credential: the same answer with no cookie, a forged one, or ?token=', async () => {
    const withCookie = await server.request(requestOf(ACCESS.showAccount, { host: APP }, token));
    for (const credential of [undefined, 'not-a-token']) {
      const res = await server.request(requestOf(ACCESS.showAccount, { host: APP }, credential));
      assertNotGatehouseOrigin(res, 'showAccount');
      assert.equal(res.text, withCookie.text);
    }
    assertNotGatehouseOrigin(await server.request({ path: `/api/auth/users?token=${token}`, headers: { host: APP } }), 'listUsers with ?token=');
  });

  it('refuses before the cross-site check and the body\'s type', async () => {
    const res = await server.request({
      method: 'POST', path: '/api/auth/account/password', token, body: 'password=x',
      headers: { host: APP, 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' },
    });
    assertNotGatehouseOrigin(res, 'changePassword');
  });

  it('names the account page on the home origin in its message', async () => {
    const res = await server.request({ path: '/api/auth/account', headers: { host: APP }, token });
    assert.match((res.json as { message: string }).message, /https:\/\/auth\.example\.org\/gatehouse\/account/);
  });

  for (const action of HOME_ROWS) {
    const row: AccessRow = ACCESS[action];
    if (isAccountPage(row)) continue;
    it(`refuses ${action} when the trusted proxy says the browser asked for an app's host`, async () => {
      const res = await server.request(requestOf(row, { host: 'auth.example.org', 'x-forwarded-host': APP }, token));
      assertNotGatehouseOrigin(res, action);
    });
  }

  it('answers the home origin the trusted proxy names, whatever Host the proxy itself sends', async () => {
    for (const forwarded of ['auth.example.org', `${APP}, auth.example.org`]) {
      const res = await server.request({ path: '/api/auth/account', token, headers: { host: `127.0.0.1:${server.port}`, 'x-forwarded-host': forwarded } });
      assert.equal(res.status, 200, `${forwarded}: ${res.text}`);
    }
    // A client's value first, the proxy's last: the last is the one read.
    const res = await server.request({ path: '/api/auth/account', token, headers: { host: 'auth.example.org', 'x-forwarded-host': `auth.example.org, ${APP}` } });
    assertNotGatehouseOrigin(res, 'the proxy\'s own value last');
  });

  it('no longer counts loopback as home once --public-url names the home origin', async () => {
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, '[::1]']) {
      assertNotGatehouseOrigin(await server.request({ path: '/api/auth/account', token, headers: { host } }), host);
    }
  });

  it('answers the home origin however its Host is spelled: default port, capitals', async () => {
    for (const host of ['auth.example.org:443', 'AUTH.example.org']) {
      const res = await server.request({ path: '/api/auth/account', token, headers: { host } });
      assert.equal(res.status, 200, `${host}: ${res.text}`);
    }
  });

  it('sends an account page asked on an app\'s site to the same path and query on the home origin', async () => {
    for (const action of HOME_ROWS.filter((name) => isAccountPage(ACCESS[name]))) {
      const path = `${ACCESS[action].path}?tab=tokens&x=%20y`;
      for (const method of ['GET', 'HEAD']) {
        const res = await server.request({ method, path, headers: { host: APP, accept: 'text/html' }, token });
        assert.equal(res.status, 303, `${method} ${action}: ${res.status}`);
        assert.equal(res.headers.location, `${PUBLIC_URL}${path}`);
        assert.equal(res.text, '');
      }
      const there = await home.request({ path: ACCESS[action].path, headers: { accept: 'text/html' } });
      assert.equal(there.status, 200, action);
    }
  });

  it('drops a query that cannot travel in a Location header, and keeps the path', async () => {
    const res = await server.request({ path: `/gatehouse/account?${'q'.repeat(5000)}`, headers: { host: APP } });
    assert.equal(res.status, 303);
    assert.equal(res.headers.location, `${PUBLIC_URL}/gatehouse/account`);
  });

  it('keeps every row of the sign-in surface working on an app\'s site', async () => {
    const app = at(server, APP);
    const user = await createUser(home, token, { prefix: 'user' });
    const signedIn = await app.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: user.username, password: user.password } });
    assert.equal(signedIn.status, 200, signedIn.text);
    const session = signedIn.cookieToken;
    assert.ok(session !== undefined);
    const verified = await app.request({ path: '/api/auth/verify', token: session });
    assert.equal((verified.json as { username: string }).username, user.username);
    assert.equal((await app.request({ path: '/api/auth/forward', token: session })).status, 200);
    assert.equal((await app.request({ path: '/api/auth/probe' })).status, 200);
    assert.equal((await app.request({ path: '/healthz' })).status, 200);
    assert.equal((await app.request({ path: '/login', headers: { accept: 'text/html' } })).status, 200);
    const options = await app.request({ method: 'POST', path: '/api/auth/passkey/options', body: {} });
    assert.notEqual(codeOf(options), 'NOT_GATEHOUSE_ORIGIN', options.text);
    const passkey = await app.request({ method: 'POST', path: '/api/auth/passkey', body: {} });
    assert.notEqual(codeOf(passkey), 'NOT_GATEHOUSE_ORIGIN', passkey.text);
    assert.equal((await app.request({ path: '/api/auth/logout', token: session })).status, 200);
    const pageSignOut = await app.request({ path: '/logout', token: session });
    assert.equal(pageSignOut.status, 303);
  });

  it('keeps the sign-in\'s code step working on an app\'s site', async () => {
    const app = at(server, APP);
    const first = await app.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: admin.username, password: admin.password } });
    assertError(first, 401, 'SECOND_FACTOR_REQUIRED');
    server.clock.advanceSeconds(30);
    const code = totpCode(seed, server.clock.now());
    const second = await app.request({ method: 'POST', path: '/api/auth/authenticate', body: { username: admin.username, password: admin.password, code } });
    assert.equal(second.status, 200, second.text);
  });

  it('answers no `any` row with NOT_GATEHOUSE_ORIGIN on an app\'s site', async () => {
    for (const action of ANY_ROWS) {
      if (action.startsWith('proxy')) continue;
      const res = await server.request(requestOf(ACCESS[action], { host: APP }, undefined));
      assert.notEqual(codeOf(res), 'NOT_GATEHOUSE_ORIGIN', action);
    }
  });

  it('links the sign-in page and the gate\'s 403 page, as an app\'s site shows them, to the account page on the home origin', async () => {
    const app = at(server, APP);
    const signIn = await app.request({ path: '/login', headers: { accept: 'text/html' } });
    assert.equal(signIn.text.match(/href="https:\/\/auth\.example\.org\/gatehouse\/account"/g)?.length, 2, 'the setup note and the setup step');
    assert.doesNotMatch(signIn.text, /href="gatehouse\/account"/);
    const user = await createUser(home, token, { prefix: 'grouped' });
    const forbidden = await app.request({ path: '/api/auth/forward?group=staff', token: user.token, headers: { accept: 'text/html' } });
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.text, /<a id="account" href="https:\/\/auth\.example\.org\/gatehouse\/account">/);
  });

  it('opens exactly the seven Flood endpoints on the Flood origin, administrators\' included', async () => {
    const flood = at(server, 'flood.example.org');
    for (const action of HOME_ROWS) {
      const row: AccessRow = ACCESS[action];
      if (isAccountPage(row)) continue;
      const res = await flood.request(requestOf(row, {}, token));
      if (FLOOD_HOME_ROWS.includes(action)) assert.notEqual(codeOf(res), 'NOT_GATEHOUSE_ORIGIN', action);
      else assertNotGatehouseOrigin(res, action);
    }
    const listed = await flood.request({ path: '/api/auth/users', token });
    assert.equal(listed.status, 200, listed.text);
    const name = `flood-made-${process.pid}`;
    const made = await flood.request({
      method: 'POST', path: '/api/auth/register?cookie=false', token,
      body: { username: name, password: 'flood-made-password', client: CLIENT_SETTINGS, level: 5 },
    });
    assert.equal(made.status, 200, made.text);
    const changed = await flood.request({ method: 'PATCH', path: `/api/auth/users/${name}`, token, body: { password: 'another-password' } });
    assert.equal(changed.status, 200, changed.text);
    const removed = await flood.request({ method: 'DELETE', path: `/api/auth/users/${name}`, token });
    assert.equal(removed.status, 200, removed.text);
    const page = await flood.request({ path: '/gatehouse/users' });
    assert.equal(page.status, 303);
  });

  it('covers the Flood endpoints the test names: the table\'s `home` rows of body `flood`', () => {
    assert.deepEqual(HOME_ROWS.filter((action) => ACCESS[action].body === 'flood'), FLOOD_HOME_ROWS);
  });
});

describe('Gatehouse\'s own origin without --public-url', () => {
  let server: TestServer;
  let token: string;

  before(async () => {
    // No --trust-proxy: the test's address is no proxy, and its X-Forwarded-Host is the client's own.
    server = await startTestServer();
    ({ token } = await twoFactorAdministrator(server, server));
  });
  after(() => server.close());

  for (const action of HOME_ROWS) {
    const row: AccessRow = ACCESS[action];
    if (isAccountPage(row) || OPENID_CONNECT_ROWS.includes(action)) continue;
    it(`refuses ${action} on an app's host with an administrator's two-factor cookie`, async () => {
      assertNotGatehouseOrigin(await server.request(requestOf(row, { host: APP }, token)), action);
    });
  }

  it('ignores X-Forwarded-Host from a peer not in --trust-proxy', async () => {
    const appHost = await server.request({ path: '/api/auth/account', token, headers: { host: APP, 'x-forwarded-host': 'localhost' } });
    assertNotGatehouseOrigin(appHost, 'an untrusted peer naming localhost');
    const homeHost = await server.request({ path: '/api/auth/account', token, headers: { host: 'localhost', 'x-forwarded-host': APP } });
    assert.equal(homeHost.status, 200, homeHost.text);
  });

  it('counts localhost and loopback addresses as home on any port, and their sub-domains not', async () => {
    for (const host of [`127.0.0.1:${server.port}`, 'localhost:8080', '[::1]:3000', '127.0.0.2']) {
      const res = await server.request({ path: '/api/auth/account', token, headers: { host } });
      assert.equal(res.status, 200, `${host}: ${res.text}`);
    }
    for (const host of ['app.localhost', '192.168.1.5:3000', 'localhost.']) {
      assertNotGatehouseOrigin(await server.request({ path: '/api/auth/account', token, headers: { host } }), host);
    }
  });

  it('says how to reach the account pages, with no address to name', async () => {
    const res = await server.request({ path: '/api/auth/account', headers: { host: APP } });
    assert.match((res.json as { message: string }).message, /localhost|--public-url/);
  });

  it('answers an account page on an app\'s site with a page saying where accounts are managed', async () => {
    const res = await server.request({ path: '/gatehouse/account', headers: { host: APP, accept: 'text/html' } });
    assert.equal(res.status, 403);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.match(res.text, /--public-url/);
    assert.equal(res.headers.location, undefined);
  });

  it('links the sign-in page to the account page beside it, and the 403 page to none', async () => {
    const signIn = await server.request({ path: '/login', headers: { host: APP, accept: 'text/html' } });
    assert.equal(signIn.text.match(/href="gatehouse\/account"/g)?.length, 2);
    const forbidden = await server.request({ path: '/api/auth/forward?group=staff', token, headers: { host: APP, accept: 'text/html' } });
    assert.equal(forbidden.status, 403);
    assert.doesNotMatch(forbidden.text, /id="account"/);
  });

  it('answers a request with a body on an account page with the JSON 403', async () => {
    const res = await server.request({ method: 'GET', path: '/gatehouse/account', headers: { host: APP }, body: {} });
    assertNotGatehouseOrigin(res, 'a GET with a body');
  });
});

describe('the first registration, from wherever a fresh install is reached', () => {
  it('is answered on a LAN address and on a listed host name, and only while no account exists', async () => {
    const server = await startTestServer({ GATEHOUSE_ALLOWED_HOSTS: 'gate.example.org' });
    try {
      const lan = at(server, '192.168.1.5:3000');
      const first = await lan.request({
        method: 'POST', path: '/api/auth/register',
        body: { username: 'first', password: 'first-password', client: CLIENT_SETTINGS, level: 10 },
      });
      assert.equal(first.status, 200, first.text);
      const second = await lan.request({
        method: 'POST', path: '/api/auth/register', token: first.cookieToken ?? '',
        body: { username: 'second', password: 'second-password', client: CLIENT_SETTINGS, level: 5 },
      });
      assertNotGatehouseOrigin(second, 'a second registration on a LAN address');
      const named = await at(server, 'gate.example.org').request({ path: '/api/auth/users', token: first.cookieToken ?? '' });
      assertNotGatehouseOrigin(named, 'listUsers on a listed host');
    } finally {
      await server.close();
    }
  });

  it('on a name nobody listed keeps its own refusal, HOST_NOT_ALLOWED', async () => {
    const server = await startTestServer({ GATEHOUSE_PUBLIC_URL: PUBLIC_URL });
    try {
      const res = await at(server, APP).request({
        method: 'POST', path: '/api/auth/register',
        body: { username: 'first', password: 'first-password', client: CLIENT_SETTINGS, level: 10 },
      });
      assertError(res, 403, 'HOST_NOT_ALLOWED');
    } finally {
      await server.close();
    }
  });
});
