import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_QUERY_PAIRS, parseQuery } from '../../src/http/query.js';

describe('parseQuery', () => {
  const cases: ReadonlyArray<{ name: string; search: string; expected: Record<string, string> }> = [
    { name: 'an empty query', search: '', expected: {} },
    { name: 'a bare cache-busting number', search: '1763752800123', expected: {} },
    { name: 'a cache-busting number beside a token', search: '1763752800123&token=a.b.c', expected: { token: 'a.b.c' } },
    { name: 'one parameter', search: 'cookie=false', expected: { cookie: 'false' } },
    { name: 'several parameters', search: 'a=1&b=2&c=3', expected: { a: '1', b: '2', c: '3' } },
    { name: 'a repeated name: the first value wins', search: 'token=first&token=second', expected: { token: 'first' } },
    { name: 'an empty value', search: 'cookie=', expected: { cookie: '' } },
    { name: 'a pair with no name', search: '=x&a=1', expected: { a: '1' } },
    { name: 'empty pairs', search: '&&a=1&', expected: { a: '1' } },
    { name: 'a value containing "="', search: 'a=b=c', expected: { a: 'b=c' } },
    { name: 'percent escapes in name and value', search: 'user%20name=al%2Fice', expected: { 'user name': 'al/ice' } },
    { name: '"+" as a space', search: 'q=a+b', expected: { q: 'a b' } },
    { name: 'an encoded "+"', search: 'q=a%2Bb', expected: { q: 'a+b' } },
    { name: 'a bad escape in a value, kept raw', search: 'bad=%E0%A4%A&ok=1', expected: { bad: '%E0%A4%A', ok: '1' } },
    { name: 'a bad escape in the first token: it still wins over a later one', search: 'token=%zz&token=good', expected: { token: '%zz' } },
    { name: 'a bad escape in a name, skipped', search: '%zz=1&ok=1', expected: { ok: '1' } },
    { name: 'a lone percent sign, kept raw', search: 'a=%&b=2', expected: { a: '%', b: '2' } },
    { name: 'names are case-sensitive', search: 'Token=a&token=b', expected: { Token: 'a', token: 'b' } },
  ];
  for (const { name, search, expected } of cases) {
    it(`parses ${name}`, () => assert.deepEqual({ ...parseQuery(search) }, expected));
  }

  it('returns a null-prototype map', () => {
    assert.equal(Object.getPrototypeOf(parseQuery('a=1')), null);
    assert.equal(Object.getPrototypeOf(parseQuery('')), null);
    assert.equal(parseQuery('a=1')['toString'], undefined);
  });

  it('keeps __proto__=x as a plain entry without polluting any prototype', () => {
    const query = parseQuery('__proto__=x&constructor=y');
    assert.equal(Object.getPrototypeOf(query), null);
    assert.equal(Object.hasOwn(query, '__proto__'), true);
    assert.equal(query['__proto__'], 'x');
    assert.equal(query['constructor'], 'y');
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
  });

  it('does not throw on any malformed query', () => {
    for (const search of ['%', '=', '%=%', 'a=%ED%A0%80', '&', '==', '%E0=1']) {
      assert.doesNotThrow(() => parseQuery(search), search);
    }
  });
});

describe('parseQuery, pairs without "="', () => {
  it('finds each pair when "=" signs sit in later pairs only', () => {
    assert.deepEqual({ ...parseQuery('a&b&c=1&d&e=2=3&=4&f') }, { c: '1', e: '2=3' });
  });

  it('parses a query of 5,000 bare words and then one pair', () => {
    assert.deepEqual({ ...parseQuery(`${'x&'.repeat(5_000)}token=last`) }, { token: 'last' });
  });
});

describe('parseQuery, hostile queries', () => {
  it('decodes escapes without decodeURIComponent, whose bad-escape exceptions made a 16 KB query cost 50 ms', () => {
    const original = globalThis.decodeURIComponent;
    globalThis.decodeURIComponent = () => {
      throw new Error('decodeURIComponent must not be used');
    };
    try {
      assert.deepEqual({ ...parseQuery('user%20name=al%2Fice+x&e=%C3%A9%F0%9F%98%80&%=1&bad=%zz&s=%ED%A0%80&o=%C0%AE') }, {
        'user name': 'al/ice x',
        e: 'é😀',
        bad: '%zz',
        s: '%ED%A0%80',
        o: '%C0%AE',
      });
    } finally {
      globalThis.decodeURIComponent = original;
    }
  });

  it('agrees with decodeURIComponent on every valid escape of a sample', () => {
    for (const text of ['%41', '%c3%a9', '%E2%82%AC%20x', 'a%2Bb', '%F0%9F%98%80', '%25', '%2525']) {
      assert.equal(parseQuery(`v=${text}`)['v'], decodeURIComponent(text), text);
    }
  });

  it(`reads at most ${MAX_QUERY_PAIRS} pairs, so a query of bad escapes costs a bounded amount`, () => {
    const many = Array.from({ length: MAX_QUERY_PAIRS }, (_, i) => `p${i}=1`).join('&');
    assert.equal(parseQuery(`${many}&token=late`)['token'], undefined);
    assert.equal(parseQuery(`token=early&${many}`)['token'], 'early');
    assert.equal(Object.keys(parseQuery('%=&'.repeat(5_000))).length, 0);
  });
});
