// The gate's decision (docs/contract/gate.md), asked of the service directly: the query's level,
// group, mfa, tokens and basic; the credential it judges; and which refusal a browser gets. The
// bytes of each answer are test/api/forward.test.ts's, over HTTP.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import type { Amr } from '../../src/auth/amr.js';
import type { Caller, Credentials } from '../../src/auth/session.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { createGateService, type GateDecision, type GateServiceDeps } from '../../src/routes/gate-service.js';
import type { StoredUser } from '../../src/store/users.js';

const account = (username: string, fields: { level?: 5 | 10; groups?: string[]; totp?: boolean } = {}): StoredUser =>
  ({ username, level: fields.level ?? 5, ...(fields.groups === undefined ? {} : { groups: fields.groups }), ...(fields.totp === true ? { totp: {} } : {}) }) as unknown as StoredUser;

const ADMIN = account('admin', { level: 10 });
const ALICE = account('alice', { groups: ['media', 'books'] });
const BOB = account('bob', { totp: true });
const ACCOUNTS = new Map([ADMIN, ALICE, BOB].map((user) => [user.username, user]));
// A session token here is `username` or `username:2fa`; a machine token `gh_username`.
const sessionOf = (token: string): Caller | { readonly refused: string } => {
  const [name = '', factors] = token.split(':');
  const user = ACCOUNTS.get(name);
  const amr: Amr = factors === '2fa' ? ['pwd', 'otp'] : ['pwd'];
  return user === undefined ? { refused: 'unknown' } : { user, token, claims: { username: name, iat: 0, exp: 1, amr } };
};

function service(changes: Partial<GateServiceDeps> = {}): { decide: (request: Partial<Request>) => GateDecision; warnings: () => number } {
  let text = '';
  const sink = { write: (lines: string) => (text += lines, true) };
  const logger: Logger = createLogger({ level: 'warn', format: 'json', stdout: sink, stderr: sink });
  const gate = createGateService({
    session: { check: sessionOf },
    machineTokens: {
      check: (authorization: string | undefined) => {
        if (authorization?.startsWith('Bearer gh_') !== true) return undefined;
        const user = ACCOUNTS.get(authorization.slice('Bearer gh_'.length));
        return user === undefined ? { refused: 'unknown machine token' } : { user, tokenId: 'id' };
      },
    },
    isTwoFactorRequiredOfAdministrators: false,
    allowedRedirectHosts: ['login.example'],
    isStopping: () => false,
    logger,
    ...changes,
  });
  return {
    warnings: () => {
      logger.flush();
      return text.split('\n').filter((line) => line !== '').length;
    },
    decide: (request) => gate.decide({
      query: Object.assign(Object.create(null) as Record<string, string>, request.query),
      headers: request.headers ?? {},
      credentials: request.credentials ?? { cookieToken: undefined, queryToken: undefined },
    }),
  };
}

interface Request {
  readonly query: Record<string, string>;
  readonly headers: IncomingHttpHeaders;
  readonly credentials: Credentials;
}

const cookie = (token: string): Credentials => ({ cookieToken: token, queryToken: undefined });
const HTML = { accept: 'text/html,application/xhtml+xml' };
const { decide } = service();

describe('the gate service', () => {
  it('answers every request while stopping with stopping, before anything else', () => {
    const { decide: stopping } = service({ isStopping: () => true });
    assert.deepEqual(stopping({}), { kind: 'stopping' });
    assert.deepEqual(stopping({ query: { level: 'nonsense' }, credentials: cookie('admin') }), { kind: 'stopping' });
  });

  describe('level=', () => {
    it('lets any valid credential through level=USER, and an administrator through level=ADMINISTRATOR', () => {
      assert.deepEqual(decide({ query: { level: 'USER' }, credentials: cookie('alice') }), { kind: 'allowed', user: ALICE, via: 'session' });
      assert.deepEqual(decide({ query: { level: 'ADMINISTRATOR' }, credentials: cookie('admin') }), { kind: 'allowed', user: ADMIN, via: 'session' });
    });
    it('refuses a USER at level=ADMINISTRATOR: forbidden, saying what is missing', () => {
      assert.deepEqual(decide({ query: { level: 'ADMINISTRATOR' }, credentials: cookie('alice') }), {
        kind: 'forbidden', user: ALICE, missing: { isAdministratorNeeded: true }, page: undefined,
      });
    });
    it('refuses everyone, signed in or not, for any other level, logging each distinct value once', () => {
      const { decide: fresh, warnings } = service();
      for (const credentials of [cookie('admin'), cookie('nobody'), undefined]) {
        assert.deepEqual(fresh({ query: { level: 'administrator' }, ...(credentials === undefined ? {} : { credentials }) }), { kind: 'unknown-level' });
      }
      assert.equal(warnings(), 1);
      assert.deepEqual(fresh({ query: { level: '' } }), { kind: 'unknown-level' });
      assert.equal(warnings(), 2);
    });
  });

  describe('group=', () => {
    it('admits a member of any group listed, and refuses others with the groups asked', () => {
      assert.equal(decide({ query: { group: 'films,books' }, credentials: cookie('alice') }).kind, 'allowed');
      assert.deepEqual(decide({ query: { group: 'films,music' }, credentials: cookie('alice') }), {
        kind: 'forbidden', user: ALICE, missing: { isAdministratorNeeded: false, groups: ['films', 'music'] }, page: undefined,
      });
      assert.equal(decide({ query: { group: 'media' }, credentials: cookie('admin') }).kind, 'forbidden');
    });
    it('needs both with level=', () => {
      assert.deepEqual(decide({ query: { group: 'media', level: 'ADMINISTRATOR' }, credentials: cookie('alice') }), {
        kind: 'forbidden', user: ALICE, missing: { isAdministratorNeeded: true }, page: undefined,
      });
    });
    it('refuses everyone for a list that cannot be meant', () => {
      for (const group of ['Media', '', 'a,,b', 'a b']) {
        assert.deepEqual(decide({ query: { group }, credentials: cookie('alice') }), { kind: 'invalid-group-filter' }, group);
      }
    });
  });

  describe('mfa= and tokens=', () => {
    it('counts a one-factor session as none where two factors are asked, with what to do next', () => {
      for (const mfa of ['1', 'yes', '']) {
        assert.deepEqual(decide({ query: { mfa }, credentials: cookie('alice') }), { kind: 'unauthenticated', refusal: 'second-factor' }, mfa);
      }
      assert.equal(decide({ query: { mfa: '1' }, credentials: cookie('bob:2fa') }).kind, 'allowed');
      for (const mfa of ['0', 'false']) assert.equal(decide({ query: { mfa }, credentials: cookie('alice') }).kind, 'allowed');
    });
    it('asks two factors everywhere under --require-mfa, and of administrators under --require-mfa-for-admins', () => {
      assert.equal(service({ requireMfa: true }).decide({ credentials: cookie('alice') }).kind, 'unauthenticated');
      const { decide: forAdmins } = service({ isTwoFactorRequiredOfAdministrators: true });
      assert.equal(forAdmins({ credentials: cookie('admin') }).kind, 'unauthenticated');
      assert.equal(forAdmins({ credentials: cookie('admin:2fa') }).kind, 'allowed');
      assert.equal(forAdmins({ credentials: cookie('alice') }).kind, 'allowed');
    });
    it('passes a machine token as its account; where two factors are asked, only with tokens=1', () => {
      const bearer = { authorization: 'Bearer gh_alice' };
      assert.deepEqual(decide({ headers: bearer }), { kind: 'allowed', user: ALICE, via: 'token' });
      assert.deepEqual(decide({ query: { mfa: '1' }, headers: bearer }), { kind: 'unauthenticated', refusal: 'second-factor' });
      assert.deepEqual(decide({ query: { mfa: '1', tokens: '1' }, headers: bearer }), { kind: 'allowed', user: ALICE, via: 'token' });
      assert.equal(decide({ query: { level: 'ADMINISTRATOR' }, headers: bearer }).kind, 'forbidden');
    });
    it('judges a machine token alone: a refused one is no session, whatever the cookie', () => {
      assert.deepEqual(decide({ headers: { authorization: 'Bearer gh_nobody' }, credentials: cookie('admin') }), { kind: 'unauthenticated', refusal: 'no-session' });
      assert.equal(decide({ headers: { authorization: 'Bearer the-apps-own' }, credentials: cookie('admin') }).kind, 'allowed');
    });
  });

  describe('the credential', () => {
    it('judges the cookie, else the original request\'s token, else ?token=; the first present only', () => {
      const original = { 'x-original-uri': '/app/file?token=alice' };
      assert.deepEqual(decide({ headers: original }), { kind: 'allowed', user: ALICE, via: 'session' });
      assert.equal(decide({ headers: { 'x-forwarded-uri': '/app?token=bob' } }).kind, 'allowed');
      assert.deepEqual(decide({ credentials: { cookieToken: undefined, queryToken: 'admin' } }), { kind: 'allowed', user: ADMIN, via: 'session' });
      assert.equal(decide({ headers: original, credentials: cookie('nobody') }).kind, 'unauthenticated');
      assert.equal(decide({ headers: { 'x-original-uri': '/app?token=nobody' }, credentials: { cookieToken: undefined, queryToken: 'admin' } }).kind, 'unauthenticated');
    });
    it('counts a token from a URL only for a request that is no browser navigation', () => {
      const original = { 'x-original-uri': '/app/file?token=alice' };
      for (const headers of [HTML, { 'sec-fetch-mode': 'navigate' }, { 'sec-fetch-site': 'cross-site' }]) {
        assert.equal(decide({ headers: { ...original, ...headers } }).kind, 'unauthenticated', JSON.stringify(headers));
        assert.equal(decide({ headers, credentials: { cookieToken: undefined, queryToken: 'alice' } }).kind, 'unauthenticated');
      }
      assert.equal(decide({ headers: { ...original, 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin' } }).kind, 'allowed');
    });
  });

  describe('what a refused browser gets', () => {
    it('basic=1: a Basic challenge for every 401, never a redirect', () => {
      assert.deepEqual(decide({ query: { basic: '1', login: '/login' }, headers: HTML }), { kind: 'basic-challenge' });
      assert.deepEqual(decide({ query: { basic: '1', mfa: '1' }, headers: { authorization: 'Bearer gh_alice' } }), { kind: 'basic-challenge' });
      assert.deepEqual(decide({ query: { basic: '1', mfa: '1', login: '/login' }, credentials: cookie('alice'), headers: HTML }), { kind: 'basic-challenge' });
      assert.equal(decide({ query: { basic: '1', level: 'ADMINISTRATOR' }, credentials: cookie('alice') }).kind, 'forbidden');
    });
    it('login=: a browser without a session is sent there with the original URL, hinted for the second factor', () => {
      const headers = { ...HTML, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/a?b=c' };
      const rd = encodeURIComponent('https://app.example/a?b=c');
      assert.deepEqual(decide({ query: { login: '/login' }, headers }), { kind: 'unauthenticated', refusal: 'no-session', location: `/login?rd=${rd}` });
      assert.deepEqual(decide({ query: { login: 'https://login.example/in?x=1', mfa: '1' }, headers, credentials: cookie('alice') }), {
        kind: 'unauthenticated', refusal: 'second-factor', location: `https://login.example/in?x=1&mfa=setup&rd=${rd}`,
      });
      assert.equal(decide({ query: { login: '/login', mfa: '1' }, headers, credentials: cookie('bob') }).kind, 'unauthenticated');
      assert.match(String((decide({ query: { login: '/login', mfa: '1' }, headers, credentials: cookie('bob') }) as { location?: string }).location), /mfa=code/);
    });
    it('login=: no redirect for an API call, another site, a machine token, or the login page itself (logged)', () => {
      const none = { kind: 'unauthenticated', refusal: 'no-session' };
      assert.deepEqual(decide({ query: { login: '/login' } }), none);
      assert.deepEqual(decide({ query: { login: 'https://evil.example/login' }, headers: HTML }), none);
      assert.deepEqual(decide({ query: { login: '//evil.example/login' }, headers: HTML }), none);
      assert.deepEqual(decide({ query: { login: '/login', mfa: '1' }, headers: { ...HTML, authorization: 'Bearer gh_alice' } }), { kind: 'unauthenticated', refusal: 'second-factor' });
      const { decide: looping, warnings } = service();
      assert.deepEqual(looping({ query: { login: '/login' }, headers: { ...HTML, 'x-forwarded-uri': '/login?rd=x' } }), none);
      assert.equal(warnings(), 1);
    });
    it('a 403 to a browser is a page, with where to sign in as someone else', () => {
      const asked = { level: 'ADMINISTRATOR', login: '/gate/login' };
      assert.deepEqual(decide({ query: asked, credentials: cookie('alice'), headers: HTML }), {
        kind: 'forbidden', user: ALICE, missing: { isAdministratorNeeded: true }, page: { switchAccountUrl: '/gate/logout' },
      });
      assert.deepEqual(decide({ query: { level: 'ADMINISTRATOR' }, credentials: cookie('alice'), headers: HTML }), {
        kind: 'forbidden', user: ALICE, missing: { isAdministratorNeeded: true }, page: { switchAccountUrl: undefined },
      });
    });
  });
});
