import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRouter, type PathParams } from '../../src/http/router.js';

const routes = [
  { method: 'GET', path: '/api/auth/verify', handler: 'verify' },
  { method: 'POST', path: '/api/auth/authenticate', handler: 'authenticate' },
  { method: 'POST', path: '/api/auth/register', handler: 'register' },
  { method: 'GET', path: '/api/auth/logout', handler: 'logout' },
  { method: 'GET', path: '/api/auth/users', handler: 'list' },
  { method: 'GET', path: '/api/auth/users/:username', handler: 'get-user' },
  { method: 'PATCH', path: '/api/auth/users/:username', handler: 'update' },
  { method: 'DELETE', path: '/api/auth/users/:username', handler: 'delete' },
];
const router = createRouter(routes);

function assertNotFound(method: string, path: string): void {
  assertNotFoundIn(router, method, path);
}

function assertMethodNotAllowed(method: string, path: string, allow: readonly string[]): void {
  const match = router.match(method, path);
  assert.equal(match.handler, undefined, `expected no route, got ${String(match.handler)}`);
  assert.ok('allow' in match && match.allow !== undefined, 'expected the methods the path has');
  assert.deepEqual([...match.allow].sort(), [...allow].sort());
}

function assertNotFoundIn(r: ReturnType<typeof createRouter<string>>, method: string, path: string): void {
  assert.deepEqual(r.match(method, path), { handler: undefined, allow: undefined });
}

describe('createRouter', () => {
  const matches: ReadonlyArray<{ method: string; path: string; handler: string; params: PathParams }> = [
    { method: 'GET', path: '/api/auth/verify', handler: 'verify', params: {} },
    { method: 'POST', path: '/api/auth/authenticate', handler: 'authenticate', params: {} },
    { method: 'GET', path: '/api/auth/users', handler: 'list', params: {} },
    { method: 'GET', path: '/api/auth/users/alice', handler: 'get-user', params: { username: 'alice' } },
    { method: 'PATCH', path: '/api/auth/users/alice', handler: 'update', params: { username: 'alice' } },
    { method: 'DELETE', path: '/api/auth/users/bob', handler: 'delete', params: { username: 'bob' } },
  ];
  for (const { method, path, handler, params } of matches) {
    it(`routes ${method} ${path} to ${handler} with the parameters ${JSON.stringify(params)}`, () => {
      assert.deepEqual(router.match(method, path), { handler, params });
    });
  }

  describe('decodes each parameter once, and hands none that is no path segment', () => {
    const decoded: ReadonlyArray<[string, string]> = [
      ['a%2Fb', 'a/b'],
      ['%F0%9F%98%80', '\u{1F600}'],
      ['%252F', '%2F'],
      ['%2561', '%61'],
      ['a%20b', 'a b'],
      ['%2E%2E%2Fpath-admin', '../path-admin'],
      ['path-victim%2F..', 'path-victim/..'],
      ['caf%C3%A9', 'caf\u00e9'],
      ['%C2%85', '\u0085'],
      ['a+b', 'a+b'],
    ];
    for (const [raw, value] of decoded) {
      it(`hands ${raw} as ${JSON.stringify(value)}`, () => {
        assert.deepEqual(router.match('DELETE', `/api/auth/users/${raw}`), { handler: 'delete', params: { username: value } });
      });
    }
    // Still the route (the judge answers a stranger first); the handler answers 400 or 404 for the missing value.
    const refused = [
      '%zz', '%', 'a%2', '%E0%A4', '%C0%AF', '%ED%A0%80', '%FF',
      '.', '..', '%2E', '%2e%2e', '%2E.',
      '%00', 'path-victim%00', '%0Apath-victim', '%1F', '%7F',
    ];
    for (const raw of refused) {
      it(`matches the route for ${raw} and hands its parameter as undefined`, () => {
        assert.deepEqual(router.match('PATCH', `/api/auth/users/${raw}`), { handler: 'update', params: { username: undefined } });
      });
    }
    it('refuses each parameter of a pattern on its own', () => {
      const r = createRouter([{ method: 'DELETE', path: '/u/:name/s/:id', handler: 'end' }]);
      assert.deepEqual(r.match('DELETE', '/u/a%2Fb/s/%zz'), { handler: 'end', params: { name: 'a/b', id: undefined } });
      assert.deepEqual(r.match('DELETE', '/u/../s/x%41'), { handler: 'end', params: { name: undefined, id: 'xA' } });
    });
    it('hands the parameters as a frozen object', () => {
      assert.ok(Object.isFrozen(router.match('GET', '/api/auth/users/alice')));
      const match = router.match('GET', '/api/auth/users/alice');
      assert.ok(match.handler !== undefined && Object.isFrozen(match.params));
    });
  });

  const notFound: ReadonlyArray<[string, string]> = [
    ['GET', '/'],
    ['GET', '/api'],
    ['GET', '/api/auth'],
    ['GET', '/api/auth/unknown'],
    ['GET', '/api/auth/verify/'],
    ['GET', '/api/auth/verify/extra'],
    ['GET', '/API/AUTH/VERIFY'],
    ['DELETE', '/api/auth/users/'],
    ['DELETE', '/api/auth/users/a/b'],
    ['DELETE', '/api/auth/users//'],
    ['GET', '/api/auth/users/alice/'],
    ['GET', ''],
  ];
  for (const [method, path] of notFound) {
    it(`finds nothing (404) for ${method} ${JSON.stringify(path)}`, () => assertNotFound(method, path));
  }

  const notAllowed: ReadonlyArray<[string, string, string[]]> = [
    ['POST', '/api/auth/verify', ['GET']],
    ['GET', '/api/auth/authenticate', ['POST']],
    ['DELETE', '/api/auth/users', ['GET']],
    ['POST', '/api/auth/users/alice', ['GET', 'PATCH', 'DELETE']],
    ['PUT', '/api/auth/users/alice', ['GET', 'PATCH', 'DELETE']],
    ['get', '/api/auth/verify', ['GET']],
  ];
  for (const [method, path, allow] of notAllowed) {
    it(`finds the path without the method (405) for ${method} ${path}, allowing ${allow.join(', ')}`, () => assertMethodNotAllowed(method, path, allow));
  }

  it('throws a TypeError for a duplicate literal route', () => {
    assert.throws(
      () =>
        createRouter([
          { method: 'GET', path: '/a', handler: 1 },
          { method: 'GET', path: '/a', handler: 2 },
        ]),
      TypeError,
    );
  });

  it('throws a TypeError for a duplicate param route, even with another param name', () => {
    assert.throws(
      () =>
        createRouter([
          { method: 'GET', path: '/u/:name', handler: 1 },
          { method: 'GET', path: '/u/:id', handler: 2 },
        ]),
      TypeError,
    );
  });

  it('accepts the same path with different methods', () => {
    const r = createRouter([
      { method: 'GET', path: '/a', handler: 1 },
      { method: 'POST', path: '/a', handler: 2 },
    ]);
    assert.equal(r.match('POST', '/a').handler, 2);
  });

  it('prefers a literal route over a param route with the same prefix', () => {
    const r = createRouter([
      { method: 'GET', path: '/u/:name', handler: 'param' },
      { method: 'GET', path: '/u/me', handler: 'literal' },
    ]);
    assert.deepEqual(r.match('GET', '/u/me'), { handler: 'literal', params: {} });
    assert.deepEqual(r.match('GET', '/u/you'), { handler: 'param', params: { name: 'you' } });
  });

  describe('patterns with a parameter before their end', () => {
    const r = createRouter([
      { method: 'GET', path: '/api/auth/users/:username', handler: 'user' },
      { method: 'GET', path: '/api/auth/users/:username/sessions', handler: 'sessions' },
      { method: 'DELETE', path: '/api/auth/users/:username/sessions/:id', handler: 'end-session' },
      { method: 'POST', path: '/api/auth/users/:name/reset-link', handler: 'reset-link' },
      { method: 'GET', path: '/api/auth/account/sessions', handler: 'own-sessions' },
    ]);
    it('matches each segment, giving every parameter by its name, decoded', () => {
      assert.deepEqual(r.match('GET', '/api/auth/users/a%2Fb/sessions'), { handler: 'sessions', params: { username: 'a/b' } });
      assert.deepEqual(r.match('DELETE', '/api/auth/users/alice/sessions/XYZ'), { handler: 'end-session', params: { username: 'alice', id: 'XYZ' } });
      assert.deepEqual(r.match('POST', '/api/auth/users/bob/reset-link'), { handler: 'reset-link', params: { name: 'bob' } });
    });
    it('leaves literal and trailing-parameter routes as they were', () => {
      assert.deepEqual(r.match('GET', '/api/auth/users/alice'), { handler: 'user', params: { username: 'alice' } });
      assert.deepEqual(r.match('GET', '/api/auth/account/sessions'), { handler: 'own-sessions', params: {} });
    });
    it('finds nothing for an empty parameter, a missing or extra segment, or another literal', () => {
      for (const path of [
        '/api/auth/users//sessions', '/api/auth/users/alice/sessions/', '/api/auth/users/alice/sessions/x/y',
        '/api/auth/users/alice/session', '/api/auth/users/alice/SESSIONS', '/api/auth/users/a/b/sessions',
        '/api/auth/users/alice/sessions//', '/api/auth/users/alice/reset-link/x',
      ]) {
        assertNotFoundIn(r, 'GET', path);
        assertNotFoundIn(r, 'DELETE', path);
      }
    });
    it('answers 405 with the pattern\'s methods for another method', () => {
      assert.deepEqual(r.match('POST', '/api/auth/users/alice/sessions'), { handler: undefined, allow: ['GET'] });
      assert.deepEqual(r.match('GET', '/api/auth/users/alice/sessions/XYZ'), { handler: undefined, allow: ['DELETE'] });
    });
    it('throws a TypeError for a duplicate, even with other parameter names', () => {
      assert.throws(() => createRouter([
        { method: 'GET', path: '/u/:name/s/:id', handler: 1 },
        { method: 'GET', path: '/u/:user/s/:key', handler: 2 },
      ]), TypeError);
    });
    it('throws a TypeError for a parameter without a name, or a name twice in one pattern', () => {
      assert.throws(() => createRouter([{ method: 'GET', path: '/u/:', handler: 1 }]), TypeError);
      assert.throws(() => createRouter([{ method: 'GET', path: '/u/:/s', handler: 1 }]), TypeError);
      assert.throws(() => createRouter([{ method: 'GET', path: '/u/:id/s/:id', handler: 1 }]), TypeError);
    });
    it('prefers a literal segment over a parameter at the same place, whatever the order given', () => {
      const both = createRouter([
        { method: 'GET', path: '/u/:name/s', handler: 'param' },
        { method: 'GET', path: '/u/me/:what', handler: 'literal-first' },
      ]);
      assert.deepEqual(both.match('GET', '/u/me/s'), { handler: 'literal-first', params: { what: 's' } });
      assert.deepEqual(both.match('GET', '/u/you/s'), { handler: 'param', params: { name: 'you' } });
    });
  });

  it('routes every method, known or not, to a route whose method is *', () => {
    const r = createRouter([
      { method: '*', path: '/gate', handler: 'gate' },
      { method: 'GET', path: '/a', handler: 'a' },
    ]);
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PURGE', 'PROPFIND']) {
      assert.deepEqual(r.match(method, '/gate'), { handler: 'gate', params: {} });
    }
    assertNotFoundIn(r, 'GET', '/gate/');
  });

  it('prefers a route for the exact method over * on the same path, and leaves * out of Allow', () => {
    const r = createRouter([
      { method: '*', path: '/gate', handler: 'any' },
      { method: 'GET', path: '/gate', handler: 'get' },
      { method: 'GET', path: '/a', handler: 'a' },
    ]);
    assert.equal(r.match('GET', '/gate').handler, 'get');
    assert.equal(r.match('POST', '/gate').handler, 'any');
    assert.deepEqual(r.match('POST', '/a'), { handler: undefined, allow: ['GET'] });
  });

  it('finds nothing for every path when it has no routes', () => {
    const empty = createRouter<string>([]);
    assertNotFoundIn(empty, 'GET', '/');
  });

  it('never throws for a miss, and gives the same result for every miss on one path', () => {
    assert.equal(router.match('GET', '/nothing'), router.match('POST', '/elsewhere'));
    assert.equal(router.match('PUT', '/api/auth/users/alice'), router.match('POST', '/api/auth/users/bob'));
    assert.ok(Object.isFrozen(router.match('PUT', '/api/auth/users/alice')));
  });
});
