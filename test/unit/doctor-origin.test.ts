// The doctor's checks of Gatehouse's own origin (docs/contract/own-origin.md "Doctor"), on
// answers made up here: where Gatehouse says its own origin is, and whether the account and
// administration API answers on an app's origin. Through real proxies: test/suites/proxies/doctor-origin.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Ask, Doctor } from '../../src/cli/doctor-answers.js';
import type { Exchange } from '../../src/cli/doctor-http.js';
import { accountApiOutcome, originSeenOf, publicUrlOutcome, type OriginAsked, type OriginSeen } from '../../src/cli/doctor-origin.js';
import type { Credential } from '../../src/cli/doctor-session.js';

const json = (status: number, body: unknown): Exchange => ({ status, headers: { 'content-type': 'application/json' }, json: body });
const refusal = (status: number, code: string): Exchange => json(status, { code, message: `${code} said in words` });
const NOT_HOME = refusal(403, 'NOT_GATEHOUSE_ORIGIN');
const NOT_FOUND_BY_PROXY: Exchange = { status: 404, headers: { 'content-type': 'text/html' }, json: undefined };
const ACCOUNT = json(200, { username: 'alice', level: 'USER', tokens: [], passkeys: [] });
const USERS = json(200, [{ username: 'alice', level: 10 }, { username: 'bob', level: 5 }]);
const APP_ECHO = json(200, { method: 'GET', url: '/api/auth/account', headers: {} });

const SESSION: Credential = { kind: 'session', token: 'a.b.c', username: 'alice', level: 'ADMINISTRATOR' };

/** A doctor whose answers come from `answers` by path; every request is recorded with its headers. */
function doctorAnswering(answers: Readonly<Record<string, Exchange | string>>): { doctor: Doctor; asked: Array<[string, Record<string, string>]> } {
  const asked: Array<[string, Record<string, string>]> = [];
  const ask: Ask = async (url, headers) => {
    asked.push([url.href, headers]);
    const answer = answers[url.pathname];
    if (answer === undefined) throw new Error(`not expected: ${url.href}`);
    return answer;
  };
  return { doctor: { ask, proxy: 'nginx' }, asked };
}

const at = (base: string, seen: OriginSeen | undefined): OriginAsked => ({ base: new URL(base), seen });
const HOME: OriginSeen = { publicUrl: 'https://auth.example.com', originKind: 'home' };
const APP: OriginSeen = { publicUrl: 'https://auth.example.com', originKind: 'app' };

describe('the doctor reads where Gatehouse says its own origin is', () => {
  it('takes the probe\'s publicUrl and originKind, and nothing else', () => {
    assert.deepEqual(originSeenOf({ probe: 'gatehouse', publicUrl: null, originKind: 'home', clientAddress: '127.0.0.1' }), { publicUrl: null, originKind: 'home' });
    assert.deepEqual(originSeenOf({ probe: 'gatehouse', publicUrl: 'https://auth.example.com/base', originKind: 'flood' }), { publicUrl: 'https://auth.example.com/base', originKind: 'flood' });
    for (const body of [
      { publicUrl: null, originKind: 'home' },
      { probe: 'gatehouse', originKind: 'home' },
      { probe: 'gatehouse', publicUrl: 'not a url', originKind: 'app' },
      { probe: 'gatehouse', publicUrl: null, originKind: 'elsewhere' },
      { probe: 'gatehouse', publicUrl: 7, originKind: 'app' },
      [],
      'text',
    ]) assert.equal(originSeenOf(body), undefined, JSON.stringify(body));
  });
});

describe('public URL: a deployment reached by a name is not called healthy without --public-url', () => {
  it('passes with --public-url, naming its origin', () => {
    const outcome = publicUrlOutcome([at('https://app.example.com/', APP)]);
    assert.equal(outcome.status, 'ok');
    assert.match(outcome.text, /own origin is https:\/\/auth\.example\.com \(--public-url\)/);
  });

  it('passes without it when every URL is loopback (a fresh install, a tunnel)', () => {
    for (const base of ['http://127.0.0.1:8080/', 'http://localhost/', 'http://[::1]:8080/', 'http://127.1.2.3/']) {
      assert.equal(publicUrlOutcome([at(base, { publicUrl: null, originKind: 'home' })]).status, 'ok', base);
    }
  });

  it('fails without it when a URL names a host that is not loopback, with the fix', () => {
    for (const base of ['https://app.example.com/', 'http://192.168.1.10/', 'http://localhost.example/', 'http://app.localhost/']) {
      const outcome = publicUrlOutcome([at('http://127.0.0.1/', { publicUrl: null, originKind: 'home' }), at(base, undefined)]);
      assert.equal(outcome.status, 'FAIL', base);
      assert.match(outcome.text, /without --public-url.*Fix: .*--public-url https:\/\/THAT-SITE \(GATEHOUSE_PUBLIC_URL\)/, base);
    }
  });

  it('is not made when no probe says where Gatehouse\'s origin is, which is never healthy', () => {
    const outcome = publicUrlOutcome([at('https://app.example.com/base/', undefined)]);
    assert.equal(outcome.status, 'skip');
    assert.match(outcome.text, /https:\/\/app\.example\.com\/base\/api\/auth\/probe/);
  });
});

describe('account API: Gatehouse\'s account and administration API does not answer on an app\'s origin', () => {
  const outcomeOf = async (answers: Readonly<Record<string, Exchange | string>>, asked: OriginAsked, credential: Credential | 'none' = SESSION) =>
    accountApiOutcome(asked, credential === 'none' ? undefined : credential, doctorAnswering(answers).doctor);

  it('asks api/auth/account and api/auth/users beside the sign-in page, with the doctor\'s credential', async () => {
    const { doctor, asked } = doctorAnswering({ '/base/api/auth/account': NOT_HOME, '/base/api/auth/users': NOT_HOME });
    await accountApiOutcome(at('https://app.example.com/base/', APP), SESSION, doctor);
    assert.deepEqual(asked.map(([url]) => url), ['https://app.example.com/base/api/auth/account', 'https://app.example.com/base/api/auth/users']);
    for (const [, headers] of asked) assert.equal(headers['cookie'], 'jwt=a.b.c');
  });

  it('passes when Gatehouse refuses there (NOT_GATEHOUSE_ORIGIN) or the app or the proxy answers', async () => {
    for (const [account, users] of [[NOT_HOME, NOT_HOME], [NOT_FOUND_BY_PROXY, NOT_FOUND_BY_PROXY], [APP_ECHO, APP_ECHO], [NOT_HOME, refusal(401, 'AUTH_REQUIRED')]] as const) {
      const outcome = await outcomeOf({ '/api/auth/account': account, '/api/auth/users': users }, at('https://app.example.com/', APP));
      assert.equal(outcome.status, 'ok', outcome.text);
      assert.match(outcome.text, /^https:\/\/app\.example\.com: the account and administration API does not answer there/);
    }
  });

  it('fails when the account or the users list answers there as on Gatehouse\'s own origin, with the fix in the proxy\'s terms', async () => {
    for (const [account, users, named] of [
      [ACCOUNT, NOT_HOME, '/api/auth/account'],
      [NOT_FOUND_BY_PROXY, USERS, '/api/auth/users'],
      [ACCOUNT, USERS, '/api/auth/account, /api/auth/users'],
    ] as const) {
      for (const seen of [APP, undefined]) {
        const outcome = await outcomeOf({ '/api/auth/account': account, '/api/auth/users': users }, at('https://app.example.com/', seen));
        assert.equal(outcome.status, 'FAIL', outcome.text);
        assert.ok(outcome.text.includes(`as on its own origin (${named})`), outcome.text);
        assert.match(outcome.text, /Fix: nginx: include gatehouse\/site\.conf/);
        assert.doesNotMatch(outcome.text, /Caddy/);
      }
    }
  });

  it('fails, naming the proxy, when Gatehouse takes an app\'s origin for its own (told another host than the browser\'s)', async () => {
    const outcome = await outcomeOf({ '/api/auth/account': ACCOUNT, '/api/auth/users': USERS }, at('https://app.example.com/', HOME));
    assert.equal(outcome.status, 'FAIL', outcome.text);
    assert.match(outcome.text, /Gatehouse took it for its own origin, https:\/\/auth\.example\.com: the proxy tells it that host instead of the browser's\. Fix: nginx: .*X-Forwarded-Host \$http_host/);
  });

  it('warns on Gatehouse\'s own origin (--public-url\'s): that app\'s scripts act with the signed-in person\'s powers', async () => {
    for (const answers of [{ '/api/auth/account': ACCOUNT, '/api/auth/users': USERS }, { '/api/auth/account': NOT_FOUND_BY_PROXY, '/api/auth/users': NOT_FOUND_BY_PROXY }]) {
      const outcome = await outcomeOf(answers, at('https://AUTH.example.com:443/', HOME));
      assert.equal(outcome.status, 'WARN', outcome.text);
      assert.match(outcome.text, /^https:\/\/auth\.example\.com is Gatehouse's own origin \(it is --public-url's\).*that app's scripts act with the signed-in person's powers.*Fix: /);
    }
  });

  it('without --public-url, where every loopback address is Gatehouse\'s own, warns only when the API answers there', async () => {
    const loopback = at('http://127.0.0.1:8080/', { publicUrl: null, originKind: 'home' });
    const routed = await outcomeOf({ '/api/auth/account': ACCOUNT, '/api/auth/users': USERS }, loopback);
    assert.equal(routed.status, 'WARN', routed.text);
    assert.match(routed.text, /without --public-url every loopback address is/);
    const notRouted = await outcomeOf({ '/api/auth/account': NOT_FOUND_BY_PROXY, '/api/auth/users': APP_ECHO }, loopback);
    assert.equal(notRouted.status, 'ok', notRouted.text);
  });

  it('lets Flood\'s users list answer on a Flood origin (--flood-url), never the account', async () => {
    const flood: OriginSeen = { publicUrl: 'https://auth.example.com', originKind: 'flood' };
    const users = await outcomeOf({ '/api/auth/account': NOT_HOME, '/api/auth/users': USERS }, at('https://flood.example.com/', flood));
    assert.equal(users.status, 'ok', users.text);
    assert.match(users.text, /Flood web client's origin/);
    const account = await outcomeOf({ '/api/auth/account': ACCOUNT, '/api/auth/users': USERS }, at('https://flood.example.com/', flood));
    assert.equal(account.status, 'FAIL', account.text);
  });

  it('is not made when both answers are a 401 or 403 the gate gives too (no sign-in, or a machine token)', async () => {
    const answers = { '/api/auth/account': refusal(401, 'AUTH_REQUIRED'), '/api/auth/users': refusal(403, 'NOT_ADMINISTRATOR') };
    const anonymous = await outcomeOf(answers, at('https://app.example.com/', APP), 'none');
    assert.equal(anonymous.status, 'skip', anonymous.text);
    assert.match(anonymous.text, /Give a username and password/);
    const token = await outcomeOf(answers, at('https://app.example.com/', APP), { kind: 'token', token: 'gh_x' });
    assert.equal(token.status, 'skip', token.text);
    assert.match(token.text, /instead of a machine token/);
  });

  it('fails when the origin cannot be asked', async () => {
    const outcome = await outcomeOf({ '/api/auth/account': 'https://app.example.com could not be asked (ECONNRESET)' }, at('https://app.example.com/', APP));
    assert.equal(outcome.status, 'FAIL');
    assert.match(outcome.text, /ECONNRESET/);
  });
});
