// The strict application/x-www-form-urlencoded parser of the OpenID Connect endpoints: a table of
// what it accepts and refuses, then a fuzz run (seeded, so a failure repeats) that it never throws,
// reads back whatever a real encoder writes, and refuses every repeated parameter.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isFormContentType, MAX_FORM_PAIRS, parseForm } from '../../src/oidc/form.js';

const parsed = (text: string): Record<string, string> => {
  const result = parseForm(text);
  assert.ok(result.ok, `${text}: ${result.ok ? '' : result.problem}`);
  return Object.fromEntries(result.parameters);
};
const refused = (text: string): void => assert.equal(parseForm(text).ok, false, text);

describe('parseForm', () => {
  it('reads names and values, + as a space, escapes as UTF-8', () => {
    assert.deepEqual(parsed('grant_type=authorization_code&code=abc'), { grant_type: 'authorization_code', code: 'abc' });
    assert.deepEqual(parsed('scope=openid+profile%20email'), { scope: 'openid profile email' });
    assert.deepEqual(parsed('state=%C3%A9t%C3%A9%F0%9F%98%80'), { state: 'été😀' });
    assert.deepEqual(parsed('redirect_uri=https%3A%2F%2Fa.example%2Fcb%3Fx%3D1%26y%3D2'), { redirect_uri: 'https://a.example/cb?x=1&y=2' });
    assert.deepEqual(parsed('a%2Bb=c%2Bd'), { 'a+b': 'c+d' });
    assert.deepEqual(parsed(''), {});
  });

  it('treats a parameter without a value as omitted (RFC 6749 section 3.1), and skips empty pairs', () => {
    assert.deepEqual(parsed('a=&b=1'), { b: '1' });
    assert.deepEqual(parsed('a&b=1'), { b: '1' });
    assert.deepEqual(parsed('b=1&&&c=2&'), { b: '1', c: '2' });
    assert.deepEqual(parsed('a=&a=1'), { a: '1' });
  });

  it('keeps an = inside a value', () => {
    assert.deepEqual(parsed('x=a=b'), { x: 'a=b' });
  });

  const refusals: ReadonlyArray<readonly [string, string]> = [
    ['a repeated parameter', 'code=a&code=b'],
    ['a repeated parameter with the same value', 'code=a&code=a'],
    ['a repeated parameter spelled with an escape', 'code=a&c%6Fde=b'],
    ['a bad escape', 'a=%zz'],
    ['a short escape', 'a=%4'],
    ['a lone %', 'a=50%'],
    ['a bad escape in a valueless name', '%zz&a=1'],
    ['escapes that are not UTF-8', 'a=%C3'],
    ['an overlong UTF-8 form', 'a=%C0%AF'],
    ['a UTF-16 surrogate as UTF-8', 'a=%ED%A0%80'],
    ['a raw space', 'a=b c'],
    ['a raw non-ASCII character', 'a=é'],
    ['a raw control character', 'a=b\nc'],
    ['an empty name', '=value'],
    ['a name longer than 64 characters', `${'n'.repeat(65)}=1`],
    [`more than ${MAX_FORM_PAIRS} pairs`, Array.from({ length: MAX_FORM_PAIRS + 1 }, (_, i) => `p${i}=1`).join('&')],
  ];
  for (const [name, text] of refusals) it(`refuses ${name}`, () => refused(text));

  it('returns a map, so a __proto__ or constructor parameter is only a name', () => {
    const result = parseForm('__proto__=x&constructor=y');
    assert.ok(result.ok);
    assert.equal(result.parameters.get('__proto__'), 'x');
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
  });
});

describe('parseForm under fuzzing', () => {
  // A small seeded generator (mulberry32): the same inputs on every run.
  let seed = 0x9e3779b9;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const PIECES = ['a', 'Z', '0', '=', '&', '+', '%', '%2', '%41', '%C3%A9', '%E2%82', '%FF', '%00', '~', '.', ' ', '\u00e9', '\ud83d\ude00', '\ud800', '\n', 'code', 'state', '__proto__'];
  const LONE_SURROGATE = /[\ud800-\udfff]/u;
  const CHARS = 'abcXYZ019 -._~!*\'()/?:@=&+%#\u00e9\u4e2d\ud83d\ude00\u0000\u007f';

  it('never throws, whatever the text', () => {
    for (let round = 0; round < 20_000; round++) {
      const text = Array.from({ length: Math.floor(random() * 12) }, () => pick(PIECES)).join('');
      const result = parseForm(text);
      if (result.ok) for (const [name, value] of result.parameters) assert.ok(name !== '' && value !== '', text);
    }
  });

  it('reads back exactly what URLSearchParams writes (distinct names, non-empty values)', () => {
    for (let round = 0; round < 5_000; round++) {
      const expected = new Map<string, string>();
      const count = 1 + Math.floor(random() * 8);
      for (let i = 0; i < count; i++) {
        const name = `${Array.from({ length: 1 + Math.floor(random() * 5) }, () => pick([...CHARS])).join('')}`;
        const value = Array.from({ length: 1 + Math.floor(random() * 20) }, () => pick([...CHARS])).join('');
        // Lone surrogates have no UTF-8 form; the encoder writes U+FFFD for them.
        if (LONE_SURROGATE.test(name) || LONE_SURROGATE.test(value) || name.length > 64) continue;
        expected.set(name, value);
      }
      const text = new URLSearchParams([...expected]).toString();
      const result = parseForm(text);
      assert.ok(result.ok, `${text}: ${result.ok ? '' : result.problem}`);
      assert.deepEqual(new Map(result.parameters), expected, text);
    }
  });

  it('refuses every text that repeats a name, however it is escaped', () => {
    for (let round = 0; round < 2_000; round++) {
      const name = pick(['code', 'client_id', 'redirect_uri', 'state']);
      const escaped = [...name].map((character) => (random() < 0.5 ? character : `%${character.charCodeAt(0).toString(16)}`)).join('');
      const text = `${name}=${Math.floor(random() * 100)}&x=1&${escaped}=${Math.floor(random() * 100)}`;
      refused(text);
    }
  });
});

describe('isFormContentType', () => {
  it('accepts the form media type, with a UTF-8 charset at most', () => {
    for (const header of ['application/x-www-form-urlencoded', 'Application/X-WWW-Form-URLEncoded', 'application/x-www-form-urlencoded; charset=UTF-8', 'application/x-www-form-urlencoded;charset="utf-8"']) {
      assert.ok(isFormContentType(header), header);
    }
    for (const header of [undefined, '', 'application/json', 'multipart/form-data', 'text/plain', 'application/x-www-form-urlencoded; charset=latin1', 'application/x-www-form-urlencoded; boundary=x']) {
      assert.equal(isFormContentType(header), false, String(header));
    }
  });
});
