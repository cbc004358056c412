import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeRedirectTarget } from '../../src/pages/browser/redirect-target.js';

const PAGE = 'https://auth.example/login?rd=whatever';
const ALLOWED = ['app.example', '[::1]', '10.0.0.5'];

// [rd, where the page goes]
const table: ReadonlyArray<[string | null, string]> = [
  ['/torrents', 'https://auth.example/torrents'],
  ['/a/b?c=1&d=2#e', 'https://auth.example/a/b?c=1&d=2#e'],
  ['relative/path', 'https://auth.example/relative/path'],
  ['https://auth.example/x', 'https://auth.example/x'],
  ['https://AUTH.example/x', 'https://auth.example/x'],
  ['https://app.example/x?y=1', 'https://app.example/x?y=1'],
  ['https://app.example:8443/x', 'https://app.example:8443/x'],
  ['http://app.example/', 'http://app.example/'],
  ['https://APP.EXAMPLE/', 'https://app.example/'],
  ['https://[::1]:8080/', 'https://[::1]:8080/'],
  ['http://10.0.0.5/', 'http://10.0.0.5/'],
  ['https:evil.example', 'https://auth.example/evil.example'],
  ['https://evil.example/', '/'],
  ['https://app.example.evil.example/', '/'],
  ['https://evilapp.example/', '/'],
  ['https://auth.example:444/', '/'],
  ['http://auth.example/', '/'],
  ['//evil.example', '/'],
  ['//evil.example/path', '/'],
  ['/\\evil.example', '/'],
  ['\\\\evil.example', '/'],
  ['\\/evil.example', '/'],
  ['/\t/evil.example', '/'],
  ['javascript:alert(1)', '/'],
  ['JavaScript:alert(1)', '/'],
  ['java\tscript:alert(1)', '/'],
  [' javascript:alert(1)', '/'],
  ['data:text/html,<script>alert(1)</script>', '/'],
  ['vbscript:msgbox(1)', '/'],
  ['ftp://app.example/', '/'],
  ['http://app.example@evil.example', '/'],
  ['https://user:pass@app.example/', '/'],
  ['https://app.example@auth.example/', '/'],
  ['http://[::1', '/'],
  ['https://', '/'],
  ['', '/'],
  [null, '/'],
];

describe('safeRedirectTarget (the login page embeds this very function)', () => {
  for (const [rd, expected] of table) {
    it(`sends rd=${JSON.stringify(rd)} to ${expected}`, () => {
      assert.equal(safeRedirectTarget(rd, PAGE, ALLOWED), expected);
    });
  }

  it('resolves https:host against an http page as another origin, and refuses it', () => {
    assert.equal(safeRedirectTarget('https:evil.example', 'http://auth.example/login', ALLOWED), '/');
  });

  it('allows only the page origin when no host is listed', () => {
    assert.equal(safeRedirectTarget('https://app.example/', PAGE, []), '/');
    assert.equal(safeRedirectTarget('/x', PAGE, []), 'https://auth.example/x');
  });

  it('never throws, whatever it is given', () => {
    for (const rd of ['%', '%zz', '\u0000', '\ud800', 'http://%zz/', 'http://a b/', `/${'x'.repeat(100_000)}`]) {
      assert.doesNotThrow(() => safeRedirectTarget(rd, PAGE, ALLOWED));
    }
  });
});
