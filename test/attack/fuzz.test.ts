import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTokenCodec } from '../../src/auth/jwt.js';
import { TokenInvalid } from '../../src/errors.js';
import type { Checker } from '../../src/validate/check.js';
import { checkAuthenticateBody, registerBodyChecker, updateBodyChecker } from '../../src/validate/auth.js';
import { checkClientSettings } from '../../src/validate/client-settings.js';
import { errorLogLines } from '../helpers/attack.js';
import { CLIENT_SETTINGS, registerUser, startTestServer, TEST_SECRET, type TestServer } from '../helpers/server.js';

// Seeded fuzzing of the validators, the token verifier and the real server. A failure names
// its seed: run again with GATEHOUSE_FUZZ_SEED=<seed> to replay exactly the same cases.

const SEED = process.env['GATEHOUSE_FUZZ_SEED'] === undefined ? (Date.now() ^ (process.pid << 16)) >>> 0 : Number(process.env['GATEHOUSE_FUZZ_SEED']) >>> 0;

/** mulberry32: a tiny, well-distributed 32-bit PRNG; the same seed gives the same stream. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Random {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)] as T;
  }
  string(alphabet: string, maxLength: number): string {
    let out = '';
    const length = this.int(maxLength + 1);
    for (let i = 0; i < length; i++) out += alphabet[this.int(alphabet.length)] ?? '';
    return out;
  }
}

const KEYS = ['username', 'password', 'client', 'level', 'type', 'version', 'socket', 'host', 'port', 'url', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'x', ''];
const STRINGS = [
  '', 'a', 'ADMINISTRATOR', 'USER', 'ADMINISTRATOR ', '10', 'rTorrent', 'qBittorrent', 'Transmission', 'Deluge', 'socket', 'tcp', 'web', 'rpc',
  'http://127.0.0.1:8080', 'https://x', 'ftp://x', 'javascript:alert(1)', '/run/x.sock', '__proto__', 'constructor', '\u0000', '\u001f', '\u007f', '\ud800',
  '\ud83d\ude00', 'e\u0301', '\u2028', 'x'.repeat(256), 'x'.repeat(257), 'x'.repeat(1024), 'x'.repeat(1025), 'x'.repeat(5000),
];
const NUMBERS = [0, -0, 1, 5, 10, 10.5, -1, 65535, 65536, 2 ** 53, -(2 ** 53), 1e308, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity];

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function randomValue(random: Random, depth: number): unknown {
  const kind = random.int(depth > 3 ? 4 : 7);
  switch (kind) {
    case 0:
      return random.pick([null, true, false, undefined]);
    case 1:
      return random.chance(0.5) ? random.pick(NUMBERS) : (random.float() - 0.5) * 10 ** random.int(12);
    case 2:
      return random.pick(STRINGS);
    case 3:
      return random.string('abcXYZ019 ./%_-\u00e9\u0000\n', 40);
    case 4:
      return Array.from({ length: random.int(4) }, () => randomValue(random, depth + 1));
    default: {
      const target: Record<string, unknown> = random.chance(0.2) ? (Object.create(null) as Record<string, unknown>) : {};
      const keys = random.int(5);
      for (let i = 0; i < keys; i++) defineOwn(target, random.pick(KEYS), randomValue(random, depth + 1));
      return target;
    }
  }
}

const VALID_CLIENTS: readonly Record<string, unknown>[] = [
  { ...CLIENT_SETTINGS },
  { client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 5000 },
  { client: 'qBittorrent', type: 'web', version: 1, url: 'http://localhost:8080', username: 'u', password: 'p' },
  { client: 'Transmission', type: 'rpc', version: 1, url: 'https://localhost/transmission/rpc', username: '', password: '' },
  { client: 'Deluge', type: 'rpc', version: 1, host: 'localhost', port: 58846, username: 'u', password: 'p' },
];

function validBody(random: Random): Record<string, unknown> {
  return { username: `fuzz-${random.int(1000)}`, password: random.pick(['pw', 'p'.repeat(1024)]), client: { ...random.pick(VALID_CLIENTS) }, level: random.pick([10, 5, 'ADMINISTRATOR', 'USER']) };
}

/** Deletes, replaces or adds one field somewhere in the body (top level or inside client). */
function mutate(random: Random, body: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...body };
  const client = copy['client'];
  const target: Record<string, unknown> = random.chance(0.4) && typeof client === 'object' && client !== null ? { ...(client as Record<string, unknown>) } : copy;
  if (target !== copy) copy['client'] = target;
  const keys = Object.keys(target);
  switch (random.int(3)) {
    case 0:
      if (keys.length > 0) delete target[random.pick(keys)];
      break;
    case 1:
      if (keys.length > 0) defineOwn(target, random.pick(keys), randomValue(random, 1));
      break;
    default:
      defineOwn(target, random.pick(KEYS), randomValue(random, 1));
  }
  return copy;
}

function assertWellFormedResult(result: unknown, checker: Checker<unknown>, label: string): void {
  assert.ok(typeof result === 'object' && result !== null, `${label}: result is not an object`);
  const outcome = result as { ok?: unknown; value?: unknown; problems?: unknown };
  if (outcome.ok === true) {
    assert.ok('value' in outcome, `${label}: ok without value`);
    const again = checker(outcome.value, '');
    assert.ok(again.ok, `${label}: its own output does not pass again`);
    assert.deepEqual(again.value, outcome.value, `${label}: checking the output again changes it`);
    return;
  }
  assert.equal(outcome.ok, false, `${label}: ok is neither true nor false`);
  assert.ok(Array.isArray(outcome.problems) && outcome.problems.length > 0, `${label}: a refusal without problems`);
  for (const problem of outcome.problems as unknown[]) {
    const { path, message } = problem as { path?: unknown; message?: unknown };
    assert.ok(typeof path === 'string' && typeof message === 'string' && message !== '', `${label}: malformed problem ${JSON.stringify(problem)}`);
  }
}

describe(`attack: fuzz (seed ${SEED}; replay with GATEHOUSE_FUZZ_SEED=${SEED})`, () => {
  it(`validators never throw and always answer {ok:true,value} or {ok:false,problems} (seed ${SEED})`, () => {
    const random = new Random(SEED);
    const validators: ReadonlyArray<[string, Checker<unknown>, readonly string[]]> = [
      ['registerBodyChecker(1)', registerBodyChecker(1) as Checker<unknown>, ['username', 'password', 'client', 'level']],
      ['updateBodyChecker(1)', updateBodyChecker(1) as Checker<unknown>, ['username', 'password', 'client', 'level']],
      ['checkAuthenticateBody', checkAuthenticateBody as Checker<unknown>, ['username', 'password']],
      ['checkClientSettings', checkClientSettings as Checker<unknown>, ['client', 'type', 'version', 'socket', 'host', 'port', 'url', 'username', 'password']],
    ];
    let accepted = 0;
    for (let i = 0; i < 3_000; i++) {
      const base = validBody(random);
      const input = random.chance(0.3) ? randomValue(random, 0) : random.chance(0.5) ? mutate(random, mutate(random, base)) : mutate(random, base);
      for (const [name, checker, allowedKeys] of validators) {
        const subject = name === 'checkClientSettings' && random.chance(0.7) && typeof input === 'object' && input !== null && 'client' in input ? (input as { client: unknown }).client : input;
        const before = safeJson(subject);
        let result: unknown;
        try {
          result = checker(subject, '');
        } catch (error) {
          assert.fail(`${name} threw on case ${i} (seed ${SEED}): ${String(error)} for ${before ?? String(subject)}`);
        }
        assertWellFormedResult(result, checker, `${name} case ${i} (seed ${SEED})`);
        assert.equal(safeJson(subject), before, `${name} changed its input`);
        const outcome = result as { ok: boolean; value?: Record<string, unknown> };
        if (outcome.ok) {
          accepted++;
          for (const key of Object.keys(outcome.value ?? {})) assert.ok(allowedKeys.includes(key), `${name} let the unknown key ${JSON.stringify(key)} through`);
          assert.equal(Object.getPrototypeOf(outcome.value), Object.prototype, `${name} returned an object with another prototype`);
        }
      }
    }
    // Mutations keep many bodies valid: this guards against a generator that only makes junk.
    assert.ok(accepted > 500, `only ${accepted} inputs were accepted: the generator is too hostile to test the accept path`);
  });

  it(`the token verifier throws only TokenInvalid, and only the unmodified token verifies (seed ${SEED})`, () => {
    const random = new Random(SEED ^ 0x5eed);
    const codec = createTokenCodec(Buffer.from(TEST_SECRET));
    const now = 1_760_000_000;
    const claims = { username: 'fuzz-user', iat: now, exp: now + 3600 };
    const valid = codec.sign(claims);
    assert.deepEqual(codec.verify(valid, now), claims);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ %\u00e9\u0000';

    const refused = (token: string, label: string): void => {
      try {
        const result = codec.verify(token, now);
        assert.fail(`${label}: verified ${JSON.stringify(token)} as ${JSON.stringify(result)} (seed ${SEED})`);
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error;
        assert.ok(error instanceof TokenInvalid, `${label}: threw ${String(error)} instead of TokenInvalid (seed ${SEED})`);
      }
    };

    for (let i = 0; i < 3_000; i++) {
      let token = valid;
      const edits = 1 + random.int(3);
      for (let e = 0; e < edits; e++) {
        const at = random.int(token.length + 1);
        const segments = token.split('.');
        switch (random.int(7)) {
          case 0:
            token = `${token.slice(0, at)}${random.pick([...alphabet])}${token.slice(at + 1)}`;
            break;
          case 1:
            token = `${token.slice(0, at)}${random.pick([...alphabet])}${token.slice(at)}`;
            break;
          case 2:
            token = `${token.slice(0, at)}${token.slice(at + 1)}`;
            break;
          case 3:
            segments.splice(random.int(segments.length + 1), 0, random.string(alphabet, 30));
            token = segments.join('.');
            break;
          case 4:
            segments.splice(random.int(segments.length), 1);
            token = segments.join('.');
            break;
          case 5:
            segments[random.int(segments.length)] = Buffer.from(safeJson(randomValue(random, 0)) ?? 'null').toString('base64url');
            token = segments.join('.');
            break;
          default:
            token = random.chance(0.5) ? token.slice(0, at) : `${token}${random.string(alphabet, 8)}`;
        }
      }
      if (token !== valid) refused(token, `mutation ${i}`);
    }

    // Correctly signed tokens with random headers and payloads: accepted exactly when the rules
    // of docs/contract/flood-api.md "Tokens and cookies" hold.
    let acceptedSigned = 0;
    for (let i = 0; i < 2_000; i++) {
      const header: Record<string, unknown> = random.chance(0.6) ? { alg: 'HS256' } : {};
      if (random.chance(0.3)) defineOwn(header, random.pick(['alg', 'typ', 'crit', 'kid', '__proto__']), random.pick<unknown>(['HS256', 'JWT', 'none', 'HS512', ['exp'], 'jwt', 1, null]));
      const payload: Record<string, unknown> = {};
      if (random.chance(0.85)) payload['username'] = random.chance(0.8) ? random.pick(['fuzz-user', '', '__proto__', 'x'.repeat(300)]) : randomValue(random, 2);
      if (random.chance(0.85)) payload['iat'] = random.chance(0.8) ? now + random.pick([-3600, -1, 0, 1, 59, 60, 61, 3600]) : randomValue(random, 2);
      if (random.chance(0.85)) payload['exp'] = random.chance(0.8) ? now + random.pick([-3600, -1, 0, 1, 3600]) : randomValue(random, 2);
      if (random.chance(0.3)) defineOwn(payload, random.pick(KEYS), randomValue(random, 2));
      const signingInput = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
      const token = `${signingInput}.${createHmac('sha256', TEST_SECRET).update(signingInput).digest('base64url')}`;
      const header2 = JSON.parse(JSON.stringify(header)) as Record<string, unknown>;
      const payload2 = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
      const shouldPass =
        token.length <= 4096 &&
        header2['alg'] === 'HS256' &&
        !Object.hasOwn(header2, 'crit') &&
        (!Object.hasOwn(header2, 'typ') || header2['typ'] === 'JWT') &&
        typeof payload2['exp'] === 'number' && Number.isFinite(payload2['exp']) && now < payload2['exp'] &&
        typeof payload2['iat'] === 'number' && Number.isFinite(payload2['iat']) && payload2['iat'] <= now + 60 &&
        typeof payload2['username'] === 'string';
      if (shouldPass) {
        acceptedSigned++;
        const result = codec.verify(token, now);
        assert.deepEqual(result, { username: payload2['username'], iat: payload2['iat'], exp: payload2['exp'] }, `signed case ${i} (seed ${SEED})`);
      } else {
        refused(token, `signed case ${i} ${JSON.stringify(header2)} ${JSON.stringify(payload2)}`);
      }
    }
    assert.ok(acceptedSigned > 40, `only ${acceptedSigned} signed cases were valid: the generator misses the accept path`);
  });

  describe(`the real server under ~500 random requests (seed ${SEED})`, () => {
    let server: TestServer;
    let adminToken: string;
    let userToken: string;

    before(async () => {
      server = await startTestServer({ GATEHOUSE_THROTTLE_USER: '1000000', GATEHOUSE_THROTTLE_ADDRESS: '1000000' });
      adminToken = await registerUser(server, 'fuzz-admin', { level: 10 });
      userToken = await registerUser(server, 'fuzz-user', { level: 5, asToken: adminToken });
      await registerUser(server, 'fuzz-victim', { level: 5, asToken: adminToken });
    });
    after(() => server.close());

    it(`never answers 500 except the contract's USERNAME_TAKEN / USER_NOT_FOUND, and still answers afterwards (seed ${SEED})`, { timeout: 60_000 }, async () => {
      const random = new Random(SEED ^ 0xf00d);
      const pathChars = 'abcXYZ09-._~%/?=&;:@!$\'()*+,\u00e9';
      const routes: ReadonlyArray<readonly [string, string]> = [
        ['POST', '/api/auth/authenticate'], ['POST', '/api/auth/register'], ['POST', '/api/auth/register?cookie=false'], ['GET', '/api/auth/verify'],
        ['GET', '/api/auth/logout'], ['GET', '/api/auth/users'], ['PATCH', '/api/auth/users/fuzz-victim'], ['PATCH', '/api/auth/users/fuzz-nobody'],
        ['DELETE', '/api/auth/users/fuzz-nobody'], ['DELETE', '/api/auth/users/fuzz-victim'], ['GET', '/healthz'], ['GET', '/'], ['GET', '/api/auth/users/'],
      ];
      const suffixes = ['?token=', '?__proto__=1', '?cookie=false&cookie=true', '/..', '%2F', '%00', '%zz', '%E0%A4', '?1763752800123', '#x', '//'];
      const methods = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'];
      const contentTypes = ['application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON', 'application/json; charset=utf-16'];
      const statuses = new Map<number, number>();
      for (let i = 0; i < 500; i++) {
        const [routeMethod, routePath] = random.pick(routes);
        let path = routePath + (random.chance(0.3) ? random.pick(suffixes) : '');
        if (random.chance(0.15)) path += random.string(pathChars, 12);
        if (path.endsWith('?token=') && random.chance(0.7)) path += random.pick([adminToken, userToken, 'x.y.z']);
        const method = random.chance(0.8) ? routeMethod : random.pick(methods);
        const cookieKind = random.int(6);
        const cookie =
          cookieKind === 0 ? undefined
          : cookieKind === 1 ? `jwt=${adminToken}`
          : cookieKind === 2 ? `jwt=${userToken}`
          : cookieKind === 3 ? `jwt=${adminToken.slice(0, random.int(adminToken.length))}${random.string('abc.-_', 4)}`
          : cookieKind === 4 ? random.string('abc=; ,"\\%jwt', 40)
          : `__proto__=1; jwt=${adminToken}`;
        const headers: Record<string, string> = {};
        if (cookie !== undefined) headers['cookie'] = cookie;
        let body: string | Buffer | undefined;
        const bodyKind = random.int(5);
        if (bodyKind === 1) body = safeJson(randomValue(random, 0)) ?? 'null';
        else if (bodyKind === 2) body = JSON.stringify(mutate(random, validBody(random)));
        else if (bodyKind === 3) body = Buffer.from(Array.from({ length: random.int(200) }, () => random.int(256)));
        else if (bodyKind === 4) body = JSON.stringify({ username: random.pick(['fuzz-user', 'fuzz-victim', 'fuzz-nobody']), password: random.pick(['fuzz-user-password', 'wrong']) });
        if (body !== undefined) headers['content-type'] = random.pick(contentTypes);

        const res = await server.request({ method, path, headers, ...(body === undefined ? {} : { body }) });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const code = (res.json as { code?: unknown } | undefined)?.code;
        const label = `request ${i} (seed ${SEED}): ${method} ${path} cookie=${JSON.stringify(cookie)} body=${JSON.stringify(body?.toString('latin1').slice(0, 120))}`;
        assert.ok(res.status >= 200 && res.status < 600, `${label} answered ${res.status}`);
        if (res.status === 500) assert.ok(code === 'USERNAME_TAKEN' || code === 'USER_NOT_FOUND', `${label} answered 500 ${res.text}`);
        assert.deepEqual(errorLogLines(server), [], `${label} logged an error`);
      }
      const verify = await server.request({ path: '/api/auth/verify', token: adminToken });
      assert.equal(verify.status, 200, verify.text);
      const anonymous = await server.request({ path: '/api/auth/verify' });
      assert.equal(anonymous.status, 401);
      // The mix reached the handlers, not only the router's 404s.
      assert.ok((statuses.get(200) ?? 0) > 20 && (statuses.get(400) ?? 0) > 5 && (statuses.get(401) ?? 0) > 20, `status mix ${JSON.stringify([...statuses])}`);
    });
  });
});

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
