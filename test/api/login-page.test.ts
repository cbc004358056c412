import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Script } from 'node:vm';
import { BUILT_SCRIPTS } from '../../src/pages/built-scripts.js';
import { buildLoginPage } from '../../src/routes/login-page.js';
import { assertError } from '../helpers/api.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

function only(pattern: RegExp, html: string): string {
  const matches = [...html.matchAll(pattern)];
  assert.equal(matches.length, 1, `expected exactly one match of ${pattern}`);
  return matches[0]?.[1] ?? '';
}

const scriptOf = (html: string): string => only(/<script>([\s\S]*?)<\/script>/g, html);
const dataOf = (html: string): unknown => JSON.parse(only(/<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/g, html));
const styleOf = (html: string): string => only(/<style>([\s\S]*?)<\/style>/g, html);

function assertPageHeaders(res: TestResponse): void {
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.equal(res.headers['referrer-policy'], 'no-referrer');
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.match(
    String(res.headers['content-security-policy']),
    /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]{43}='; style-src 'sha256-[A-Za-z0-9+/]{43}='; connect-src 'self'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
  );
  assert.equal(res.headers['set-cookie'], undefined);
}

describe('GET {base}/login', () => {
  let server: TestServer;
  let page: TestResponse;
  before(async () => {
    server = await startTestServer({ GATEHOUSE_ALLOWED_REDIRECT_HOSTS: 'app.example,Flood.Example' });
    page = await server.request({ path: '/login', headers: { accept: 'text/html' } });
  });
  after(() => server.close());

  it('serves the page with its security headers', () => {
    assert.equal(page.status, 200);
    assertPageHeaders(page);
    assert.equal(Number(page.headers['content-length']), Buffer.byteLength(page.text));
    assert.match(page.text, /^<!doctype html>/);
  });

  it('names in its CSP the hashes of exactly its one inline script and one inline style', () => {
    const csp = String(page.headers['content-security-policy']);
    assert.ok(csp.includes(`script-src 'sha256-${sha256(scriptOf(page.text))}'`), csp);
    assert.ok(csp.includes(`style-src 'sha256-${sha256(styleOf(page.text))}'`), csp);
  });

  it('loads nothing from anywhere: no src, no href but the relative link to the account page, url(), @import or absolute URL', () => {
    for (const pattern of [/\ssrc=/i, /\shref="(?!gatehouse\/account")/i, /@import/i, /:\/\//, /<link/i, /<img/i, /<iframe/i, /\saction=/i]) {
      assert.doesNotMatch(page.text, pattern);
    }
    assert.doesNotMatch(styleOf(page.text), /url\(/i);
  });

  it('posts the form nowhere but here, so a password never lands in a URL without script', () => {
    assert.match(page.text, /<form id="login" method="post">/);
  });

  it('has a script that parses, uses relative API paths, and writes messages as text only', () => {
    const script = scriptOf(page.text);
    assert.doesNotThrow(() => new Script(script));
    assert.match(script, /["']api\/auth\/authenticate["']/);
    assert.match(script, /["']api\/auth\/verify["']/);
    assert.match(script, /credentials: ["']same-origin["']/);
    assert.ok(script.includes('.textContent'));
    assert.doesNotMatch(script, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });

  it('runs the script built from pages/browser/sign-in.entry.ts, whose hash was computed at build time', () => {
    const built = BUILT_SCRIPTS['pages/sign-in'];
    assert.equal(scriptOf(page.text), built.code);
    assert.equal(built.hash, `sha256-${sha256(built.code)}`);
    assert.ok(String(page.headers['content-security-policy']).includes(`script-src '${built.hash}';`));
  });

  it('carries the allowed hosts and cookie settings as JSON data, not inside its script', () => {
    assert.deepEqual(dataOf(page.text), { allowedHosts: ['app.example', 'flood.example'], cookieIsSecure: false, cookieDomain: null, passkeysOffered: true, siteName: null });
    assert.doesNotMatch(scriptOf(page.text), /app\.example/);
  });

  it('serves the same bytes every time (built once at start-up)', async () => {
    const again = await server.request({ path: '/login' });
    assert.equal(again.text, page.text);
    assert.equal(again.headers['content-security-policy'], page.headers['content-security-policy']);
  });

  it('ignores its query string (rd is read by the script, never echoed by the server)', async () => {
    const res = await server.request({ path: '/login?rd=%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E' });
    assert.equal(res.status, 200);
    assert.equal(res.text, page.text);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await server.request({ method: 'HEAD', path: '/login' });
    assert.equal(res.status, 200);
    assertPageHeaders(res);
    assert.equal(res.headers['content-length'], page.headers['content-length']);
    assert.equal(res.text, '');
  });

  for (const method of ['POST', 'PUT', 'DELETE']) {
    it(`answers ${method} with 405 and Allow: GET, HEAD`, async () => {
      const res = await server.request({ method, path: '/login' });
      assertError(res, 405);
      assert.equal(res.headers['allow'], 'GET, HEAD');
    });
  }
});

describe('the login page under a base URI', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ GATEHOUSE_BASE_URI: '/flood' });
  });
  after(() => server.close());

  it('is served at {base}/login, and its relative API paths resolve under the base', async () => {
    const res = await server.request({ path: '/flood/login' });
    assert.equal(res.status, 200);
    assertPageHeaders(res);
    assert.equal(new URL('api/auth/authenticate', 'https://x.example/flood/login').pathname, '/flood/api/auth/authenticate');
  });

  it('is not at the root', async () => {
    assertError(await server.request({ path: '/login' }), 404);
  });
});

describe('buildLoginPage', () => {
  it('keeps hostile settings inside the JSON data: nothing in them can close the element', () => {
    const hosts = ['</script><script>alert(1)</script>', '\u2028&'];
    const page = buildLoginPage({ allowedRedirectHosts: hosts, siteName: '</script><!--', sha256Base64: sha256 });
    const html = page.body.toString('utf8');
    assert.equal(html.match(/<\/script/gi)?.length, 2, 'the data block and the script close, nothing else');
    assert.deepEqual((dataOf(html) as { allowedHosts: unknown }).allowedHosts, hosts);
    assert.equal(scriptOf(html), BUILT_SCRIPTS['pages/sign-in'].code);
  });

  it('serves the same script, with the same hash, whatever the settings: only the data differs', () => {
    const a = buildLoginPage({ allowedRedirectHosts: [], sha256Base64: sha256 });
    const b = buildLoginPage({ allowedRedirectHosts: ['app.example'], isCookieSecure: true, cookieDomain: 'example.org', isPasskeyOffered: false, siteName: 'Home', sha256Base64: sha256 });
    assert.equal(a.headers['content-security-policy'], b.headers['content-security-policy']);
    assert.equal(scriptOf(a.body.toString('utf8')), scriptOf(b.body.toString('utf8')));
    assert.deepEqual(dataOf(b.body.toString('utf8')), { allowedHosts: ['app.example'], cookieIsSecure: true, cookieDomain: 'example.org', passkeysOffered: false, siteName: 'Home' });
  });
});
