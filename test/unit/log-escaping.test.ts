import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, type LogFormat } from '../../src/log/logger.js';
import { escapeUnsafeCharacters } from '../../src/log/terminal-safe.js';

// Characters a terminal acts on but JSON.stringify leaves raw are written as
// \uXXXX in every log line and field, in both formats, so a username cannot disguise itself
// (or a path carry an escape sequence) on an operator's screen. The review after it: invisible
// format characters (Unicode category Cf: zero-width space and joiners, BOM, soft hyphen, word
// joiner, tags, ...) and the Hangul fillers let two names that look the same differ, so they are
// written as \uXXXX too (an astral one as its two UTF-16 halves, still JSON for the same string).

const RANGES: ReadonlyArray<[string, readonly number[]]> = [
  ['DEL', [0x7f]],
  ['C1 controls', [0x80, 0x85, 0x9b, 0x9f]],
  ['the Arabic letter mark', [0x61c]],
  ['LRM and RLM', [0x200e, 0x200f]],
  ['embeddings and overrides', [0x202a, 0x202b, 0x202c, 0x202d, 0x202e]],
  ['isolates', [0x2066, 0x2067, 0x2068, 0x2069]],
  ['line and paragraph separators', [0x2028, 0x2029]],
  ['zero-width characters, joiners and the word joiner', [0x200b, 0x200c, 0x200d, 0x2060, 0x2064]],
  ['the byte-order mark and the soft hyphen', [0xfeff, 0xad]],
  ['other format characters', [0x600, 0x6dd, 0x180e, 0x206a, 0x206f, 0xfff9, 0xfffb]],
  ['astral format characters (tags, musical formatting)', [0xe0001, 0xe0041, 0xe007f, 0x1d173, 0x110bd]],
  ['Hangul fillers', [0x115f, 0x1160, 0x3164, 0xffa0]],
];
/** Each UTF-16 unit of the character as \uXXXX. */
const escaped = (code: number): string =>
  String.fromCodePoint(code)
    .split('')
    .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');
/** True when `text` holds none of the characters above raw. */
const isClean = (text: string): boolean => !/[\u007f-\u009f\u2028\u2029\p{Cf}\u115f\u1160\u3164\uffa0]/u.test(text);

function logWith(format: LogFormat, write: (logger: ReturnType<typeof createLogger>) => void): string {
  let text = '';
  const sink = { write: (chunk: string) => void (text += chunk) };
  const logger = createLogger({ level: 'debug', format, stdout: sink, stderr: sink, now: () => 0 });
  write(logger);
  logger.flush();
  return text;
}

describe('escapeUnsafeCharacters', () => {
  for (const [name, codes] of RANGES) {
    it(`escapes ${name}`, () => {
      for (const code of codes) assert.equal(escapeUnsafeCharacters(`a${String.fromCodePoint(code)}b`), `a${escaped(code)}b`);
    });
  }

  it('leaves other text, including neighbours of the ranges, as it is (the same string)', () => {
    const text = 'alice \u007e\u00a0\u00ac\u00ae\u00e9\u061b\u061d\u115e\u1161\u200a\u2010\u2027\u202f\u2065\u3163\u3165\ufe0f\ufefe\uffa1 🙂 Ωmega 名前';
    assert.equal(escapeUnsafeCharacters(text), text);
  });

  it('tells apart names that look the same', () => {
    const names = ['admin', 'ad\u200bmin', 'admin\ufeff', 'ad\u00admin', '\u3164admin', 'admin\u{e0020}'];
    assert.equal(new Set(names.map(escapeUnsafeCharacters)).size, names.length);
    for (const name of names.slice(1)) assert.notEqual(escapeUnsafeCharacters(name), name);
  });

  it('escapes an astral format character whole, and a lone surrogate not at all (JSON.stringify escapes those)', () => {
    assert.equal(escapeUnsafeCharacters('x\u{e0001}y'), 'x\\udb40\\udc01y');
    assert.equal(escapeUnsafeCharacters('x\udb40y'), 'x\udb40y');
  });
});

for (const format of ['json', 'pretty'] as const) {
  describe(`log lines in the ${format} format`, () => {
    for (const [name, codes] of RANGES) {
      const sample = `user${codes.map((code) => String.fromCodePoint(code)).join('')}name`;

      it(`escape ${name} in a field value`, () => {
        const text = logWith(format, (logger) => logger.warn('login failed', { event: 'login_failed', address: '192.0.2.1', username: sample }));
        assert.ok(isClean(text), JSON.stringify(text));
        for (const code of codes) assert.ok(text.includes(escaped(code)), `${escaped(code)} missing from ${text}`);
        if (format === 'json') assert.equal(JSON.parse(text)['username'], sample, 'the JSON still reads back as the same string');
      });

      it(`escape ${name} in the request line's path, method and address`, () => {
        const text = logWith(format, (logger) => logger.request(`GET${sample}`, `/api/auth/users/${sample}`, 404, 0.1, sample));
        assert.ok(isClean(text), JSON.stringify(text));
        if (format === 'json') {
          const line = JSON.parse(text) as Record<string, unknown>;
          assert.equal(line['path'], `/api/auth/users/${sample}`);
          assert.equal(line['address'], sample);
        }
      });

      it(`escape ${name} in the message and in an error's cause`, () => {
        const text = logWith(format, (logger) => {
          logger.info(`message ${sample}`);
          logger.error('request failed', new Error(`cause ${sample}`), { path: sample });
        });
        assert.ok(isClean(text), JSON.stringify(text));
      });
    }
  });
}
