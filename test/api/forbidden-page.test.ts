import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, createUser, login, startPopulatedServer, uniqueName, type TestUser } from '../helpers/api.js';
import type { TestResponse, TestServer } from '../helpers/server.js';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const CADDY = { accept: BROWSER, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/admin/reports?y=2026' };

function forward(server: TestServer, token: string, query: string, headers: Record<string, string> = CADDY): Promise<TestResponse> {
  return server.request({ path: `/api/auth/forward${query}`, token, headers });
}

function linkOf(html: string): string | undefined {
  const href = /<a id="switch" href="([^"]*)"/.exec(html)?.[1];
  return href?.replaceAll('&amp;', '&');
}

describe('the 403 page a browser gets from the gate', () => {
  let server: TestServer;
  let root: TestUser;
  let user: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
    user = await createUser(server, root.token, { level: 5, prefix: 'a<b>&"c' });
  });
  after(() => server.close());

  it('says who is signed in and that the page needs an administrator, with a link to sign in as someone else that comes back', async () => {
    const res = await forward(server, user.token, '?level=ADMINISTRATOR&login=/login');
    assert.equal(res.status, 403);
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text));
    assert.equal(res.headers['remote-user'], undefined);
    assert.ok(res.text.includes(`<strong id="username">${user.username.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')}</strong>`), res.text);
    assert.ok(!res.text.includes('a<b>'), 'the name is escaped');
    assert.match(res.text, /<li>an administrator account<\/li>/);
    assert.equal(linkOf(res.text), `/logout?rd=${encodeURIComponent('https://app.example/admin/reports?y=2026')}`);
  });

  it('names the groups that would do, and both when level and group are missing', async () => {
    const username = uniqueName('wiki');
    assert.equal((await server.request({ method: 'POST', path: '/api/auth/users', token: root.token, body: { username, password: `${username}-pw`, level: 'USER', groups: ['media'] } })).status, 200);
    const token = (await login(server, username, `${username}-pw`)).cookieToken ?? '';
    const one = await forward(server, token, '?group=ops&login=/login');
    assert.equal(one.status, 403);
    assert.match(one.text, /membership in the group <code>ops<\/code>/);
    assert.doesNotMatch(one.text, /administrator account/);
    const both = await forward(server, token, '?level=ADMINISTRATOR&group=ops,admins&login=/login');
    assert.match(both.text, /<li>an administrator account<\/li>/);
    assert.match(both.text, /membership in one of the groups <code>ops<\/code>, <code>admins<\/code>/);
  });

  it('links to the sign-out page beside an absolute or nested login URL, and has no link without login=', async () => {
    const absolute = await forward(server, user.token, `?level=ADMINISTRATOR&login=${encodeURIComponent('https://app.example/auth/login?theme=dark')}`);
    // Not an allowed redirect host here: no link to another site.
    assert.equal(linkOf(absolute.text), undefined);
    const nested = await forward(server, user.token, `?level=ADMINISTRATOR&login=${encodeURIComponent('/auth/login?theme=dark')}`);
    assert.match(linkOf(nested.text) ?? '', /^\/auth\/logout\?rd=/);
    const bare = await forward(server, user.token, '?level=ADMINISTRATOR');
    assert.equal(bare.status, 403);
    assert.equal(linkOf(bare.text), undefined);
    assert.match(bare.text, /Ask an administrator for access/);
    const odd = await forward(server, user.token, `?level=ADMINISTRATOR&login=${encodeURIComponent('/signin')}`);
    assert.equal(linkOf(odd.text), undefined);
  });

  it('keeps the JSON refusal for API clients and for a misconfigured forward URL', async () => {
    assertError(await forward(server, user.token, '?level=ADMINISTRATOR&login=/login', { accept: 'application/json' }), 403, 'NOT_ADMINISTRATOR');
    assertError(await forward(server, user.token, '?level=typo&login=/login'), 403, 'UNKNOWN_LEVEL');
  });
});
