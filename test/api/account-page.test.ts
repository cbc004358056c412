import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Script } from 'node:vm';
import { BUILT_SCRIPTS } from '../../src/pages/built-scripts.js';
import { assertError } from '../helpers/api.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

function only(pattern: RegExp, html: string): string {
  const matches = [...html.matchAll(pattern)];
  assert.equal(matches.length, 1, `expected exactly one match of ${pattern}`);
  return matches[0]?.[1] ?? '';
}

const scriptsOf = (html: string): string[] => [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] ?? '');
/** The sections' scripts (authenticator app, passkeys, sessions: each its feature's), then the page's, which hands them the page. */
const BUILT = [BUILT_SCRIPTS['totp/account-section'], BUILT_SCRIPTS['passkeys/account-section'], BUILT_SCRIPTS['sessions/account-section'], BUILT_SCRIPTS['pages/account']];
const styleOf = (html: string): string => only(/<style>([\s\S]*?)<\/style>/g, html);

describe('GET {base}/gatehouse/account', () => {
  let server: TestServer;
  let page: TestResponse;
  before(async () => {
    server = await startTestServer();
    page = await server.request({ path: '/gatehouse/account', headers: { accept: 'text/html' } });
  });
  after(() => server.close());

  it('serves the page to anyone (it holds no data; the script asks the API) with the page headers', () => {
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['set-cookie'], undefined);
    assert.match(page.text, /^<!doctype html>/);
  });

  it('allows its scripts built from pages/browser/account.entry.ts and its sections\' entries by their build-time hashes, its style by hash, fetches to its own origin, and images only as data: (the QR code)', () => {
    assert.deepEqual(scriptsOf(page.text), BUILT.map((built) => built.code));
    for (const built of BUILT) assert.equal(built.hash, `sha256-${sha256(built.code)}`);
    const csp = String(page.headers['content-security-policy']);
    assert.equal(
      csp,
      `default-src 'none'; script-src ${BUILT.map((built) => `'${built.hash}'`).join(' ')}; style-src 'sha256-${sha256(styleOf(page.text))}'; connect-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
  });

  it('shows its sections in order: password, authenticator app, passkeys, machine tokens, sessions', () => {
    assert.deepEqual([...page.text.matchAll(/<section id="([a-z-]+)"/g)].map((match) => match[1]), [
      'password-section', 'totp-section', 'passkeys-section', 'tokens-section', 'sessions-section',
    ]);
  });

  it('tells its script whether passkeys are offered as JSON data', () => {
    assert.deepEqual(JSON.parse(only(/<script type="application\/json" id="page-data">([^<]*)<\/script>/g, page.text)), { passkeysOffered: true });
  });

  it('loads nothing from anywhere and has no inline handler', () => {
    for (const pattern of [/\ssrc=/i, /@import/i, /:\/\//, /<link/i, /<iframe/i, /\saction=/i, /\son[a-z]+=/i]) {
      assert.doesNotMatch(page.text, pattern);
    }
    // Its only hrefs are its two links, relative: the users page (administrators) and the sign-out address.
    assert.deepEqual([...page.text.matchAll(/<([a-z]+)[^>]*\shref="([^"]*)"/gi)].map((match) => `${match[1]} ${match[2]}`), ['a users', 'a ../logout']);
    assert.doesNotMatch(styleOf(page.text), /url\(/i);
  });

  it('has scripts that parse and call the API by paths relative to {base}/gatehouse/; each writes answers as text only', () => {
    const scripts = scriptsOf(page.text);
    for (const one of scripts) assert.doesNotThrow(() => new Script(one));
    const script = scripts.join('\n');
    for (const path of ['account', 'account/password', 'account/totp', 'account/totp/confirm', 'account/totp/disable', 'account/passkeys/options', 'account/passkeys', 'account/passkeys/', 'account/tokens', 'account/tokens/', 'account/logout-everywhere']) {
      assert.ok([`"../api/auth/${path}"`, `\`../api/auth/${path}`].some((quoted) => script.includes(quoted)), path);
    }
    assert.ok(script.includes('`../login?rd='));
    assert.doesNotMatch(script, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    assert.doesNotMatch(script.replace(/["`]\.\.\/(api\/auth|login)[^"`]*["`]/g, ''), /["'`]\/?api\//, 'no path but relative ones');
  });

  it('says where a machine token passes: every gate but one asking for two factors without tokens=1 (as the gate judges, test/api/machine-tokens.test.ts)', () => {
    const section = only(/<section id="tokens-section">([\s\S]*?)<\/section>/g, page.text).replace(/<[^>]+>/g, '');
    assert.match(section, /passes every gate your account passes, except one that asks for two factors \(mfa=1, or a server setting requiring them\) without also saying tokens=1/);
  });

  it('answers HEAD with the headers and no body, and other methods with 405', async () => {
    const head = await server.request({ method: 'HEAD', path: '/gatehouse/account' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-security-policy'], page.headers['content-security-policy']);
    const post = await server.request({ method: 'POST', path: '/gatehouse/account' });
    assertError(post, 405);
    assert.equal(post.headers['allow'], 'GET, HEAD');
  });
});

describe('the account page under a base URI', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ GATEHOUSE_BASE_URI: '/flood' });
  });
  after(() => server.close());

  it('is served at {base}/gatehouse/account, and its relative paths resolve under the base', async () => {
    assert.equal((await server.request({ path: '/flood/gatehouse/account' })).status, 200);
    assertError(await server.request({ path: '/gatehouse/account' }), 404);
    const here = 'https://x.example/flood/gatehouse/account';
    assert.equal(new URL('../api/auth/account', here).pathname, '/flood/api/auth/account');
    assert.equal(new URL('../login?rd=x', here).pathname, '/flood/login');
  });
});
