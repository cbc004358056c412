import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { browserNameOf, MAX_BROWSER_NAME_LENGTH } from '../../src/routes/browser-name.js';

const AGENTS: ReadonlyArray<[string, string]> = [
  ['Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0', 'Firefox on Linux'],
  ['Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0', 'Firefox on Linux'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome on Windows'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 'Edge on Windows'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15', 'Safari on macOS'],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1', 'Safari on iOS'],
  ['Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0 Mobile/15E148 Safari/604.1', 'Chrome on iOS'],
  ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome on Android'],
  ['Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0', 'Firefox on Android'],
  ['Mozilla/5.0 (Linux; Android 13; SM-S901B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36', 'Samsung Internet on Android'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/106.0.0.0', 'Opera on Linux'],
  ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36', 'Chrome on ChromeOS'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Chrome on Linux'],
  ['Mozilla/5.0 (X11; FreeBSD amd64; rv:120.0) Gecko/20100101 Firefox/120.0', 'Firefox on FreeBSD'],
  ['curl/8.5.0', 'curl'],
  ['Wget/1.21.4', 'Wget'],
  ['python-requests/2.31.0', 'python-requests'],
  ['node', 'node'],
  ['Go-http-client/1.1', 'Go-http-client'],
];

describe('browserNameOf', () => {
  for (const [agent, name] of AGENTS) {
    it(`names ${JSON.stringify(agent.slice(0, 60))} "${name}"`, () => {
      assert.equal(browserNameOf(agent), name);
    });
  }

  it('says "Unknown" for a missing or empty User-Agent', () => {
    assert.equal(browserNameOf(undefined), 'Unknown');
    assert.equal(browserNameOf(''), 'Unknown');
    assert.equal(browserNameOf('   '), 'Unknown');
  });

  it(`keeps a name made of the first product at most ${MAX_BROWSER_NAME_LENGTH} characters, with no control characters`, () => {
    assert.equal(browserNameOf(`${'a'.repeat(500)}/1.0`), 'a'.repeat(MAX_BROWSER_NAME_LENGTH));
    assert.equal(browserNameOf('evil\u0000\u001b[31mbot/1.0'), 'evil31mbot');
    assert.equal(browserNameOf('\u0007\u007f'), 'Unknown');
  });

  it('never lets anything but the printable ASCII of a product token through', () => {
    const hostile = ['<script>/1', 'név/1', '"quoted"/1', 'a\u2028b/1', '\ud800/1', 'x'.repeat(100_000)];
    for (const agent of hostile) {
      const name = browserNameOf(agent);
      assert.ok(name.length >= 1 && name.length <= MAX_BROWSER_NAME_LENGTH, name);
      assert.match(name, /^[!#-'*+.0-9A-Z^-z|~ -]+$/, JSON.stringify(agent));
    }
  });
});
