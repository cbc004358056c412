import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, startPopulatedServer } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const LOOP_WARNING = 'the login page is behind the gate';

function forward(server: TestServer, login: string, headers: Record<string, string>): Promise<TestResponse> {
  return server.request({ path: `/api/auth/forward?login=${encodeURIComponent(login)}`, headers: { accept: BROWSER, ...headers } });
}

function loopWarnings(server: TestServer): string[] {
  return server.logs.filter((line) => line.includes(LOOP_WARNING));
}

describe('the forward endpoint never redirects to a login page that is itself gated', () => {
  let server: TestServer;
  before(async () => {
    ({ server } = await startPopulatedServer({ GATEHOUSE_ALLOWED_REDIRECT_HOSTS: 'auth.example' }));
  });
  after(() => server.close());

  it('answers 401, not 302, when the login page itself reaches the check, and logs a warning saying what to route', async () => {
    const before = loopWarnings(server).length;
    // Caddy and Traefik send X-Forwarded-Uri; nginx's login location sends it too, and its check X-Original-URI.
    const cases: ReadonlyArray<Record<string, string>> = [
      { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/login' },
      { 'x-forwarded-uri': '/login?rd=https%3A%2F%2Fapp.example%2F' },
      { 'x-original-uri': '/login?rd=%2Flogin%3Frd%3D%252F' },
      { 'x-forwarded-uri': '/%6Cogin' },
    ];
    for (const headers of cases) {
      const res = await forward(server, '/login', headers);
      assertError(res, 401);
      assert.equal(res.headers['location'], undefined, JSON.stringify(headers));
    }
    const warnings = loopWarnings(server).slice(before);
    assert.equal(warnings.length, 1, 'warned once, not per request');
    assert.match(warnings[0] ?? '', /Route the login page/);
  });

  it('warns again once a minute has passed while the loop goes on', async () => {
    const before = loopWarnings(server).length;
    server.clock.advanceSeconds(61);
    assertError(await forward(server, '/login', { 'x-forwarded-uri': '/login' }), 401);
    assertError(await forward(server, '/login', { 'x-forwarded-uri': '/login' }), 401);
    assert.equal(loopWarnings(server).length - before, 1);
  });

  it('compares a login URL with a query by its path, and an absolute one by its host too', async () => {
    assertError(await forward(server, '/auth/login?theme=dark', { 'x-forwarded-uri': '/auth/login?rd=x' }), 401);
    const absolute = 'https://auth.example/login';
    assertError(await forward(server, absolute, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'auth.example', 'x-forwarded-uri': '/login' }), 401);
    assertError(await forward(server, absolute, { host: 'AUTH.example:443', 'x-original-uri': '/login' }), 401);
  });

  it('still redirects every other page, including one only named like the login page', async () => {
    const cases: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ['/login', { 'x-forwarded-uri': '/' }],
      ['/login', { 'x-forwarded-uri': '/login/' }],
      ['/login', { 'x-forwarded-uri': '/app/login' }],
      ['/login', { 'x-forwarded-uri': '/logins?x=/login' }],
      // The login page on another host: this host's own /login is the app's.
      ['https://auth.example/login', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/login' }],
      // Host unknown: not judged a loop.
      ['https://auth.example/login', { 'x-forwarded-uri': '/login' }],
    ];
    for (const [login, headers] of cases) {
      const res = await forward(server, login, headers);
      assert.equal(res.status, 302, `${login} ${JSON.stringify(headers)}: ${res.status}`);
    }
  });

  it('answers API clients 401 as before, with no warning', async () => {
    const before = loopWarnings(server).length;
    server.clock.advanceSeconds(61);
    assertError(await server.request({ path: '/api/auth/forward?login=/login', headers: { accept: 'application/json', 'x-forwarded-uri': '/login' } }), 401);
    assert.equal(loopWarnings(server).length, before);
  });
});
