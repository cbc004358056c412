import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { BuiltScript } from '../../src/pages/built-scripts.js';
import { buildPage, escapeHtml, scriptJson } from '../../src/pages/shell.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

function only(pattern: RegExp, html: string): string {
  const matches = [...html.matchAll(pattern)];
  assert.equal(matches.length, 1, `expected exactly one match of ${pattern}`);
  return matches[0]?.[1] ?? '';
}

const styleOf = (html: string): string => only(/<style>([\s\S]*?)<\/style>/g, html);

describe('buildPage', () => {
  const built = (code: string): BuiltScript => ({ code, hash: `sha256-${sha256(code)}` });
  const scripts = [built('var x = 1;\n'), built('var y = 2;\n')];
  const page = buildPage({ title: 'A & <b>', body: '<h1>Hello</h1>', scripts, style: 'h1{color:red}' }, sha256);
  const html = page.body.toString('utf8');
  const csp = String(page.headers['content-security-policy']);

  it('runs its built scripts in order, allowed by the hashes computed at build time, and its one style by hash', () => {
    assert.deepEqual([...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]), ['var x = 1;\n', 'var y = 2;\n']);
    assert.ok(csp.includes(`script-src '${scripts[0]?.hash}' '${scripts[1]?.hash}';`), csp);
    assert.ok(csp.includes(`style-src 'sha256-${sha256(styleOf(html))}'`), csp);
    assert.ok(styleOf(html).endsWith('h1{color:red}'));
  });

  it('loads nothing else, cannot be framed, and posts forms only to itself', () => {
    assert.equal(
      csp,
      [
        "default-src 'none'",
        `script-src '${scripts[0]?.hash}' '${scripts[1]?.hash}'`,
        `style-src 'sha256-${sha256(styleOf(html))}'`,
        "connect-src 'self'",
        "img-src 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
    );
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['content-length'], page.body.length);
    assert.ok(Object.isFrozen(page.headers));
  });

  it('allows data: images only when the page asks for them', () => {
    const withImages = buildPage({ title: 't', body: '', allowDataImages: true }, sha256);
    assert.match(String(withImages.headers['content-security-policy']), /; img-src data:; /);
  });

  it('escapes the title; a page without scripts has none, and its CSP allows none', () => {
    assert.ok(html.includes('<title>A &amp; &lt;b&gt;</title>'));
    const plain = buildPage({ title: 't', body: '<p>x</p>' }, sha256);
    assert.doesNotMatch(plain.body.toString('utf8'), /<script/);
    assert.match(String(plain.headers['content-security-policy']), /^default-src 'none'; script-src 'none'; /);
  });

  it('puts a page\'s data in a JSON block the CSP does not name, which nothing in it can close', () => {
    const data = { hosts: ['</script><script>alert(1)</script>', '\u2028'] };
    const withData = buildPage({ title: 't', body: '', scripts, data }, sha256).body.toString('utf8');
    const block = only(/<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/g, withData);
    assert.deepEqual(JSON.parse(block), data);
    assert.equal(withData.match(/<\/script/g)?.length, 3, 'the data block and the two scripts close, nothing else');
  });

  it('makes the card wide only when asked', () => {
    assert.ok(html.includes('<main>\n<h1>Hello</h1>\n</main>'));
    const wide = buildPage({ title: 't', body: '', isWide: true }, sha256).body.toString('utf8');
    assert.ok(wide.includes('<main class="wide">'));
  });
});

describe('escapeHtml and scriptJson', () => {
  it('escapes everything that could leave text or an attribute', () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('writes JSON that cannot close a script element or end a line, and reads back the same', () => {
    const value = ['</script><script>alert(1)</script>', '\u2028\u2029&'];
    const text = scriptJson(value);
    assert.doesNotMatch(text, /[<>&\u2028\u2029]/);
    assert.deepEqual(JSON.parse(text), value);
  });
});
