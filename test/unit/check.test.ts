import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fail,
  integerIn,
  isPlainObject,
  joinPath,
  objectOf,
  oneOf,
  partialObjectOf,
  pass,
  stringOf,
  type Checked,
} from '../../src/validate/check.js';

function assertAccepted<T>(result: Checked<T>, expected: T): void {
  assert.equal(result.ok, true, result.ok ? '' : JSON.stringify(result.problems));
  if (result.ok) assert.deepEqual(result.value, expected);
}

function assertRefused(result: Checked<unknown>, paths: readonly string[]): void {
  assert.equal(result.ok, false, 'expected a refusal');
  if (!result.ok) {
    assert.deepEqual(
      result.problems.map((p) => p.path),
      paths,
    );
    for (const problem of result.problems) assert.equal(typeof problem.message, 'string');
  }
}

const EMOJI = '\u{1F600}';

describe('pass and fail', () => {
  it('wrap a value and a single problem', () => {
    assert.deepEqual(pass(3), { ok: true, value: 3 });
    const failed = fail('a.b', 'is wrong');
    assert.equal(failed.ok, false);
    if (!failed.ok) assert.deepEqual(failed.problems.map((p) => p.path), ['a.b']);
  });
});

describe('joinPath', () => {
  const cases: ReadonlyArray<[string, string, string]> = [
    ['', 'username', 'username'],
    ['client', 'port', 'client.port'],
    ['users[0]', 'level', 'users[0].level'],
  ];
  for (const [parent, key, expected] of cases) {
    it(`joins ${JSON.stringify(parent)} and ${JSON.stringify(key)} as ${JSON.stringify(expected)}`, () => {
      assert.equal(joinPath(parent, key), expected);
    });
  }
});

describe('isPlainObject', () => {
  class Thing {}
  const cases: ReadonlyArray<{ name: string; value: unknown; expected: boolean }> = [
    { name: 'an object literal', value: {}, expected: true },
    { name: 'a parsed JSON object', value: JSON.parse('{"a":1}'), expected: true },
    { name: 'a null-prototype object', value: Object.create(null), expected: true },
    { name: 'null', value: null, expected: false },
    { name: 'undefined', value: undefined, expected: false },
    { name: 'an array', value: [], expected: false },
    { name: 'a string', value: '{}', expected: false },
    { name: 'a number', value: 1, expected: false },
    { name: 'a Date', value: new Date(0), expected: false },
    { name: 'a Map', value: new Map(), expected: false },
    { name: 'a class instance', value: new Thing(), expected: false },
    { name: 'an object inheriting from an object', value: Object.create({ a: 1 }), expected: false },
    { name: 'a function', value: () => undefined, expected: false },
  ];
  for (const { name, value, expected } of cases) {
    it(`answers ${String(expected)} for ${name}`, () => {
      assert.equal(isPlainObject(value), expected);
    });
  }
});

describe('stringOf', () => {
  const check = stringOf({ minLength: 2, maxLength: 4 });
  const accepted: ReadonlyArray<[string, string]> = [
    ['two characters', 'ab'],
    ['four characters', 'abcd'],
    ['four emoji (eight UTF-16 units)', EMOJI.repeat(4)],
    ['two combining sequences counted per code point', 'e\u0301'],
  ];
  for (const [name, value] of accepted) {
    it(`accepts ${name}`, () => assertAccepted(check(value, 'field'), value));
  }

  const refused: ReadonlyArray<[string, unknown]> = [
    ['one character', 'a'],
    ['five characters', 'abcde'],
    ['five emoji', EMOJI.repeat(5)],
    ['one emoji (two UTF-16 units, one character)', EMOJI],
    ['a number', 12],
    ['null', null],
    ['undefined', undefined],
    ['an array of strings', ['ab']],
    ['a String object', new String('abc')],
    ['a control character', 'a\u0001b'],
  ];
  for (const [name, value] of refused) {
    it(`refuses ${name} with the field's path`, () => assertRefused(check(value, 'field'), ['field']));
  }

  // A lone surrogate has no UTF-8 form: hashed or compared as UTF-8 it becomes U+FFFD, so
  // "pw-\ud800" and "pw-\udfff" would be one password, and such a username one no path can name.
  it('refuses lone surrogates, high, low or in the wrong order', () => {
    const one = stringOf({ minLength: 1, maxLength: 10 });
    assertRefused(one('\ud83d', 'f'), ['f']);
    assertRefused(one('\ude00', 'f'), ['f']);
    assertRefused(one('\ude00\ud83d', 'f'), ['f']);
    assertRefused(one('ab\ud800cd', 'f'), ['f']);
  });

  it('counts a surrogate pair as one character', () => {
    const one = stringOf({ minLength: 1, maxLength: 1 });
    assertAccepted(one('\ud83d\ude00', 'f'), '\ud83d\ude00');
  });

  describe('control characters', () => {
    const strict = stringOf({ minLength: 1, maxLength: 100 });
    const lenient = stringOf({ minLength: 1, maxLength: 100, allowControlCharacters: true });
    for (const [name, c] of [
      ['U+0000', '\u0000'],
      ['U+0009 (tab)', '\t'],
      ['U+000A (line feed)', '\n'],
      ['U+001F', '\u001f'],
      ['U+007F', '\u007f'],
    ] as const) {
      it(`refuses ${name} by default and accepts it when allowed`, () => {
        assertRefused(strict(`a${c}b`, 'f'), ['f']);
        assertAccepted(lenient(`a${c}b`, 'f'), `a${c}b`);
      });
    }
    for (const [name, c] of [
      ['U+0020 (space)', ' '],
      ['U+0080', '\u0080'],
      ['U+00A0', '\u00a0'],
      ['U+2028', '\u2028'],
    ] as const) {
      it(`accepts ${name}, which is outside U+0000-U+001F and U+007F`, () => {
        assertAccepted(strict(`a${c}b`, 'f'), `a${c}b`);
      });
    }
  });
});

describe('integerIn', () => {
  const check = integerIn(1, 65535);
  for (const value of [1, 80, 65535]) {
    it(`accepts ${value}`, () => assertAccepted(check(value, 'port'), value));
  }
  const refused: ReadonlyArray<[string, unknown]> = [
    ['0', 0],
    ['65536', 65536],
    ['-1', -1],
    ['1.5', 1.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a numeric string', '80'],
    ['null', null],
    ['a boolean', true],
  ];
  for (const [name, value] of refused) {
    it(`refuses ${name}`, () => assertRefused(check(value, 'port'), ['port']));
  }
});

describe('oneOf', () => {
  const check = oneOf([10, 5, 'ADMINISTRATOR', 'USER'] as const);
  for (const value of [10, 5, 'ADMINISTRATOR', 'USER'] as const) {
    it(`accepts ${JSON.stringify(value)}`, () => assertAccepted(check(value, 'level'), value));
  }
  for (const value of ['10', '5', 'administrator', 'User', 1, 0, null, undefined, {}, [10]]) {
    it(`refuses ${JSON.stringify(value) ?? 'undefined'}`, () => assertRefused(check(value, 'level'), ['level']));
  }
});

describe('objectOf', () => {
  const shape = objectOf({ name: stringOf({ minLength: 1, maxLength: 10 }), port: integerIn(1, 10) });

  it('returns the known fields', () => {
    assertAccepted(shape({ name: 'a', port: 3 }, ''), { name: 'a', port: 3 });
  });

  it('strips unknown keys from the output', () => {
    const result = shape({ name: 'a', port: 3, extra: true, admin: 1 }, '');
    assertAccepted(result, { name: 'a', port: 3 });
  });

  it('builds an output free of __proto__ even when the input has an own __proto__ key', () => {
    const input: unknown = JSON.parse('{"name":"a","port":3,"__proto__":{"isAdmin":true}}');
    const result = shape(input, '');
    assert.ok(result.ok);
    if (result.ok) {
      assert.equal(Object.hasOwn(result.value, '__proto__'), false);
      assert.equal(Object.getPrototypeOf(result.value), Object.prototype);
      assert.equal((result.value as Record<string, unknown>)['isAdmin'], undefined);
      assert.deepEqual(Object.keys(result.value), ['name', 'port']);
    }
  });

  it('reports every missing and every invalid field with its path', () => {
    assertRefused(shape({}, ''), ['name', 'port']);
    assertRefused(shape({ name: '', port: 0 }, 'body'), ['body.name', 'body.port']);
  });

  it('treats an explicit undefined as present, and refuses it', () => {
    assertRefused(shape({ name: undefined, port: 3 }, ''), ['name']);
  });

  it('does not take a field from the prototype chain', () => {
    const inherited = Object.create({ name: 'a', port: 3 }) as object;
    assertRefused(shape(inherited, ''), ['']);
    const nullProto = Object.assign(Object.create(null) as object, { port: 3 });
    assertRefused(shape(nullProto, ''), ['name']);
  });

  const notObjects: ReadonlyArray<[string, unknown]> = [
    ['null', null],
    ['an array', [{ name: 'a', port: 3 }]],
    ['a string', '{"name":"a","port":3}'],
    ['a number', 3],
    ['undefined', undefined],
  ];
  for (const [name, value] of notObjects) {
    it(`refuses ${name} at the object's own path`, () => assertRefused(shape(value, 'client'), ['client']));
  }

  it('refuses unknown keys, each with its path, when asked to', () => {
    const closed = objectOf({ name: stringOf({ minLength: 1, maxLength: 10 }) }, { rejectUnknownKeys: true });
    assertAccepted(closed({ name: 'a' }, ''), { name: 'a' });
    assertRefused(closed({ name: 'a', extra: 1, other: 2 }, 'user'), ['user.extra', 'user.other']);
    assertRefused(closed(JSON.parse('{"name":"a","__proto__":{}}'), ''), ['__proto__']);
  });
});

describe('partialObjectOf', () => {
  const shape = partialObjectOf({ name: stringOf({ minLength: 1, maxLength: 10 }), port: integerIn(1, 10) });

  it('accepts an empty object', () => assertAccepted(shape({}, ''), {}));

  it('returns only the fields that were sent', () => {
    assertAccepted(shape({ port: 2 }, ''), { port: 2 });
    assert.deepEqual(Object.keys((shape({ port: 2 }, '') as { value: object }).value), ['port']);
  });

  it('still checks the fields that were sent', () => {
    assertRefused(shape({ name: '' }, ''), ['name']);
    assertRefused(shape({ name: 'ok', port: 11 }, ''), ['port']);
  });

  it('strips unknown keys', () => assertAccepted(shape({ name: 'a', admin: true }, ''), { name: 'a' }));

  it('refuses a value that is not an object', () => assertRefused(shape([], ''), ['']));
});
