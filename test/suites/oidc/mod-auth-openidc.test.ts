// Apache's mod_auth_openidc, a certified relying party people put in front of their apps, protects a
// location through Gatehouse (the built service, as a process): signing in gives the page and the
// claims the module read from the id_token and userinfo; logging out goes through Gatehouse's
// end_session_endpoint and ends both sessions. The test is the browser: it keeps the cookies and
// follows the redirects itself.
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { isApacheInstalled, reserveApache, startApache, type RunningApache } from '../../helpers/apache.js';
import { assertBuilt, CLIENT_SETTINGS, freePort, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';

/** A browser's cookies, by host and port: enough for two loopback servers and host-only cookies. */
class CookieJar {
  readonly #cookies = new Map<string, Map<string, string>>();

  header(url: URL): string {
    return [...(this.#cookies.get(url.host) ?? new Map<string, string>())].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  take(url: URL, lines: readonly string[]): void {
    const jar = this.#cookies.get(url.host) ?? new Map<string, string>();
    for (const line of lines) {
      const [pair = '', ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      const isRemoved = value === '' || attributes.some((attribute) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(attribute));
      if (isRemoved) jar.delete(name);
      else jar.set(name, value);
    }
    this.#cookies.set(url.host, jar);
  }

  has(host: string, name: string): boolean {
    return this.#cookies.get(host)?.has(name) === true;
  }
}

interface Visit {
  readonly url: URL;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * GET `url` as a browser's top-level navigation (mod_auth_openidc answers 401 instead of redirecting
 * what looks like a script's request), with the jar's cookies, taking the answer's; no redirect followed.
 */
function visit(jar: CookieJar, url: URL): Promise<Visit> {
  const cookie = jar.header(url);
  const headers = { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', ...(cookie === '' ? {} : { cookie }) };
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        jar.take(url, res.headers['set-cookie'] ?? []);
        resolve({ url, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Follows redirects from `start` like a browser, returning every hop. */
async function browse(jar: CookieJar, start: string, maxHops = 10): Promise<Visit[]> {
  const hops: Visit[] = [];
  let url = new URL(start);
  for (let i = 0; i < maxHops; i++) {
    const hop = await visit(jar, url);
    hops.push(hop);
    const location = hop.headers.location;
    if (hop.status < 300 || hop.status >= 400 || location === undefined) return hops;
    url = new URL(location, url);
  }
  throw new Error(`more than ${maxHops} redirects from ${start}: ${hops.map((hop) => `${hop.status} ${hop.url.href}`).join(' -> ')}`);
}

const describeHops = (hops: readonly Visit[]): string => hops.map((hop) => `${hop.status} ${hop.url.href}`).join('\n');

describe('mod_auth_openidc protects a location through Gatehouse', () => {
  let gatehouse: ServeProcess;
  let apache: RunningApache;
  let issuer = '';
  let sessionToken = '';

  before(async () => {
    assertBuilt();
    assert.ok(isApacheInstalled(), 'this suite needs apache2 and libapache2-mod-auth-openidc (.ci/run installs them)');
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    gatehouse = await startServe(['--host', '127.0.0.1', '--port', String(port), '--data-dir', await tempDir(), '--public-url', issuer]);
    const first = await httpCall(port, { method: 'POST', path: '/api/auth/register', body: { username: 'root', password: 'root-password-7k', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(first.status, 200, first.text);
    const admin = first.cookieToken ?? '';
    assert.equal((await httpCall(port, { method: 'POST', path: '/api/auth/users', token: admin, body: { username: 'alice', password: 'alice-password-3x', level: 'USER', groups: ['family', 'media'] } })).status, 200);
    assert.equal((await httpCall(port, { method: 'PATCH', path: '/api/auth/users/alice', token: admin, body: { email: 'alice@example.org', name: 'Alice Liddell' } })).status, 200);
    const reserved = await reserveApache();
    const client = await httpCall(port, {
      method: 'POST', path: '/api/auth/clients', token: admin,
      body: { name: 'Apache', redirectUris: [reserved.redirectUri], postLogoutRedirectUris: [reserved.loggedOutUri] },
    });
    assert.equal(client.status, 200, client.text);
    const { clientId, clientSecret } = client.json as { clientId: string; clientSecret: string };
    apache = await startApache(reserved.port, {
      metadataUrl: `${issuer}/.well-known/openid-configuration`, clientId, clientSecret, scope: 'openid profile email groups',
    });
    const signIn = await httpCall(port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'alice', password: 'alice-password-3x' } });
    assert.equal(signIn.status, 200);
    sessionToken = signIn.cookieToken ?? '';
  });

  after(async () => {
    await apache?.stop();
    await gatehouse?.stop();
    await killAllChildren();
    await removeTempDirs();
  });

  it('sends a visitor without a Gatehouse session to Gatehouse\'s sign-in page', async () => {
    const hops = await browse(new CookieJar(), `${apache.origin}/protected/`);
    const last = hops.at(-1);
    assert.equal(last?.status, 200, `${describeHops(hops)}\n${apache.describe()}`);
    assert.equal(last?.url.origin, issuer);
    assert.equal(last?.url.pathname, '/login');
    assert.match(String(last?.body), /<h1 id="title">Sign in<\/h1>/);
  });

  it('signs a Gatehouse user in: the page, and the claims from the id_token and userinfo', async () => {
    const jar = new CookieJar();
    jar.take(new URL(issuer), [`jwt=${sessionToken}; Path=/; HttpOnly; SameSite=Strict`]);
    const hops = await browse(jar, `${apache.origin}/protected/`);
    const last = hops.at(-1);
    assert.equal(last?.status, 200, `${describeHops(hops)}\n${apache.describe()}`);
    assert.equal(last?.url.href, `${apache.origin}/protected/`);
    assert.match(String(last?.body), /Apache Server Status/);
    // Through Gatehouse's authorize, with a code and the issuer (RFC 9207) on the way back.
    const callback = hops.find((hop) => hop.url.pathname === '/protected/redirect_uri');
    assert.ok(callback !== undefined, describeHops(hops));
    assert.ok(callback.url.searchParams.get('code') !== null);
    assert.equal(callback.url.searchParams.get('iss'), issuer);
    assert.equal(last?.headers['x-remote-user'], 'alice');
    assert.equal(last?.headers['x-claim-email'], 'alice@example.org');
    assert.equal(last?.headers['x-claim-name'], 'Alice Liddell');
    assert.equal(last?.headers['x-claim-groups'], 'family,media');
    assert.match(String(last?.headers['x-claim-sub']), /^[A-Za-z0-9_-]{22}$/);
    // The module asked the token endpoint (a back channel) and userinfo.
    await gatehouse.waitForLine((line) => line.includes('"path":"/oidc/userinfo"') && line.includes('"status":200'));
    assert.ok(gatehouse.stdoutLines.some((line) => line.includes('"path":"/oidc/token"') && line.includes('"status":200')));
    // And the app's session now stands on its own.
    const again = await visit(jar, new URL(`${apache.origin}/protected/`));
    assert.equal(again.status, 200);
  });

  it('logs out through Gatehouse\'s end_session_endpoint: the app\'s session and Gatehouse\'s cookie end', async () => {
    const jar = new CookieJar();
    jar.take(new URL(issuer), [`jwt=${sessionToken}; Path=/; HttpOnly; SameSite=Strict`]);
    assert.equal((await browse(jar, `${apache.origin}/protected/`)).at(-1)?.status, 200);
    const loggedOut = `${apache.origin}/loggedout.html`;
    const hops = await browse(jar, `${apache.origin}/protected/redirect_uri?logout=${encodeURIComponent(loggedOut)}`);
    const endSession = hops.find((hop) => hop.url.origin === issuer && hop.url.pathname === '/oidc/logout');
    assert.ok(endSession !== undefined, describeHops(hops));
    assert.ok(endSession.url.searchParams.get('id_token_hint') !== null, 'the module sent its id_token as the hint');
    assert.equal(endSession.status, 303);
    assert.equal(hops.at(-1)?.url.href, loggedOut);
    assert.equal(jar.has(new URL(issuer).host, 'jwt'), false, 'Gatehouse cleared its cookie');
    // The protected page now starts a new sign-in, which ends on Gatehouse's sign-in page.
    const after = await browse(jar, `${apache.origin}/protected/`);
    assert.equal(after.at(-1)?.url.pathname, '/login', describeHops(after));
  });
});
