// The sign-in page as the server builds it (routes/login-page.ts, with the script bundled at build
// time), run in headless Chromium. The tab's requests are answered by the test (Chromium's Fetch
// domain): the page at any origin, https ones too (secure contexts, as a real deployment's), and the
// API's answers each test needs; the page's own script and CSP run as they do for a person.
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildLoginPage } from '../../../src/routes/login-page.js';
import { safeRedirectTarget } from '../../../src/pages/browser/redirect-target.js';
import { Chromium, type Page, type SeenRequest } from '../../helpers/chromium.js';

type LoginPageOptions = Parameters<typeof buildLoginPage>[0];

const sha256Base64 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

interface Answer {
  readonly status: number;
  readonly body: unknown;
}
/** Answers by path relative to the page ('api/auth/verify'); a list is used up in order. */
type Answers = Record<string, Answer | Answer[]>;

let browser: Chromium;
const tabs: Page[] = [];
before(async () => {
  browser = await Chromium.launch();
});
after(async () => {
  for (const tab of tabs) await tab.close();
  await browser.close();
});

interface LoginTab {
  readonly page: Page;
  /** The API calls the page made, in order: method, path relative to the page, parsed body. */
  api(): Array<{ method: string; path: string; body: unknown }>;
  /** Where the page sent the browser (location.replace), in order. */
  left(): string[];
  hidden(id: string): Promise<boolean>;
  text(id: string): Promise<string>;
  disabled(id: string): Promise<boolean>;
  submit(username: string, password: string): Promise<void>;
  submitCode(code: string): Promise<void>;
  /** Waits until the page has made `count` API calls and answered them; then lets it draw. */
  calls(count: number): Promise<void>;
}

/** Opens the sign-in page built with `options` at `href`, its API answered from `answers`. */
async function openLogin(href: string, answers: Answers, options: Partial<LoginPageOptions> = {}, setUp?: (page: Page) => Promise<void>): Promise<LoginTab> {
  const built = buildLoginPage({ allowedRedirectHosts: [], ...options, sha256Base64 });
  const page = await browser.newPage();
  tabs.push(page);
  if (setUp !== undefined) await setUp(page);
  const pageUrl = new URL(href);
  const apiBase = new URL('.', pageUrl);
  let isPageServed = false;
  const lists = new Map(Object.entries(answers).map(([path, answer]) => [path, Array.isArray(answer) ? [...answer] : answer]));
  const isApi = (request: SeenRequest): boolean => request.url.startsWith(apiBase.href) && new URL(request.url).pathname.startsWith(`${apiBase.pathname}api/`);
  await page.answerRequests((request) => {
    if (request.resourceType === 'Document') {
      if (!isPageServed && request.url === pageUrl.href) {
        isPageServed = true;
        return { status: 200, headers: built.headers as Record<string, string | number>, body: built.body };
      }
      return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'left the sign-in page' };
    }
    if (!isApi(request)) return { status: 404, body: '' };
    const listed = lists.get(new URL(request.url).pathname.slice(apiBase.pathname.length));
    const answer = (Array.isArray(listed) ? listed.shift() : listed) ?? { status: 404, body: { code: 'NOT_FOUND', message: 'There is nothing at this path.' } };
    // undefined: a body that is not JSON (a proxy's error page).
    return { status: answer.status, headers: { 'content-type': 'application/json' }, body: answer.body === undefined ? '<html>Bad Gateway</html>' : JSON.stringify(answer.body) };
  });
  await page.navigate(href);
  const apiCalls = () => page.requests.filter(isApi).map((request) => ({
    method: request.method,
    path: new URL(request.url).pathname.slice(apiBase.pathname.length),
    body: request.postData === undefined ? undefined : JSON.parse(request.postData) as unknown,
  }));
  /** Fills the form's fields, submits it as a person would, and waits for the one API call it makes. */
  const submitForm = async (formId: string, fields: Record<string, string>): Promise<void> => {
    const count = apiCalls().length;
    const isPrevented = await page.evaluate<boolean>(`(() => {
      const form = document.getElementById(${JSON.stringify(formId)});
      for (const [name, value] of Object.entries(${JSON.stringify(fields)})) form.elements[name].value = value;
      const event = new SubmitEvent('submit', { cancelable: true });
      form.dispatchEvent(event);
      return event.defaultPrevented;
    })()`);
    assert.ok(isPrevented, 'the form must never submit natively');
    await tab.calls(count + 1);
  };
  const tab: LoginTab = {
    page,
    api: apiCalls,
    left: () => page.requests.filter((request) => request.resourceType === 'Document' && request.url !== pageUrl.href).map((request) => request.url),
    hidden: (id) => page.evaluate<boolean>(`document.getElementById(${JSON.stringify(id)}).hidden`),
    text: (id) => page.evaluate<string>(`document.getElementById(${JSON.stringify(id)}).textContent`),
    disabled: (id) => page.evaluate<boolean>(`document.getElementById(${JSON.stringify(id)}).disabled`),
    submit: (username, password) => submitForm('login', { username, password }),
    submitCode: (code) => submitForm('code-step', { code }),
    async calls(count) {
      const deadline = Date.now() + 10_000;
      while (apiCalls().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(apiCalls().length >= count, `the page made ${apiCalls().length} API calls, not ${count}`);
      // Answers are fulfilled at once; the page's handlers then run in a few tasks.
      await new Promise((resolve) => setTimeout(resolve, 150));
    },
  };
  await tab.calls(1); // api/auth/verify, which the script asks at once
  return tab;
}

const unauthenticated: Answers = { 'api/auth/verify': { status: 401, body: { configs: {} } } };
const signedIn: Answers = {
  'api/auth/authenticate': { status: 200, body: { success: true, username: 'ada', level: 5 } },
  'api/auth/probe': { status: 200, body: { probe: 'gatehouse', jwtCookie: true } },
};
const dropped: Answers = { ...unauthenticated, ...signedIn, 'api/auth/probe': { status: 200, body: { jwtCookie: false } } };

describe('the sign-in page in Chromium', () => {
  it('runs its built script under its own CSP, with nothing reported', async () => {
    const tab = await openLogin('https://auth.example/login', unauthenticated);
    assert.equal(await tab.page.evaluate<string>('document.title'), 'Sign in · auth.example');
    assert.equal(await tab.text('title'), 'Sign in to auth.example');
    assert.deepEqual(tab.page.problems.filter((problem) => !/status of 401/.test(problem.text)), []);
    const named = await openLogin('https://auth.example/login', unauthenticated, { siteName: 'The <b>Family</b>' });
    assert.equal(await named.text('title'), 'Sign in to The <b>Family</b>');
  });

  it('sends a visitor who already has a session straight on to rd', async () => {
    const tab = await openLogin(`https://auth.example/login?rd=${encodeURIComponent('https://app.example/x?y=1')}`, { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } } }, { allowedRedirectHosts: ['app.example'] });
    // The page leaves once its check of the session has answered: under load, after openLogin returns.
    const deadline = Date.now() + 5_000;
    while (tab.left().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(tab.left(), ['https://app.example/x?y=1']);
  });

  it('decides rd as safeRedirectTarget does, which it imports (prompt=none: straight back, session or not)', async () => {
    const pageHref = 'https://auth.example/login';
    for (const rd of ['/x', 'https://app.example/y', 'http://app.example:8080/z', '//evil.example', '/\\evil.example', 'javascript:alert(1)', 'http://app.example@evil.example', 'https://evil.example/']) {
      const tab = await openLogin(`${pageHref}?prompt=none&rd=${encodeURIComponent(rd)}`, unauthenticated, { allowedRedirectHosts: ['app.example'] });
      const deadline = Date.now() + 5_000;
      while (tab.left().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(tab.left(), [new URL(safeRedirectTarget(rd, `${pageHref}?prompt=none&rd=${encodeURIComponent(rd)}`, ['app.example']), pageHref).href], rd);
      await tab.page.close();
    }
  });

  it('stays on the page without a session', async () => {
    const tab = await openLogin('https://auth.example/login?rd=/x', unauthenticated);
    assert.deepEqual(tab.left(), []);
    assert.equal(await tab.hidden('message'), true);
  });

  it('logs in with a JSON POST, asks the probe whether the session cookie was kept, and then goes to rd', async () => {
    const tab = await openLogin('https://auth.example/login?rd=%2Ftorrents', { ...unauthenticated, ...signedIn });
    await tab.submit('ada', 'pw "quoted"');
    await tab.calls(3);
    const [, post, probe] = tab.api();
    assert.deepEqual(post, { method: 'POST', path: 'api/auth/authenticate', body: { username: 'ada', password: 'pw "quoted"' } });
    const sent = tab.page.requests.find((request) => request.method === 'POST');
    const headers = Object.fromEntries(Object.entries(sent?.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    assert.deepEqual([headers['accept'], headers['content-type']], ['application/json', 'application/json']);
    assert.deepEqual(probe, { method: 'GET', path: 'api/auth/probe', body: undefined });
    assert.deepEqual(tab.left(), ['https://auth.example/torrents']);
  });

  it('shows the server message as text on failure and enables the form again', async () => {
    const message = '<img src=x onerror=alert(1)> Username or password is incorrect.';
    const tab = await openLogin('https://auth.example/login', { ...unauthenticated, 'api/auth/authenticate': { status: 401, body: { code: 'INVALID_CREDENTIALS', message } } });
    await tab.submit('ada', 'wrong');
    assert.equal(await tab.text('message'), message);
    assert.equal(await tab.hidden('message'), false);
    assert.equal(await tab.page.evaluate<number>(`document.querySelectorAll('#message img').length`), 0);
    assert.equal(await tab.page.evaluate<boolean>(`Array.from(document.getElementById('login').elements).every((control) => !control.disabled)`), true);
    assert.deepEqual(tab.left(), []);
  });

  it('says a problem in its own words when the answer is no JSON, or the server cannot be reached', async () => {
    const tab = await openLogin('https://auth.example/login', { ...unauthenticated, 'api/auth/authenticate': { status: 502, body: undefined } });
    await tab.submit('ada', 'pw');
    assert.equal(await tab.text('message'), 'The request failed (502).');
    const unreachable = await openLogin('https://auth.example/login', { ...unauthenticated, 'api/auth/authenticate': { status: 0, body: null } });
    await unreachable.submit('ada', 'pw');
    assert.equal(await unreachable.text('message'), 'The server could not be reached.');
    assert.equal(await unreachable.page.evaluate<boolean>(`Array.from(document.getElementById('login').elements).every((control) => !control.disabled)`), true);
  });

  it('goes to / after a login when rd points at another site', async () => {
    const tab = await openLogin(`https://auth.example/login?rd=${encodeURIComponent('//evil.example/')}`, { ...unauthenticated, ...signedIn });
    await tab.submit('ada', 'pw');
    await tab.calls(3);
    assert.deepEqual(tab.left(), ['https://auth.example/']);
  });

  it('says so when no account exists yet', async () => {
    const tab = await openLogin('https://auth.example/login', { 'api/auth/verify': { status: 200, body: { initialUser: true, configs: {} } } });
    assert.deepEqual(tab.left(), []);
    assert.equal(await tab.text('message'), 'No account exists yet.');
  });

  it('asks for a code after SECOND_FACTOR_REQUIRED and signs in with the password and that code', async () => {
    const tab = await openLogin('https://auth.example/login?rd=%2Fx', {
      ...unauthenticated,
      'api/auth/authenticate': [
        { status: 401, body: { code: 'SECOND_FACTOR_REQUIRED', message: 'Enter the code from your authenticator app.' } },
        { status: 401, body: { code: 'INVALID_CREDENTIALS', message: 'That code is not right.' } },
        { status: 200, body: { success: true, username: 'ada', level: 5 } },
      ],
      'api/auth/probe': { status: 200, body: { probe: 'gatehouse', jwtCookie: true } },
    });
    await tab.submit('ada', 'pw');
    assert.equal(await tab.hidden('login'), true);
    assert.equal(await tab.hidden('code-step'), false);
    assert.equal(await tab.hidden('message'), true, 'the second-factor answer is a step, not an error');
    await tab.submitCode(' 123456 ');
    assert.equal(await tab.text('code-message'), 'That code is not right.');
    assert.deepEqual(tab.left(), []);
    await tab.submitCode('abcd-efgh');
    await tab.calls(5);
    const posts = tab.api().filter((call) => call.path === 'api/auth/authenticate').map((call) => call.body);
    assert.deepEqual(posts.slice(1), [{ username: 'ada', password: 'pw', code: '123456' }, { username: 'ada', password: 'pw', code: 'abcd-efgh' }]);
    assert.deepEqual(tab.left(), ['https://auth.example/x']);
  });

  it('warns instead of leaving when the browser did not keep the session cookie', async () => {
    const tab = await openLogin('https://auth.example/login?rd=%2Fx', dropped);
    await tab.submit('ada', 'pw');
    await tab.calls(3);
    assert.deepEqual(tab.left(), []);
    assert.match(await tab.text('message'), /did not keep the session cookie/);
    assert.equal(await tab.page.evaluate<boolean>(`Array.from(document.getElementById('login').elements).every((control) => !control.disabled)`), true);
  });

  it('leaves when the probe does not answer (not routed on this site): that says nothing of the cookie', async () => {
    const { 'api/auth/probe': _probe, ...withoutProbe } = { ...unauthenticated, ...signedIn };
    const tab = await openLogin('https://app.example/login?rd=%2Fx', withoutProbe);
    await tab.submit('ada', 'pw');
    await tab.calls(3);
    assert.equal(tab.api()[2]?.path, 'api/auth/probe');
    assert.deepEqual(tab.left(), ['https://app.example/x']);
  });

  it('warns at once when the cookie is Secure and the page is not a secure context, and names http when the cookie was dropped on http', async () => {
    const tab = await openLogin('http://auth.example/login', dropped, { isCookieSecure: true });
    assert.equal(await tab.hidden('cookie-note'), false);
    assert.match(await tab.text('cookie-note'), /https/);
    await tab.submit('ada', 'pw');
    await tab.calls(3);
    assert.match(await tab.text('message'), /did not keep the session cookie/);
    const behindHttpsProxy = await openLogin('http://auth.example/login', dropped, { isCookieSecure: false });
    assert.equal(await behindHttpsProxy.hidden('cookie-note'), true);
    await behindHttpsProxy.submit('ada', 'pw');
    await behindHttpsProxy.calls(3);
    assert.match(await behindHttpsProxy.text('message'), /opened over http/);
    const quiet = await openLogin('http://localhost/login', unauthenticated, { isCookieSecure: true });
    assert.equal(await quiet.hidden('cookie-note'), true);
  });

  it('with a --cookie-domain that does not cover the page\'s host, says so at once and after a right password, names neither http nor Secure, and keeps passkeys off', async () => {
    // Plain http to a name: not a secure context, and no WebAuthn, as in a real browser.
    const tab = await openLogin('http://auth.other.example/login', dropped, { cookieDomain: 'example.org' });
    assert.equal(await tab.hidden('cookie-note'), false);
    const note = await tab.text('cookie-note');
    assert.match(note, /auth\.other\.example/);
    assert.match(note, /set for example\.org \(--cookie-domain\), which does not cover auth\.other\.example/);
    assert.doesNotMatch(note, /Secure|https/);
    assert.equal(await tab.disabled('passkey'), true);
    await tab.submit('ada', 'pw');
    await tab.calls(3);
    assert.match(await tab.text('message'), /did not keep the session cookie/);
    assert.doesNotMatch(await tab.text('message'), /opened over http|Secure/);
    assert.equal(await tab.disabled('passkey'), true, 'a refused cookie does not turn passkeys back on where they cannot work');
    assert.equal(await tab.page.evaluate<boolean>(`Array.from(document.getElementById('login').elements).every((control) => !control.disabled)`), true);

    // Over https, with WebAuthn there: the cookie could not be kept either, so neither could a passkey sign-in.
    const https = await openLogin('https://auth.other.example/login', dropped, { cookieDomain: 'example.org' });
    assert.equal(await https.hidden('cookie-note'), false);
    assert.equal(await https.disabled('passkey'), true);
    assert.match(await https.text('passkey-message'), /see above/i);
  });

  it('takes a --cookie-domain to cover that host and its sub-domains only (RFC 6265 domain-match), never an IP address', async () => {
    const covered = async (href: string): Promise<boolean> => (await openLogin(href, unauthenticated, { cookieDomain: 'example.org' })).hidden('cookie-note');
    assert.equal(await covered('https://example.org/login'), true);
    assert.equal(await covered('https://auth.example.org/login'), true);
    assert.equal(await covered('https://a.b.example.org:8443/login'), true);
    assert.equal(await covered('https://badexample.org/login'), false);
    assert.equal(await covered('https://example.org.evil.test/login'), false);
    assert.equal(await covered('https://127.0.0.1/login'), false);
    assert.equal(await covered('https://[::1]/login'), false);
    const hostOnly = await openLogin('https://127.0.0.1/login', unauthenticated);
    assert.equal(await hostOnly.hidden('cookie-note'), true, 'without --cookie-domain the cookie is host-only and always fits');
    assert.equal(await hostOnly.disabled('passkey'), false);
  });

  it('after a cookie the browser dropped, turns the passkey button back on only where passkeys work', async () => {
    const noWebAuthn = await openLogin('http://auth.example/login', dropped);
    assert.equal(await noWebAuthn.disabled('passkey'), true);
    await noWebAuthn.submit('ada', 'pw');
    await noWebAuthn.calls(3);
    assert.match(await noWebAuthn.text('message'), /did not keep the session cookie/);
    assert.equal(await noWebAuthn.disabled('passkey'), true);
    // A secure context, nothing known wrong with the cookie: the browser refused it.
    const refused = await openLogin('https://auth.example/login', dropped);
    await refused.submit('ada', 'pw');
    await refused.calls(3);
    assert.match(await refused.text('message'), /accepts cookies/);
    assert.doesNotMatch(await refused.text('message'), /opened over http|--cookie-domain/);
    assert.equal(await refused.disabled('passkey'), false);
  });

  it('with mfa=1, does not send an existing session back, and after a password-only sign-in points to the account page', async () => {
    const tab = await openLogin('https://auth.example/login?mfa=1&rd=%2Fx', { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } }, ...signedIn });
    assert.deepEqual(tab.left(), []);
    assert.equal(await tab.hidden('mfa-note'), false);
    await tab.submit('ada', 'pw');
    await tab.calls(3);
    assert.deepEqual(tab.left(), []);
    assert.equal(await tab.hidden('setup-step'), false);
    assert.equal(await tab.hidden('login'), true);
  });

  it('with mfa=setup (the gate saw an account without a second factor), points to the account page at once', async () => {
    const tab = await openLogin('https://auth.example/login?mfa=setup&rd=%2Fx', { 'api/auth/verify': { status: 200, body: { username: 'ada', level: 5 } } });
    assert.deepEqual(tab.left(), []);
    assert.equal(await tab.hidden('setup-note'), false);
    assert.equal(await tab.hidden('mfa-note'), false);
    const code = await openLogin('https://auth.example/login?mfa=code&rd=%2Fx', unauthenticated);
    assert.equal(await code.hidden('setup-note'), true);
    assert.equal(await code.hidden('mfa-note'), false);
  });

  it('with mfa=code, leaves after a sign-in with a code', async () => {
    const tab = await openLogin('https://auth.example/login?mfa=code&rd=%2Fx', {
      ...unauthenticated,
      'api/auth/authenticate': [{ status: 401, body: { code: 'SECOND_FACTOR_REQUIRED', message: 'm' } }, { status: 200, body: { success: true } }],
      'api/auth/probe': { status: 200, body: { jwtCookie: true } },
    });
    await tab.submit('ada', 'pw');
    await tab.submitCode('123456');
    await tab.calls(4);
    assert.deepEqual(tab.left(), ['https://auth.example/x']);
  });

  it('with passkeys off, mentions none', async () => {
    const tab = await openLogin('https://auth.example/login?mfa=setup', unauthenticated, { isPasskeyOffered: false });
    assert.equal(await tab.hidden('passkey-step'), true);
    assert.equal(await tab.page.evaluate<boolean>(`Array.from(document.querySelectorAll('[data-passkey]')).every((mention) => mention.hidden)`), true);
  });

  describe('with a passkey (a virtual authenticator holding one for auth.example)', () => {
    const credentialId = Buffer.from([1, 2, 3]);
    const userHandle = Buffer.from([9]);
    const privateKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'der' });
    const withPasskey = async (page: Page): Promise<void> => {
      const authenticatorId = await page.addVirtualAuthenticator();
      await page.send('WebAuthn.addCredential', {
        authenticatorId,
        credential: { credentialId: credentialId.toString('base64'), isResidentCredential: true, rpId: 'auth.example', privateKey: privateKey.toString('base64'), userHandle: userHandle.toString('base64'), signCount: 0 },
      });
    };
    const options = { status: 200, body: { challenge: 'AAEC_-8', rpId: 'auth.example', timeout: 60000, userVerification: 'preferred', allowCredentials: [{ type: 'public-key', id: 'AQID' }] } };
    const click = (tab: LoginTab, id: string): Promise<unknown> => tab.page.evaluate(`(document.getElementById(${JSON.stringify(id)}).click(), true)`);

    it('signs in: options (with the username when typed), the browser\'s assertion as JSON, then rd', async () => {
      const answers = {
        ...unauthenticated,
        'api/auth/passkey/options': options,
        'api/auth/passkey': { status: 200, body: { success: true, username: 'ada', level: 5 } },
        'api/auth/probe': { status: 200, body: { jwtCookie: true } },
      };
      const tab = await openLogin('https://auth.example/login?rd=%2Fx', answers, {}, withPasskey);
      await tab.page.evaluate(`(document.getElementById('username').value = 'ada', true)`);
      await click(tab, 'passkey');
      await tab.calls(4);
      const [, asked, signed] = tab.api();
      assert.deepEqual(asked?.body, { username: 'ada' });
      const credential = (signed?.body as { credential: { id: string; rawId: string; type: string; response: Record<string, string>; clientExtensionResults: unknown } }).credential;
      assert.equal(credential.id, 'AQID');
      assert.equal(credential.rawId, 'AQID');
      assert.equal(credential.type, 'public-key');
      assert.deepEqual(credential.clientExtensionResults, {});
      assert.equal(credential.response['userHandle'], 'CQ');
      const clientData = JSON.parse(Buffer.from(credential.response['clientDataJSON'] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
      assert.deepEqual([clientData['type'], clientData['challenge'], clientData['origin']], ['webauthn.get', 'AAEC_-8', 'https://auth.example']);
      for (const field of ['authenticatorData', 'signature']) assert.match(credential.response[field] ?? '', /^[A-Za-z0-9_-]+$/, field);
      assert.deepEqual(tab.left(), ['https://auth.example/x']);

      const discoverable = await openLogin('https://auth.example/login', { ...answers, 'api/auth/passkey/options': { status: 200, body: { challenge: 'AA', rpId: 'auth.example' } } }, {}, withPasskey);
      await click(discoverable, 'passkey');
      await discoverable.calls(2);
      assert.deepEqual(discoverable.api()[1]?.body, {}, 'no username: a discoverable credential names its account');
    });

    it('shows the refusal and stays when the passkey does not verify', async () => {
      const tab = await openLogin('https://auth.example/login', {
        ...unauthenticated,
        'api/auth/passkey/options': options,
        'api/auth/passkey': { status: 401, body: { code: 'AUTH_FAILED', message: 'The passkey was not accepted.' } },
      }, {}, withPasskey);
      await click(tab, 'passkey');
      await tab.calls(3);
      assert.equal(await tab.text('passkey-message'), 'The passkey was not accepted.');
      assert.equal(await tab.disabled('passkey'), false);
      assert.deepEqual(tab.left(), []);
    });
  });
});
