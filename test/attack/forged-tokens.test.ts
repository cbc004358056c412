import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertServerAnswers,
  base64url,
  craftToken,
  HS256_HEADER,
  hmacSignature,
  liveClaims,
  queryValue,
  segment,
} from '../helpers/attack.js';
import { CONFIGS, nowSeconds } from '../helpers/api.js';
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js';

// Hand-made tokens thrown at the real server. Every forgery must be a plain 401 on verify
// (carrying {configs}) and on an administrator route, whether it rides in the cookie or in
// ?token=, and the server must go on answering normally afterwards.

const ADMIN = 'forge-admin';
const USER = 'forge-user';

interface ForgeryCase {
  readonly name: string;
  readonly token: (server: TestServer, userToken: string) => string;
  /** Tokens longer than the 16 KiB header cap may be refused by Node itself (431) or the connection reset. */
  readonly isOversized?: boolean;
}

/** Moves the last character of a base64url segment to the other spelling of the same bytes. */
function nonCanonicalSpelling(encoded: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(encoded.slice(-1));
  const variant = `${encoded.slice(0, -1)}${alphabet[last ^ 1] ?? 'A'}`;
  assert.deepEqual(Buffer.from(variant, 'base64url'), Buffer.from(encoded, 'base64url'), 'the variant must decode to the same bytes');
  return variant;
}

const rawPayload = (text: string): string => base64url(text);

const CASES: readonly ForgeryCase[] = [
  { name: 'alg none with an empty signature', token: (s) => `${segment({ alg: 'none', typ: 'JWT' })}.${segment(liveClaims(s, ADMIN))}.` },
  { name: 'alg none with no signature segment at all', token: (s) => `${segment({ alg: 'none', typ: 'JWT' })}.${segment(liveClaims(s, ADMIN))}` },
  { name: 'alg none carrying a valid HMAC-SHA256 signature', token: (s) => craftToken({ alg: 'none', typ: 'JWT' }, liveClaims(s, ADMIN)) },
  { name: 'alg "None" in another case', token: (s) => craftToken({ alg: 'None' }, liveClaims(s, ADMIN)) },
  { name: 'alg HS512 signed with the real secret', token: (s) => craftToken({ alg: 'HS512', typ: 'JWT' }, liveClaims(s, ADMIN), { hash: 'sha512' }) },
  { name: 'alg HS384 signed with the real secret', token: (s) => craftToken({ alg: 'HS384', typ: 'JWT' }, liveClaims(s, ADMIN), { hash: 'sha384' }) },
  { name: 'alg RS256 header HMAC-signed with the secret as key (algorithm confusion)', token: (s) => craftToken({ alg: 'RS256', typ: 'JWT' }, liveClaims(s, ADMIN)) },
  { name: 'alg "HS256 " with a trailing space', token: (s) => craftToken({ alg: 'HS256 ' }, liveClaims(s, ADMIN)) },
  { name: 'alg given as an array', token: (s) => craftToken({ alg: ['HS256'] }, liveClaims(s, ADMIN)) },
  { name: 'a crit header naming an extension', token: (s) => craftToken({ alg: 'HS256', crit: ['exp'] }, liveClaims(s, ADMIN)) },
  { name: 'a kid header pointing at an empty key, signed with an empty key', token: (s) => craftToken({ alg: 'HS256', kid: '../../../../dev/null' }, liveClaims(s, ADMIN), { key: '' }) },
  { name: 'a header that is not JSON', token: (s) => craftToken(base64url('{alg:HS256'), liveClaims(s, ADMIN)) },
  { name: 'a header that is a JSON array', token: (s) => craftToken(['HS256'], liveClaims(s, ADMIN)) },
  {
    name: "a user's token with the payload swapped to an administrator's username (signature kept)",
    token: (s, userToken) => {
      const [header = '', , signature = ''] = userToken.split('.');
      return `${header}.${segment(liveClaims(s, ADMIN))}.${signature}`;
    },
  },
  {
    name: "a user's token with only the username bytes edited to the admin's",
    token: (_s, userToken) => {
      const [header = '', payload = '', signature = ''] = userToken.split('.');
      const edited = Buffer.from(payload, 'base64url').toString('utf8').replace(`"${USER}"`, `"${ADMIN}"`);
      return `${header}.${base64url(edited)}.${signature}`;
    },
  },
  { name: 'signed with a wrong secret', token: (s) => craftToken(HS256_HEADER, liveClaims(s, ADMIN), { key: 'a-wrong-secret-that-is-also-at-least-32-characters' }) },
  { name: 'signed with the secret plus one character', token: (s) => craftToken(HS256_HEADER, liveClaims(s, ADMIN), { key: `test-secret-that-is-at-least-32-characters-long!` }) },
  { name: 'a signature of the right length made of zeros', token: (s) => craftToken(HS256_HEADER, liveClaims(s, ADMIN), { signature: base64url(Buffer.alloc(32)) }) },
  {
    name: 'the valid signature spelled non-canonically (same bytes, different last character)',
    token: (s) => {
      const valid = craftToken(HS256_HEADER, liveClaims(s, ADMIN));
      const [header = '', payload = '', signature = ''] = valid.split('.');
      return `${header}.${payload}.${nonCanonicalSpelling(signature)}`;
    },
  },
  { name: 'the signature in standard base64 with padding', token: (s) => `${craftToken(HS256_HEADER, liveClaims(s, ADMIN))}=` },
  { name: 'expired one second ago', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, iat: nowSeconds(s) - 3600, exp: nowSeconds(s) - 1 }) },
  { name: 'exp equal to now (not accepted on or after exp)', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, iat: nowSeconds(s) - 3600, exp: nowSeconds(s) }) },
  { name: 'no exp claim', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, iat: nowSeconds(s) }) },
  { name: 'exp as a numeric string', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, iat: nowSeconds(s), exp: String(nowSeconds(s) + 3600) }) },
  { name: 'exp 1e400 (parses to Infinity)', token: (s) => craftToken(HS256_HEADER, rawPayload(`{"username":"${ADMIN}","iat":${nowSeconds(s)},"exp":1e400}`)) },
  { name: 'exp null', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, iat: nowSeconds(s), exp: null }) },
  { name: 'no iat claim', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, exp: nowSeconds(s) + 3600 }) },
  { name: 'iat an hour in the future', token: (s) => craftToken(HS256_HEADER, { username: ADMIN, iat: nowSeconds(s) + 3600, exp: nowSeconds(s) + 7200 }) },
  { name: 'username as a number', token: (s) => craftToken(HS256_HEADER, { ...liveClaims(s, ADMIN), username: 10 }) },
  { name: 'username as an array holding the admin name', token: (s) => craftToken(HS256_HEADER, { ...liveClaims(s, ADMIN), username: [ADMIN] }) },
  { name: 'username as an object with a toString', token: (s) => craftToken(HS256_HEADER, { ...liveClaims(s, ADMIN), username: { toString: ADMIN } }) },
  { name: 'username null', token: (s) => craftToken(HS256_HEADER, { ...liveClaims(s, ADMIN), username: null }) },
  { name: 'no username claim', token: (s) => craftToken(HS256_HEADER, { iat: nowSeconds(s), exp: nowSeconds(s) + 3600 }) },
  { name: 'username "__proto__"', token: (s) => craftToken(HS256_HEADER, liveClaims(s, '__proto__')) },
  { name: 'username "constructor"', token: (s) => craftToken(HS256_HEADER, liveClaims(s, 'constructor')) },
  { name: 'username "hasOwnProperty"', token: (s) => craftToken(HS256_HEADER, liveClaims(s, 'hasOwnProperty')) },
  {
    name: 'a __proto__ claim carrying the username (no own username)',
    token: (s) => craftToken(HS256_HEADER, rawPayload(`{"__proto__":{"username":"${ADMIN}"},"iat":${nowSeconds(s)},"exp":${nowSeconds(s) + 3600}}`)),
  },
  {
    name: 'a __proto__ claim carrying exp (no own exp)',
    token: (s) => craftToken(HS256_HEADER, rawPayload(`{"username":"${ADMIN}","iat":${nowSeconds(s)},"__proto__":{"exp":${nowSeconds(s) + 3600}}}`)),
  },
  {
    name: 'a constructor.prototype claim carrying the username',
    token: (s) => craftToken(HS256_HEADER, rawPayload(`{"constructor":{"prototype":{"username":"${ADMIN}"}},"iat":${nowSeconds(s)},"exp":${nowSeconds(s) + 3600}}`)),
  },
  { name: 'a correctly signed token for a user who does not exist', token: (s) => craftToken(HS256_HEADER, liveClaims(s, 'forge-nobody')) },
  { name: 'a payload that is a JSON array', token: () => craftToken(HS256_HEADER, [ADMIN]) },
  { name: 'a payload that is not JSON', token: () => craftToken(HS256_HEADER, base64url('not json')) },
  { name: 'four segments (a valid token plus one more)', token: (s) => `${craftToken(HS256_HEADER, liveClaims(s, ADMIN))}.${hmacSignature('x')}` },
  { name: 'a valid token with a trailing dot', token: (s) => `${craftToken(HS256_HEADER, liveClaims(s, ADMIN))}.` },
  { name: 'two dots and nothing else', token: () => '..' },
  { name: 'a single segment', token: (s) => segment(liveClaims(s, ADMIN)) },
  {
    name: 'a payload segment with base64 padding',
    token: (s) => {
      const payload = `${segment(liveClaims(s, ADMIN))}==`;
      const header = segment(HS256_HEADER);
      return `${header}.${payload}.${hmacSignature(`${header}.${payload}`)}`;
    },
  },
  {
    name: 'a payload segment with standard-base64 characters (+ and /)',
    token: () => {
      const header = segment(HS256_HEADER);
      const payload = '+/+/+/+/';
      return `${header}.${payload}.${hmacSignature(`${header}.${payload}`)}`;
    },
  },
  {
    name: 'a payload segment holding non-ASCII bytes',
    token: () => {
      const header = segment(HS256_HEADER);
      const payload = 'eyJ1c2VybmFtZSI6Ij\u00e9\u00ff';
      return `${header}.${payload}.${hmacSignature(`${header}.${payload}`)}`;
    },
  },
  {
    name: 'a correctly signed token longer than 4096 characters',
    token: (s) => craftToken(HS256_HEADER, { ...liveClaims(s, ADMIN), pad: 'x'.repeat(4_200) }),
  },
  { name: 'a 100 KB token', token: (s) => craftToken(HS256_HEADER, { ...liveClaims(s, ADMIN), pad: 'x'.repeat(100 * 1024) }), isOversized: true },
];

describe('attack: forged tokens', () => {
  let server: TestServer;
  let adminToken: string;
  let userToken: string;

  before(async () => {
    server = await startTestServer();
    adminToken = await registerUser(server, ADMIN, { level: 10 });
    userToken = await registerUser(server, USER, { level: 5, asToken: adminToken });
  });
  after(() => server.close());

  // Controls: hand-made tokens are accepted when nothing is wrong with them, so every refusal
  // below is caused by the one thing each case changes.
  it('accepts a hand-made HS256 token for the admin (control for every forgery below)', async () => {
    const token = craftToken(HS256_HEADER, liveClaims(server, ADMIN));
    const verify = await server.request({ path: '/api/auth/verify', token });
    assert.equal(verify.status, 200);
    const users = await server.request({ path: `/api/auth/users?token=${queryValue(token)}` });
    assert.equal(users.status, 200);
  });

  it('accepts a hand-made token whose header is {"alg":"HS256"} without typ, and one just under 4096 characters (controls)', async () => {
    const noTyp = craftToken({ alg: 'HS256' }, liveClaims(server, ADMIN));
    assert.equal((await server.request({ path: '/api/auth/verify', token: noTyp })).status, 200);
    const base = craftToken(HS256_HEADER, { ...liveClaims(server, ADMIN), pad: '' }).length;
    const long = craftToken(HS256_HEADER, { ...liveClaims(server, ADMIN), pad: 'x'.repeat(Math.floor(((4096 - base) * 3) / 4) - 4) });
    assert.ok(long.length <= 4096 && long.length > 4000, `control token is ${long.length} characters`);
    assert.equal((await server.request({ path: '/api/auth/verify', token: long })).status, 200);
  });

  for (const forgery of CASES) {
    it(`refuses ${forgery.name} with 401 on verify and on /api/auth/users, in the cookie and in ?token=`, async () => {
      const token = forgery.token(server, userToken);
      const attempts = [
        { where: 'verify cookie', path: '/api/auth/verify', cookie: true, isVerify: true },
        { where: 'verify query', path: `/api/auth/verify?token=${queryValue(token)}`, cookie: false, isVerify: true },
        { where: 'users cookie', path: '/api/auth/users', cookie: true, isVerify: false },
        { where: 'users query', path: `/api/auth/users?token=${queryValue(token)}`, cookie: false, isVerify: false },
      ];
      for (const attempt of attempts) {
        let res;
        try {
          res = await server.request({ path: attempt.path, ...(attempt.cookie ? { token } : {}) });
        } catch (error) {
          // Only a token beyond the 16 KiB header cap may make Node drop the connection.
          assert.ok(forgery.isOversized === true, `${attempt.where}: connection failed: ${String(error)}`);
          continue;
        }
        if (forgery.isOversized === true && res.status === 431) continue;
        assert.equal(res.status, 401, `${attempt.where}: ${res.status} ${res.text}`);
        if (attempt.isVerify) assert.deepEqual(res.json, { configs: CONFIGS }, attempt.where);
        else assert.equal((res.json as { code?: unknown }).code, 'AUTH_REQUIRED', attempt.where);
        assert.equal(res.cookieToken, undefined, `${attempt.where}: no cookie is set`);
      }
      await assertServerAnswers(server, adminToken, ADMIN);
    });
  }

  it('refuses an empty jwt= cookie with 401 on verify and on /api/auth/users', async () => {
    for (const path of ['/api/auth/verify', '/api/auth/users']) {
      const res = await server.request({ path, headers: { cookie: 'jwt=' } });
      assert.equal(res.status, 401, path);
    }
    await assertServerAnswers(server, adminToken, ADMIN);
  });

  it("refuses a user's genuine token on /api/auth/users with 403, never as an administrator", async () => {
    const res = await server.request({ path: '/api/auth/users', token: userToken });
    assert.equal(res.status, 403);
    await assertServerAnswers(server, adminToken, ADMIN);
  });
});
