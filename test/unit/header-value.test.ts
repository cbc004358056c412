import assert from 'node:assert/strict';
import { validateHeaderValue } from 'node:http';
import { describe, it } from 'node:test';
import { percentEncodeHeaderValue } from '../../src/http/header-value.js';

describe('percentEncodeHeaderValue', () => {
  const cases: ReadonlyArray<[string, string, string]> = [
    ['a plain ASCII name', 'alice', 'alice'],
    ['the characters kept as they are', 'AZaz09-._~@', 'AZaz09-._~@'],
    ['every other visible ASCII character', "!$&'()*+=:/?#[]{}\\^`|", '%21%24%26%27%28%29%2A%2B%3D%3A%2F%3F%23%5B%5D%7B%7D%5C%5E%60%7C'],
    ['an apostrophe and an ampersand, which an app may echo into HTML or a query', "o'brien&co", 'o%27brien%26co'],
    ['a comma, a semicolon, a double quote and angle brackets', 'a,b;c"d<e>f', 'a%2Cb%3Bc%22d%3Ce%3Ef'],
    ['a name that reads as two users to an app splitting on commas', 'mallory, admin', 'mallory%2C%20admin'],
    ['an e-mail address', 'ada@example.org', 'ada@example.org'],
    ['a space', 'Ada Lovelace', 'Ada%20Lovelace'],
    ['a percent sign', '100%', '100%25'],
    ['a name that is exactly %41', '%41', '%2541'],
    ['CR and LF', 'evil\r\nSet-Cookie: x=1', 'evil%0D%0ASet-Cookie%3A%20x%3D1'],
    ['NUL, tab, DEL', 'a\u0000b\tc\u007f', 'a%00b%09c%7F'],
    ['Latin-1 letters', 'José', 'Jos%C3%A9'],
    ['fullwidth letters and a zero-width space, which look like another name', 'ａｄｍｉｎ\u200b', '%EF%BD%81%EF%BD%84%EF%BD%8D%EF%BD%89%EF%BD%8E%E2%80%8B'],
    ['an emoji outside the BMP', 'cat 🐈', 'cat%20%F0%9F%90%88'],
    ['right-to-left text', 'שלום', '%D7%A9%D7%9C%D7%95%D7%9D'],
    ['a lone surrogate (as U+FFFD)', 'a\ud800', 'a%EF%BF%BD'],
    ['the empty string', '', ''],
  ];
  for (const [what, name, encoded] of cases) {
    it(`encodes ${what}`, () => {
      assert.equal(percentEncodeHeaderValue(name), encoded);
    });
  }

  for (const [what, name] of cases) {
    it(`gives a value node:http accepts and decodeURIComponent reverses, for ${what}`, () => {
      const encoded = percentEncodeHeaderValue(name);
      assert.doesNotThrow(() => validateHeaderValue('remote-user', encoded));
      assert.match(encoded, /^(?:[A-Za-z0-9\-._~@]|%[0-9A-F]{2})*$/);
      assert.equal(decodeURIComponent(encoded), name.includes('\ud800') ? name.replace('\ud800', '\ufffd') : name);
    });
  }

  it('round-trips every single code point up to U+FFFF except surrogates, and some beyond', () => {
    for (let code = 0; code <= 0x10ffff; code += code < 0x10000 ? 1 : 0x1001) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const name = `x${String.fromCodePoint(code)}y`;
      const encoded = percentEncodeHeaderValue(name);
      assert.match(encoded, /^(?:[A-Za-z0-9\-._~@]|%[0-9A-F]{2})*$/);
      assert.equal(decodeURIComponent(encoded), name);
    }
  });
});
