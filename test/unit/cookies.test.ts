import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clearedSessionCookie, readCookie, sessionCookie } from '../../src/http/cookies.js';

describe('readCookie', () => {
  it('does not read inherited names: toString, constructor and hasOwnProperty are absent unless sent', () => {
    assert.equal(readCookie('a=1', 'toString'), undefined);
    assert.equal(readCookie('a=1', 'constructor'), undefined);
    assert.equal(readCookie('a=1', 'hasOwnProperty'), undefined);
  });

  const cases: ReadonlyArray<{ name: string; header: string | undefined; expected: Record<string, string> }> = [
    { name: 'no header', header: undefined, expected: {} },
    { name: 'an empty header', header: '', expected: {} },
    { name: 'one cookie', header: 'jwt=abc.def.ghi', expected: { jwt: 'abc.def.ghi' } },
    { name: 'several cookies with spaces', header: 'a=1;  jwt=tok ;b=2', expected: { a: '1', jwt: 'tok', b: '2' } },
    { name: 'the same name twice: the first value wins', header: 'jwt=first; jwt=second', expected: { jwt: 'first' } },
    { name: 'an empty first value still wins', header: 'jwt=; jwt=second', expected: { jwt: '' } },
    {
      name: 'a whole Set-Cookie line sent back (jwt read, attributes passed over, Expires comma included)',
      header: 'jwt=tok; Path=/; Max-Age=604800; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict',
      expected: { jwt: 'tok' },
    },
    { name: 'attribute pairs in any case before the cookie, passed over', header: 'path=/; EXPIRES=x; samesite=Lax; Domain=example.com; max-age=1; jwt=tok', expected: { jwt: 'tok' } },
    { name: 'a Path pair before the cookie, passed over', header: 'Path=/api; jwt=tok', expected: { jwt: 'tok' } },
    { name: 'Secure, Priority and Partitioned attributes', header: 'jwt=tok; Secure; Priority=High; Partitioned', expected: { jwt: 'tok' } },
    { name: 'bare words', header: 'HttpOnly; garbage; jwt=tok; Secure', expected: { jwt: 'tok' } },
    { name: 'a pair without a name', header: '=x; jwt=tok', expected: { jwt: 'tok' } },
    { name: 'a quoted value', header: 'jwt="abc"', expected: { jwt: 'abc' } },
    { name: 'an empty quoted value', header: 'jwt=""', expected: { jwt: '' } },
    { name: 'a lone quote kept as is', header: 'a="', expected: { a: '"' } },
    { name: 'a value containing "="', header: 'a=b=c', expected: { a: 'b=c' } },
    { name: 'a percent-encoded value', header: 'name=hello%20world%21', expected: { name: 'hello world!' } },
    { name: 'a bad percent escape, kept raw', header: 'bad=%E0%A4%A; jwt=tok', expected: { bad: '%E0%A4%A', jwt: 'tok' } },
    { name: 'a lone percent sign, kept raw', header: 'bad=100%; jwt=tok', expected: { bad: '100%', jwt: 'tok' } },
    { name: 'a bad escape in the first jwt: it still wins over a later one', header: 'jwt=%zz; jwt=good', expected: { jwt: '%zz' } },
    { name: 'only semicolons', header: ';;;', expected: {} },
    { name: 'SP and HTAB around a name and a value, trimmed', header: ' \t jwt \t= \ttok\t ; a=1', expected: { jwt: 'tok', a: '1' } },
    // RFC 6265 trims only SP and HTAB: these names are not `jwt`, as the proxies' filters see it.
    { name: 'a name after U+00A0, not trimmed', header: '\u00a0jwt=planted; jwt=tok', expected: { '\u00a0jwt': 'planted', jwt: 'tok' } },
    { name: 'a name after U+FEFF, not trimmed', header: '\ufeffjwt=planted; jwt=tok', expected: { '\ufeffjwt': 'planted', jwt: 'tok' } },
    { name: 'a name before U+2003, not trimmed', header: 'jwt\u2003=planted; jwt=tok', expected: { 'jwt\u2003': 'planted', jwt: 'tok' } },
    { name: 'a name after a line feed, not trimmed', header: '\njwt=planted; jwt=tok', expected: { '\njwt': 'planted', jwt: 'tok' } },
    { name: 'a value inside U+00A0, kept', header: 'jwt=\u00a0tok\u00a0', expected: { jwt: '\u00a0tok\u00a0' } },
  ];
  // Every name some case expects, plus a wrong-case jwt and a name no header sends: each case
  // must give undefined for every one of these it does not list.
  const probes = [...new Set([...cases.flatMap(({ expected }) => Object.keys(expected)), 'JWT', 'missing'])];
  for (const { name, header, expected } of cases) {
    it(`reads ${name}`, () => {
      for (const cookieName of probes) assert.equal(readCookie(header, cookieName), Object.hasOwn(expected, cookieName) ? expected[cookieName] : undefined, cookieName);
    });
  }

  it('does not throw on any malformed header', () => {
    for (const header of ['%', '=', '==', ';=;', 'a=%zz', 'a=%', '"', 'a=";b', '\u0000=\u0000', 'a=%ED%A0%80']) {
      for (const cookieName of ['a', 'jwt', '\u0000']) assert.doesNotThrow(() => readCookie(header, cookieName), header);
    }
  });

  it('reads __proto__=x as a plain cookie without polluting any prototype', () => {
    const header = '__proto__=x; jwt=tok';
    assert.equal(readCookie(header, '__proto__'), 'x');
    assert.equal(readCookie(header, 'jwt'), 'tok');
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
    assert.equal(Object.getPrototypeOf({}), Object.prototype);
  });

  it('reads constructor=x as a plain cookie', () => {
    assert.equal(readCookie('constructor=x', 'constructor'), 'x');
    assert.equal(typeof ({}).constructor, 'function');
  });

  // Work is counted, not timed: a String object that counts every character its indexOf,
  // charCodeAt, charAt and slice calls look at. The old scan looked for "=" from each segment
  // to the end of the whole header: 16 KB of ";" cost about 134 million characters.
  describe('scans a hostile header in linear work', () => {
    class CountingString extends String {
      scanned = 0;
      override indexOf(search: string, from = 0): number {
        const found = super.indexOf(search, from);
        this.scanned += (found < 0 ? this.length : found + search.length) - Math.max(0, from);
        return found;
      }
      override charCodeAt(index: number): number {
        this.scanned += 1;
        return super.charCodeAt(index);
      }
      override charAt(index: number): string {
        this.scanned += 1;
        return super.charAt(index);
      }
      override slice(start?: number, end?: number): string {
        const text = super.slice(start, end);
        this.scanned += text.length;
        return text;
      }
    }
    const size = 16 * 1024;
    const headers: ReadonlyArray<[string, string]> = [
      ['16 KB of ";"', ';'.repeat(size)],
      ['16 KB of "a;"', 'a;'.repeat(size / 2)],
      ['16 KB of " ;"', ' ;'.repeat(size / 2)],
      ['16 KB of ";" ending in jwt=tok', `${';'.repeat(size - 8)}jwt=tok`],
      ['16 KB of "a=;" pairs', 'a=;'.repeat(Math.floor(size / 3))],
    ];
    for (const [name, text] of headers) {
      it(`looks at each character of ${name} a bounded number of times`, () => {
        const header = new CountingString(text);
        const value = readCookie(header as unknown as string, 'jwt');
        assert.equal(value, readCookie(text, 'jwt'));
        assert.ok(header.scanned > 0, 'the counting string was not used');
        assert.ok(header.scanned <= 4 * text.length, `${header.scanned} characters looked at for a ${text.length}-character header`);
      });
    }
  });
});

describe('sessionCookie', () => {
  it('builds the exact cookie of the interface', () => {
    assert.equal(
      sessionCookie('a.b.c', 604800, 0, { path: '/', isSecure: false }),
      'jwt=a.b.c; Path=/; Max-Age=604800; Expires=Thu, 08 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict',
    );
  });

  it('derives Expires from the injected clock plus Max-Age', () => {
    const nowMs = Date.UTC(2025, 10, 21, 12, 30, 15);
    assert.equal(
      sessionCookie('t', 604800, nowMs, { path: '/', isSecure: false }),
      'jwt=t; Path=/; Max-Age=604800; Expires=Fri, 28 Nov 2025 12:30:15 GMT; HttpOnly; SameSite=Strict',
    );
  });

  it('adds Secure when asked', () => {
    assert.equal(
      sessionCookie('t', 604800, 0, { path: '/', isSecure: true }),
      'jwt=t; Path=/; Max-Age=604800; Expires=Thu, 08 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict; Secure',
    );
  });

  it('uses the configured path', () => {
    assert.match(sessionCookie('t', 60, 0, { path: '/flood', isSecure: false }), /^jwt=t; Path=\/flood; /);
  });

  it('round-trips through readCookie when sent back whole', () => {
    const header = sessionCookie('x.y.z', 604800, 0, { path: '/', isSecure: true });
    assert.equal(readCookie(header, 'jwt'), 'x.y.z');
  });
});

describe('the cookie domain', () => {
  it('adds Domain to the session cookie when one is given', () => {
    assert.equal(
      sessionCookie('t', 60, 0, { path: '/', isSecure: true, domain: 'example.org' }),
      'jwt=t; Path=/; Domain=example.org; Max-Age=60; Expires=Thu, 01 Jan 1970 00:01:00 GMT; HttpOnly; SameSite=Strict; Secure',
    );
  });

  it('adds the same Domain to the cookie that clears the session, or the browser would keep the old one', () => {
    assert.equal(
      clearedSessionCookie({ path: '/', isSecure: false, domain: 'example.org' }),
      'jwt=; Path=/; Domain=example.org; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict',
    );
  });

  it('leaves Domain out (a host-only cookie) when the domain is undefined', () => {
    assert.ok(!sessionCookie('t', 60, 0, { path: '/', isSecure: false, domain: undefined }).includes('Domain'));
    assert.ok(!clearedSessionCookie({ path: '/', isSecure: false }).includes('Domain'));
  });
});

describe('clearedSessionCookie', () => {
  it('builds the exact logout cookie of the interface', () => {
    assert.equal(
      clearedSessionCookie({ path: '/', isSecure: false }),
      'jwt=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict',
    );
  });

  it('adds Secure when asked', () => {
    assert.equal(
      clearedSessionCookie({ path: '/', isSecure: true }),
      'jwt=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict; Secure',
    );
  });
});
