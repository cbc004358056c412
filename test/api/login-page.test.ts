import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Script } from 'node:vm';
import { buildLoginPage } from '../../src/routes/login-page.js';
import { safeRedirectTarget } from '../../src/routes/redirect-target.js';
import { assertError } from '../helpers/api.js';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

function only(pattern: RegExp, html: string): string {
  const matches = [...html.matchAll(pattern)];
  assert.equal(matches.length, 1, `expected exactly one match of ${pattern}`);
  return matches[0]?.[1] ?? '';
}

const scriptOf = (html: string): string => only(/<script>([\s\S]*?)<\/script>/g, html);
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

  it('loads nothing from anywhere: no src, href, url(), @import or absolute URL', () => {
    for (const pattern of [/\ssrc=/i, /\shref=/i, /@import/i, /:\/\//, /<link/i, /<img/i, /<iframe/i, /\saction=/i]) {
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
    assert.ok(script.includes("'api/auth/authenticate'"));
    assert.ok(script.includes("'api/auth/verify'"));
    assert.ok(script.includes("credentials: 'same-origin'"));
    assert.ok(script.includes('.textContent'));
    assert.doesNotMatch(script, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });

  it('embeds the very rd function tested in node, and the allowed hosts from the settings', () => {
    const script = scriptOf(page.text);
    assert.ok(script.includes(safeRedirectTarget.toString()));
    assert.ok(script.includes('["app.example","flood.example"]'));
  });

  it('embeds an rd function that, evaluated from the page, decides as the tested one does', () => {
    const source = safeRedirectTarget.toString();
    const embedded = new Function(`${source}; return safeRedirectTarget;`)() as typeof safeRedirectTarget;
    const pageHref = 'https://auth.example/login';
    for (const rd of ['/x', 'https://app.example/y', '//evil.example', '/\\evil.example', 'javascript:alert(1)', 'http://app.example@evil.example', null]) {
      assert.equal(embedded(rd, pageHref, ['app.example']), safeRedirectTarget(rd, pageHref, ['app.example']), String(rd));
    }
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
  it('escapes the host list so nothing in it can close the script', () => {
    const page = buildLoginPage({ allowedRedirectHosts: ['</script><script>alert(1)</script>', '\u2028&'], sha256Base64: sha256 });
    const html = page.body.toString('utf8');
    assert.equal(html.match(/<\/script/gi)?.length, 1);
    const script = scriptOf(html);
    assert.doesNotThrow(() => new Script(script));
    assert.ok(String(page.headers['content-security-policy']).includes(`'sha256-${sha256(script)}'`));
  });

  it('computes the hashes over the page as baked, so different host lists give different script hashes', () => {
    const a = buildLoginPage({ allowedRedirectHosts: [], sha256Base64: sha256 });
    const b = buildLoginPage({ allowedRedirectHosts: ['app.example'], sha256Base64: sha256 });
    assert.notEqual(a.headers['content-security-policy'], b.headers['content-security-policy']);
  });
});

interface FakeAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Runs the page's script against a minimal fake DOM; `answers` maps a fetched path to its answer. */
async function runPageScript(pageHref: string, answers: Record<string, FakeAnswer>, allowedRedirectHosts: readonly string[] = []) {
  const html = buildLoginPage({ allowedRedirectHosts, sha256Base64: sha256 }).body.toString('utf8');
  const fetched: Array<{ url: string; init: Record<string, unknown> }> = [];
  const replaced: string[] = [];
  let onSubmit: ((event: { preventDefault(): void }) => void) | undefined;
  const username = { value: '', disabled: false };
  const password = { value: '', disabled: false };
  const button = { disabled: false };
  const elements = Object.assign([username, password, button], { username, password });
  const form = { elements, addEventListener: (type: string, listener: typeof onSubmit) => type === 'submit' && (onSubmit = listener) };
  const message = { textContent: '', hidden: true };
  const fetchStub = (url: string, init: Record<string, unknown>) => {
    fetched.push({ url, init });
    const answer = answers[url] ?? { status: 404, body: { code: 'NOT_FOUND', message: 'There is nothing at this path.' } };
    return Promise.resolve({ ok: answer.status >= 200 && answer.status < 300, status: answer.status, json: () => Promise.resolve(answer.body) });
  };
  const context = {
    document: { getElementById: (id: string) => (id === 'login' ? form : id === 'message' ? message : null) },
    location: { href: pageHref, search: new URL(pageHref).search, replace: (to: string) => replaced.push(to) },
    fetch: fetchStub,
    URL,
    URLSearchParams,
  };
  new Script(scriptOf(html)).runInNewContext(context);
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  await settle();
  return {
    fetched,
    replaced,
    message,
    elements: [username, password, button],
    async submit(name: string, secret: string) {
      username.value = name;
      password.value = secret;
      let prevented = false;
      onSubmit?.({ preventDefault: () => (prevented = true) });
      assert.ok(prevented, 'the form must never submit natively');
      for (let i = 0; i < 5; i += 1) await settle();
    },
  };
}

describe('the login page script (in a fake DOM; the real-browser run is the proxies suite)', () => {
  const unauthenticated = { 'api/auth/verify': { status: 401, body: { configs: {} } } };

  it('sends a visitor who already has a session straight on to rd', async () => {
    const page = await runPageScript(`https://auth.example/login?rd=${encodeURIComponent('https://app.example/x?y=1')}`, { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } } }, ['app.example']);
    assert.deepEqual(page.replaced, ['https://app.example/x?y=1']);
    assert.equal(page.fetched[0]?.init['credentials'], 'same-origin');
  });

  it('stays on the page without a session', async () => {
    const page = await runPageScript('https://auth.example/login?rd=/x', unauthenticated);
    assert.deepEqual(page.replaced, []);
    assert.equal(page.message.hidden, true);
  });

  it('logs in with a JSON POST and then goes to rd', async () => {
    const page = await runPageScript('https://auth.example/login?rd=%2Ftorrents', { ...unauthenticated, 'api/auth/authenticate': { status: 200, body: { success: true, username: 'ada', level: 5 } } });
    await page.submit('ada', 'pw "quoted"');
    const post = page.fetched[1];
    assert.equal(post?.url, 'api/auth/authenticate');
    assert.equal(post?.init['method'], 'POST');
    assert.equal(post?.init['credentials'], 'same-origin');
    assert.deepEqual(JSON.parse(JSON.stringify(post?.init['headers'])), { accept: 'application/json', 'content-type': 'application/json' });
    assert.deepEqual(JSON.parse(String(post?.init['body'])), { username: 'ada', password: 'pw "quoted"' });
    assert.deepEqual(page.replaced, ['https://auth.example/torrents']);
  });

  it('shows the server message as text on failure and enables the form again', async () => {
    const message = '<img src=x onerror=alert(1)> Username or password is incorrect.';
    const page = await runPageScript('https://auth.example/login', { ...unauthenticated, 'api/auth/authenticate': { status: 401, body: { code: 'INVALID_CREDENTIALS', message } } });
    await page.submit('ada', 'wrong');
    assert.equal(page.message.textContent, message);
    assert.equal(page.message.hidden, false);
    assert.ok(page.elements.every((element) => !element.disabled));
    assert.deepEqual(page.replaced, []);
  });

  it('goes to / after a login when rd points at another site', async () => {
    const page = await runPageScript(`https://auth.example/login?rd=${encodeURIComponent('//evil.example/')}`, { ...unauthenticated, 'api/auth/authenticate': { status: 200, body: { success: true } } });
    await page.submit('ada', 'pw');
    assert.deepEqual(page.replaced, ['/']);
  });

  it('says so when no account exists yet', async () => {
    const page = await runPageScript('https://auth.example/login', { 'api/auth/verify': { status: 200, body: { initialUser: true, configs: {} } } });
    assert.deepEqual(page.replaced, []);
    assert.equal(page.message.hidden, false);
  });
});
