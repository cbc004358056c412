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

type Listener = (event: { preventDefault(): void }) => void;

/** An element of the fake DOM: what the page's script reads and writes, and its listeners. */
class FakeElement {
  value = '';
  disabled = false;
  hidden = false;
  textContent = '';
  className = '';
  focused = false;
  readonly listeners = new Map<string, Listener>();
  readonly elements: FakeElement[] & Record<string, FakeElement>;
  constructor(names: readonly string[] = []) {
    const children = names.map(() => new FakeElement());
    this.elements = Object.assign(children, Object.fromEntries(names.map((name, i) => [name, children[i]]))) as FakeElement[] & Record<string, FakeElement>;
  }
  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, listener);
  }
  focus(): void {
    this.focused = true;
  }
  select(): void {}
}

interface FakeOptions {
  readonly allowedRedirectHosts?: readonly string[];
  readonly isCookieSecure?: boolean;
  /** --cookie-domain, baked into the page. */
  readonly cookieDomain?: string;
  readonly isSecureContext?: boolean;
  /** Whether the browser offers WebAuthn here (it does not on plain http to a name). Default true. */
  readonly hasPasskeyApi?: boolean;
  /** What navigator.credentials.get resolves with (a passkey assertion), when the page asks. */
  readonly assertion?: unknown;
}

/** Runs the page's script against a minimal fake DOM; `answers` maps a fetched path to its answer. */
async function runPageScript(pageHref: string, answers: Record<string, FakeAnswer | FakeAnswer[]>, options: FakeOptions = {}) {
  const html = buildLoginPage({
    allowedRedirectHosts: options.allowedRedirectHosts ?? [],
    isCookieSecure: options.isCookieSecure ?? false,
    ...(options.cookieDomain === undefined ? {} : { cookieDomain: options.cookieDomain }),
    sha256Base64: sha256,
  }).body.toString('utf8');
  const fetched: Array<{ url: string; init: Record<string, unknown> }> = [];
  const replaced: string[] = [];
  const elements = new Map<string, FakeElement>([
    ['login', new FakeElement(['username', 'password', 'submit'])],
    ['code-step', new FakeElement(['code', 'submit', 'back'])],
  ]);
  elements.get('code-step')!.hidden = true;
  const element = (id: string): FakeElement => {
    let found = elements.get(id);
    if (found === undefined) {
      found = new FakeElement();
      found.hidden = /(^|-)(message|note|step)$/.test(id) && id !== 'passkey-step';
      elements.set(id, found);
    }
    return found;
  };
  const requests: unknown[] = [];
  const fetchStub = (url: string, init: Record<string, unknown>) => {
    fetched.push({ url, init });
    const listed = answers[url];
    const answer = (Array.isArray(listed) ? listed.shift() : listed) ?? { status: 404, body: { code: 'NOT_FOUND', message: 'There is nothing at this path.' } };
    return Promise.resolve({ ok: answer.status >= 200 && answer.status < 300, status: answer.status, json: () => Promise.resolve(answer.body) });
  };
  const context = {
    document: { getElementById: element },
    location: { href: pageHref, search: new URL(pageHref).search, hostname: new URL(pageHref).hostname, protocol: new URL(pageHref).protocol, replace: (to: string) => replaced.push(to) },
    window: { isSecureContext: options.isSecureContext ?? true, ...(options.hasPasskeyApi === false ? {} : { PublicKeyCredential: function PublicKeyCredential() {} }) },
    navigator: {
      credentials: {
        get: (request: unknown) => {
          requests.push(request);
          return Promise.resolve(options.assertion ?? null);
        },
      },
    },
    fetch: fetchStub,
    URL,
    URLSearchParams,
    btoa,
    atob,
    Uint8Array,
  };
  new Script(scriptOf(html)).runInNewContext(context);
  const settle = async () => {
    for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
  };
  await settle();
  const fire = async (id: string, type: string) => {
    let prevented = false;
    element(id).listeners.get(type)?.({ preventDefault: () => (prevented = true) });
    await settle();
    return prevented;
  };
  const login = element('login');
  return {
    fetched,
    replaced,
    requests,
    element,
    message: element('message'),
    elements: [...login.elements],
    async submit(name: string, secret: string) {
      login.elements['username']!.value = name;
      login.elements['password']!.value = secret;
      assert.ok(await fire('login', 'submit'), 'the form must never submit natively');
    },
    async submitCode(code: string) {
      element('code-step').elements['code']!.value = code;
      assert.ok(await fire('code-step', 'submit'), 'the form must never submit natively');
    },
    click: (id: string) => fire(id, 'click'),
  };
}

const bodyOf = (call: { init: Record<string, unknown> } | undefined): unknown => JSON.parse(String(call?.init['body']));

describe('the login page script (in a fake DOM; the real-browser run is the proxies suite)', () => {
  const unauthenticated = { 'api/auth/verify': { status: 401, body: { configs: {} } } };
  const signedIn = { 'api/auth/authenticate': { status: 200, body: { success: true, username: 'ada', level: 5 } }, 'api/auth/probe': { status: 200, body: { probe: 'gatehouse', jwtCookie: true } } };

  it('sends a visitor who already has a session straight on to rd', async () => {
    const page = await runPageScript(`https://auth.example/login?rd=${encodeURIComponent('https://app.example/x?y=1')}`, { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } } }, { allowedRedirectHosts: ['app.example'] });
    assert.deepEqual(page.replaced, ['https://app.example/x?y=1']);
    assert.equal(page.fetched[0]?.init['credentials'], 'same-origin');
  });

  it('stays on the page without a session', async () => {
    const page = await runPageScript('https://auth.example/login?rd=/x', unauthenticated);
    assert.deepEqual(page.replaced, []);
    assert.equal(page.message.hidden, true);
  });

  it('logs in with a JSON POST, asks the probe whether the session cookie was kept, and then goes to rd', async () => {
    const page = await runPageScript('https://auth.example/login?rd=%2Ftorrents', { ...unauthenticated, ...signedIn });
    await page.submit('ada', 'pw "quoted"');
    const post = page.fetched[1];
    assert.equal(post?.url, 'api/auth/authenticate');
    assert.equal(post?.init['method'], 'POST');
    assert.equal(post?.init['credentials'], 'same-origin');
    assert.deepEqual(JSON.parse(JSON.stringify(post?.init['headers'])), { accept: 'application/json', 'content-type': 'application/json' });
    assert.deepEqual(bodyOf(post), { username: 'ada', password: 'pw "quoted"' });
    assert.equal(page.fetched[2]?.url, 'api/auth/probe');
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
    const page = await runPageScript(`https://auth.example/login?rd=${encodeURIComponent('//evil.example/')}`, { ...unauthenticated, ...signedIn });
    await page.submit('ada', 'pw');
    assert.deepEqual(page.replaced, ['/']);
  });

  it('says so when no account exists yet', async () => {
    const page = await runPageScript('https://auth.example/login', { 'api/auth/verify': { status: 200, body: { initialUser: true, configs: {} } } });
    assert.deepEqual(page.replaced, []);
    assert.equal(page.message.hidden, false);
  });

  it('asks for a code after SECOND_FACTOR_REQUIRED and signs in with the password and that code', async () => {
    const page = await runPageScript('https://auth.example/login?rd=%2Fx', {
      ...unauthenticated,
      'api/auth/authenticate': [
        { status: 401, body: { code: 'SECOND_FACTOR_REQUIRED', message: 'Enter the code from your authenticator app.' } },
        { status: 401, body: { code: 'INVALID_CREDENTIALS', message: 'That code is not right.' } },
        { status: 200, body: { success: true, username: 'ada', level: 5 } },
      ],
      'api/auth/probe': { status: 200, body: { probe: 'gatehouse', jwtCookie: true } },
    });
    await page.submit('ada', 'pw');
    assert.equal(page.element('login').hidden, true);
    assert.equal(page.element('code-step').hidden, false);
    assert.equal(page.message.hidden, true, 'the second-factor answer is a step, not an error');
    await page.submitCode(' 123456 ');
    assert.equal(page.element('code-message').textContent, 'That code is not right.');
    assert.deepEqual(page.replaced, []);
    await page.submitCode('abcd-efgh');
    assert.deepEqual(bodyOf(page.fetched.at(-2)), { username: 'ada', password: 'pw', code: 'abcd-efgh' });
    assert.deepEqual(bodyOf(page.fetched.filter((call) => call.url === 'api/auth/authenticate')[1]), { username: 'ada', password: 'pw', code: '123456' });
    assert.deepEqual(page.replaced, ['https://auth.example/x']);
  });

  it('warns instead of leaving when the browser did not keep the session cookie', async () => {
    const page = await runPageScript('https://auth.example/login?rd=%2Fx', { ...unauthenticated, ...signedIn, 'api/auth/probe': { status: 200, body: { probe: 'gatehouse', jwtCookie: false } } });
    await page.submit('ada', 'pw');
    assert.deepEqual(page.replaced, []);
    assert.match(page.message.textContent, /did not keep the session cookie/);
    assert.ok(page.elements.every((element) => !element.disabled));
  });

  it('leaves when the probe does not answer (not routed on this site): that says nothing of the cookie', async () => {
    const { 'api/auth/probe': _kept, ...withoutProbe } = { ...unauthenticated, ...signedIn };
    const page = await runPageScript('https://app.example/login?rd=%2Fx', withoutProbe);
    await page.submit('ada', 'pw');
    assert.equal(page.fetched[2]?.url, 'api/auth/probe');
    assert.deepEqual(page.replaced, ['https://app.example/x']);
  });

  it('warns at once when the cookie is Secure and the page is not a secure context, and names http when the cookie was dropped on http', async () => {
    const dropped = { ...unauthenticated, ...signedIn, 'api/auth/probe': { status: 200, body: { jwtCookie: false } } };
    const page = await runPageScript('http://auth.example/login', dropped, { isCookieSecure: true, isSecureContext: false });
    assert.equal(page.element('cookie-note').hidden, false);
    assert.match(page.element('cookie-note').textContent, /https/);
    await page.submit('ada', 'pw');
    assert.match(page.message.textContent, /did not keep the session cookie/);
    const behindHttpsProxy = await runPageScript('http://auth.example/login', dropped, { isCookieSecure: false, isSecureContext: false });
    assert.equal(behindHttpsProxy.element('cookie-note').hidden, true);
    await behindHttpsProxy.submit('ada', 'pw');
    assert.match(behindHttpsProxy.message.textContent, /opened over http/);
    const quiet = await runPageScript('http://localhost/login', unauthenticated, { isCookieSecure: true, isSecureContext: true });
    assert.equal(quiet.element('cookie-note').hidden, true);
  });

  it('with a --cookie-domain that does not cover the page\'s host, says so at once and after a right password, names neither http nor Secure, and keeps passkeys off', async () => {
    const dropped = { ...unauthenticated, ...signedIn, 'api/auth/probe': { status: 200, body: { jwtCookie: false } } };
    // Plain http to a name: not a secure context, and no WebAuthn, as in a real browser.
    const page = await runPageScript('http://auth.other.example/login', dropped, { cookieDomain: 'example.org', isSecureContext: false, hasPasskeyApi: false });
    const note = page.element('cookie-note');
    assert.equal(note.hidden, false);
    assert.match(note.textContent, /auth\.other\.example/);
    assert.match(note.textContent, /set for example\.org \(--cookie-domain\), which does not cover auth\.other\.example/);
    assert.doesNotMatch(note.textContent, /Secure|https/);
    assert.equal(page.element('passkey').disabled, true);
    await page.submit('ada', 'pw');
    assert.match(page.message.textContent, /did not keep the session cookie/);
    assert.doesNotMatch(page.message.textContent, /opened over http|Secure/);
    assert.equal(page.element('passkey').disabled, true, 'a refused cookie does not turn passkeys back on where they cannot work');
    assert.ok(page.elements.every((element) => !element.disabled), 'the password form can be used again');

    // Over https, with WebAuthn there: the cookie could not be kept either, so neither could a passkey sign-in.
    const https = await runPageScript('https://auth.other.example/login', dropped, { cookieDomain: 'example.org' });
    assert.equal(https.element('cookie-note').hidden, false);
    assert.equal(https.element('passkey').disabled, true);
    assert.match(https.element('passkey-message').textContent, /see above/i);
  });

  it('takes a --cookie-domain to cover that host and its sub-domains only (RFC 6265 domain-match), never an IP address', async () => {
    const covered = async (href: string) => (await runPageScript(href, unauthenticated, { cookieDomain: 'example.org' })).element('cookie-note').hidden;
    assert.equal(await covered('https://example.org/login'), true);
    assert.equal(await covered('https://auth.example.org/login'), true);
    assert.equal(await covered('https://a.b.example.org:8443/login'), true);
    assert.equal(await covered('https://badexample.org/login'), false);
    assert.equal(await covered('https://example.org.evil.test/login'), false);
    assert.equal(await covered('https://127.0.0.1/login'), false);
    assert.equal(await covered('https://[::1]/login'), false);
    const hostOnly = await runPageScript('https://127.0.0.1/login', unauthenticated);
    assert.equal(hostOnly.element('cookie-note').hidden, true, 'without --cookie-domain the cookie is host-only and always fits');
    assert.equal(hostOnly.element('passkey').disabled, false);
  });

  it('after a cookie the browser dropped, turns the passkey button back on only where passkeys work', async () => {
    const dropped = { ...unauthenticated, ...signedIn, 'api/auth/probe': { status: 200, body: { jwtCookie: false } } };
    const noWebAuthn = await runPageScript('http://auth.example/login', dropped, { isSecureContext: false, hasPasskeyApi: false });
    assert.equal(noWebAuthn.element('passkey').disabled, true);
    await noWebAuthn.submit('ada', 'pw');
    assert.match(noWebAuthn.message.textContent, /did not keep the session cookie/);
    assert.equal(noWebAuthn.element('passkey').disabled, true);
    // A secure context, nothing known wrong with the cookie: the browser refused it.
    const refused = await runPageScript('https://auth.example/login', dropped);
    await refused.submit('ada', 'pw');
    assert.match(refused.message.textContent, /accepts cookies/);
    assert.doesNotMatch(refused.message.textContent, /opened over http|--cookie-domain/);
    assert.equal(refused.element('passkey').disabled, false);
  });

  it('with mfa=1, does not send an existing session back, and after a password-only sign-in points to the account page', async () => {
    const page = await runPageScript('https://auth.example/login?mfa=1&rd=%2Fx', { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } }, ...signedIn });
    assert.deepEqual(page.replaced, []);
    assert.equal(page.element('mfa-note').hidden, false);
    await page.submit('ada', 'pw');
    assert.deepEqual(page.replaced, []);
    assert.equal(page.element('setup-step').hidden, false);
    assert.equal(page.element('login').hidden, true);
  });

  it('with mfa=setup (the gate saw an account without a second factor), points to the account page at once', async () => {
    const page = await runPageScript('https://auth.example/login?mfa=setup&rd=%2Fx', { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } } });
    assert.deepEqual(page.replaced, []);
    assert.equal(page.element('setup-note').hidden, false);
    assert.equal(page.element('mfa-note').hidden, false);
    const code = await runPageScript('https://auth.example/login?mfa=code&rd=%2Fx', unauthenticated);
    assert.equal(code.element('setup-note').hidden, true);
    assert.equal(code.element('mfa-note').hidden, false);
  });

  it('with mfa=code, leaves after a sign-in with a code', async () => {
    const page = await runPageScript('https://auth.example/login?mfa=code&rd=%2Fx', {
      ...unauthenticated,
      'api/auth/authenticate': [{ status: 401, body: { code: 'SECOND_FACTOR_REQUIRED', message: 'm' } }, { status: 200, body: { success: true } }],
      'api/auth/probe': { status: 200, body: { jwtCookie: true } },
    });
    await page.submit('ada', 'pw');
    await page.submitCode('123456');
    assert.deepEqual(page.replaced, ['https://auth.example/x']);
  });

  it('signs in with a passkey: options (with the username when typed), the browser\'s assertion as JSON, then rd', async () => {
    const bytes = (...values: number[]) => Uint8Array.from(values).buffer;
    const assertion = {
      id: 'AQID',
      rawId: bytes(1, 2, 3),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: { clientDataJSON: bytes(123, 125), authenticatorData: bytes(250, 251), signature: bytes(48, 0), userHandle: bytes(9) },
    };
    const answers = {
      ...unauthenticated,
      'api/auth/passkey/options': { status: 200, body: { challenge: 'AAEC_-8', rpId: 'auth.example', timeout: 60000, userVerification: 'preferred', allowCredentials: [{ type: 'public-key', id: 'AQID' }] } },
      'api/auth/passkey': { status: 200, body: { success: true, username: 'ada', level: 5 } },
      'api/auth/probe': { status: 200, body: { jwtCookie: true } },
    };
    const page = await runPageScript('https://auth.example/login?rd=%2Fx', answers, { assertion });
    page.element('login').elements['username']!.value = 'ada';
    await page.click('passkey');
    assert.deepEqual(bodyOf(page.fetched[1]), { username: 'ada' });
    const request = page.requests[0] as { publicKey: { challenge: ArrayBuffer; allowCredentials: Array<{ id: ArrayBuffer }>; rpId: string } };
    assert.deepEqual([...new Uint8Array(request.publicKey.challenge)], [0, 1, 2, 255, 239]);
    assert.deepEqual([...new Uint8Array(request.publicKey.allowCredentials[0]!.id)], [1, 2, 3]);
    assert.equal(request.publicKey.rpId, 'auth.example');
    assert.deepEqual(bodyOf(page.fetched[2]), {
      credential: {
        id: 'AQID',
        rawId: 'AQID',
        type: 'public-key',
        response: { clientDataJSON: 'e30', authenticatorData: '-vs', signature: 'MAA', userHandle: 'CQ' },
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
      },
    });
    assert.deepEqual(page.replaced, ['https://auth.example/x']);

    const discoverable = await runPageScript('https://auth.example/login', { ...answers, 'api/auth/passkey/options': { ...answers['api/auth/passkey/options'], body: { challenge: 'AA', allowCredentials: [] } } }, { assertion });
    await discoverable.click('passkey');
    assert.deepEqual(bodyOf(discoverable.fetched[1]), {}, 'no username: a discoverable credential names its account');
  });

  it('shows the refusal and stays when the passkey does not verify', async () => {
    const page = await runPageScript(
      'https://auth.example/login',
      { ...unauthenticated, 'api/auth/passkey/options': { status: 200, body: { challenge: 'AA' } }, 'api/auth/passkey': { status: 401, body: { code: 'AUTH_FAILED', message: 'The passkey was not accepted.' } } },
      { assertion: { id: 'AQ', rawId: new Uint8Array([1]).buffer, type: 'public-key', response: { clientDataJSON: new ArrayBuffer(0), authenticatorData: new ArrayBuffer(0), signature: new ArrayBuffer(0), userHandle: null } } },
    );
    await page.click('passkey');
    assert.equal(page.element('passkey-message').textContent, 'The passkey was not accepted.');
    assert.equal(page.element('passkey').disabled, false);
    assert.deepEqual(page.replaced, []);
  });
});
