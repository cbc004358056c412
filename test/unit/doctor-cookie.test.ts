import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cookieProblem, parseSetCookie } from '../../src/cli/doctor-cookie.js';

const LINE = 'jwt=abc; Path=/; Max-Age=604800; Expires=Wed, 02 Dec 2026 00:00:00 GMT; HttpOnly; SameSite=Strict';

function problemOf(line: string, setAt: string, app: string): string | undefined {
  const cookie = parseSetCookie(line);
  assert.ok(cookie !== undefined, line);
  return cookieProblem(cookie, new URL(setAt), new URL(app));
}

describe('the doctor judges the session cookie as a browser would keep and send it', () => {
  it('reads name, value, Domain, Path and Secure; the last of each attribute wins', () => {
    assert.deepEqual(parseSetCookie(`${LINE}; Secure; Domain=.Example.COM`), { name: 'jwt', value: 'abc', domain: 'example.com', path: '/', isSecure: true });
    assert.deepEqual(parseSetCookie('jwt=x; Path=/a; path=/b'), { name: 'jwt', value: 'x', domain: undefined, path: '/b', isSecure: false });
    assert.equal(parseSetCookie('no-equals; Path=/'), undefined);
  });

  it('accepts what a browser keeps and sends', () => {
    const kept: ReadonlyArray<readonly [string, string, string]> = [
      [LINE, 'http://app.example/api/auth/authenticate', 'http://app.example/reports'],
      [`${LINE}; Secure`, 'https://app.example/api/auth/authenticate', 'https://app.example/'],
      // Browsers keep Secure cookies on http://localhost and loopback addresses.
      [`${LINE}; Secure`, 'http://localhost:8080/api/auth/authenticate', 'http://localhost:8080/'],
      [`${LINE}; Secure`, 'http://127.0.0.1:8080/api/auth/authenticate', 'http://127.0.0.1:8080/'],
      [`${LINE}; Domain=example.com`, 'https://auth.example.com/api/auth/authenticate', 'https://app.example.com/x'],
      [LINE.replace('Path=/', 'Path=/apps'), 'http://h.example/apps/api/auth/authenticate', 'http://h.example/apps/one'],
    ];
    for (const [line, setAt, app] of kept) assert.equal(problemOf(line, setAt, app), undefined, `${line} from ${setAt} to ${app}`);
  });

  it('names each reason a browser drops the cookie or never sends it to the app', () => {
    const dropped: ReadonlyArray<readonly [string, string, string, RegExp]> = [
      [`${LINE}; Secure`, 'http://app.lan/api/auth/authenticate', 'http://app.lan/', /Secure but http:\/\/app\.lan is plain http/],
      [`${LINE}; Secure`, 'https://auth.lan/api/auth/authenticate', 'http://auth.lan/', /app at http:\/\/auth\.lan is plain http/],
      [`${LINE}; Domain=other.example`, 'http://app.example/api/auth/authenticate', 'http://app.example/', /Domain=other\.example, which does not cover app\.example/],
      [`${LINE}; Domain=auth.example.com`, 'http://auth.example.com/x', 'http://app.example.com/', /does not cover the app's host app\.example\.com/],
      [`${LINE}; Domain=0.1`, 'http://10.0.0.1/x', 'http://10.0.0.1/', /Domain=0\.1/],
      [LINE, 'http://auth.example.com/x', 'http://app.example.com/', /without a Domain, so a browser never sends it to app\.example\.com/],
      [LINE.replace('Path=/', 'Path=/auth'), 'http://h.example/auth/api/auth/authenticate', 'http://h.example/app', /Path=\/auth, which does not cover \/app/],
      [LINE.replace('Path=/', 'Path=/auth'), 'http://h.example/auth/api/auth/authenticate', 'http://h.example/authority', /does not cover \/authority/],
    ];
    for (const [line, setAt, app, pattern] of dropped) {
      const problem = problemOf(line, setAt, app);
      assert.match(problem ?? '', pattern, `${line} from ${setAt} to ${app}`);
      assert.match(problem ?? '', /Fix: /);
    }
  });
});
