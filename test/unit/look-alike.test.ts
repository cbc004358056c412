import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lookAlikeKeyOf } from '../../src/validate/look-alike.js';

describe('lookAlikeKeyOf', () => {
  const alike: ReadonlyArray<[string, string]> = [
    ['a capital letter', 'Admin'],
    ['all capitals', 'ADMIN'],
    ['a zero-width space after it', 'admin\u200b'],
    ['a soft hyphen and a combining grapheme joiner inside it', 'ad\u00admi\u034fn'],
    ['a byte order mark before it', '\ufeffadmin'],
    ['a zero-width joiner and a variation selector', 'adm\u200din\ufe0f'],
    ['fullwidth letters', 'ａｄｍｉｎ'],
    ['fullwidth capitals', 'ＡＤＭＩＮ'],
    ['mathematical bold letters', '𝐚𝐝𝐦𝐢𝐧'],
    ['circled letters', 'ⓐⓓⓜⓘⓝ'],
  ];
  for (const [what, name] of alike) {
    it(`folds ${what} to the key of "admin"`, () => assert.equal(lookAlikeKeyOf(name), 'admin'));
  }

  it('folds sharp s, capital sharp s and SS together, and final sigma with sigma', () => {
    assert.equal(lookAlikeKeyOf('straße'), lookAlikeKeyOf('STRASSE'));
    assert.equal(lookAlikeKeyOf('STRAẞE'), lookAlikeKeyOf('strasse'));
    assert.equal(lookAlikeKeyOf('ΟΔΟΣ'), lookAlikeKeyOf('οδος'));
    assert.equal(lookAlikeKeyOf('οδος'), lookAlikeKeyOf('οδοσ'));
  });

  it('folds a precomposed letter and its decomposed spelling together', () => {
    assert.equal(lookAlikeKeyOf('Jos\u00e9'), lookAlikeKeyOf('jose\u0301'));
  });

  it('keeps names apart that differ in more than case, width or invisible characters', () => {
    for (const other of ['admin1', 'admins', 'adm in', 'ad-min', 'adrnin', 'admín']) {
      assert.notEqual(lookAlikeKeyOf(other), lookAlikeKeyOf('admin'), other);
    }
  });

  it('does not fold letters of other scripts that merely look alike (Cyrillic а): not NFKC-equal', () => {
    assert.notEqual(lookAlikeKeyOf('\u0430dmin'), lookAlikeKeyOf('admin'));
  });

  it('gives a name of invisible characters only the empty key', () => {
    assert.equal(lookAlikeKeyOf('\u200b\u200c'), '');
    assert.equal(lookAlikeKeyOf('\u2060'), lookAlikeKeyOf('\u00ad'));
  });
});
