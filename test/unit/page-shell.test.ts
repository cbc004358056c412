import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { Script } from 'node:vm';
import { buildPage, escapeHtml, PAGE_HELPERS, scriptJson } from '../../src/pages/shell.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

function only(pattern: RegExp, html: string): string {
  const matches = [...html.matchAll(pattern)];
  assert.equal(matches.length, 1, `expected exactly one match of ${pattern}`);
  return matches[0]?.[1] ?? '';
}

const scriptOf = (html: string): string => only(/<script>([\s\S]*?)<\/script>/g, html);
const styleOf = (html: string): string => only(/<style>([\s\S]*?)<\/style>/g, html);

describe('buildPage', () => {
  const page = buildPage({ title: 'A & <b>', body: '<h1>Hello</h1>', script: 'var x = 1;\n', style: 'h1{color:red}' }, sha256);
  const html = page.body.toString('utf8');
  const csp = String(page.headers['content-security-policy']);

  it('allows by hash exactly its one script and its one style (shared CSS plus the page\'s own)', () => {
    assert.ok(csp.includes(`script-src 'sha256-${sha256(scriptOf(html))}'`), csp);
    assert.ok(csp.includes(`style-src 'sha256-${sha256(styleOf(html))}'`), csp);
    assert.ok(styleOf(html).endsWith('h1{color:red}'));
    assert.ok(scriptOf(html).includes('var x = 1;'));
  });

  it('loads nothing else, cannot be framed, and posts forms only to itself', () => {
    assert.equal(
      csp,
      [
        "default-src 'none'",
        `script-src 'sha256-${sha256(scriptOf(html))}'`,
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
    const withImages = buildPage({ title: 't', body: '', script: '', allowDataImages: true }, sha256);
    assert.match(String(withImages.headers['content-security-policy']), /; img-src data:; /);
  });

  it('escapes the title and runs the script in strict mode inside a function of its own', () => {
    assert.ok(html.includes('<title>A &amp; &lt;b&gt;</title>'));
    const script = scriptOf(html);
    assert.match(script, /^\n'use strict';\n\(function \(\) \{\n/);
    assert.doesNotThrow(() => new Script(script));
  });

  it('makes the card wide only when asked', () => {
    assert.ok(html.includes('<main>\n<h1>Hello</h1>\n</main>'));
    const wide = buildPage({ title: 't', body: '', script: '', isWide: true }, sha256).body.toString('utf8');
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

describe('PAGE_HELPERS in a sandbox', () => {
  const run = (extra: Record<string, unknown> = {}): Record<string, (...args: unknown[]) => unknown> => {
    const context: Record<string, unknown> = { btoa, atob, Uint8Array, ...extra };
    new Script(`${PAGE_HELPERS}\nthis.helpers = { toBase64url, fromBase64url, problemOf, codeOf, callApi, say };`).runInNewContext(context);
    return context['helpers'] as Record<string, (...args: unknown[]) => unknown>;
  };

  it('converts base64url both ways for every length, with no padding and no + or /', () => {
    const { toBase64url, fromBase64url } = run();
    for (let length = 0; length < 70; length += 1) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 67 + length * 13 + 251) & 0xff);
      const text = toBase64url!(bytes.buffer) as string;
      assert.equal(text, Buffer.from(bytes).toString('base64url'));
      assert.deepEqual(new Uint8Array(fromBase64url!(text) as ArrayBuffer), bytes);
    }
  });

  it('takes a problem\'s message from the answer, else a generic sentence', () => {
    const { problemOf, codeOf } = run();
    assert.equal(problemOf!({ status: 403, ok: false, body: { code: 'WRONG_PASSWORD', message: 'The password is wrong.' } }), 'The password is wrong.');
    assert.equal(problemOf!({ status: 502, ok: false, body: null }), 'The request failed (502).');
    assert.equal(problemOf!({ status: 0, ok: false, body: null }), 'The server could not be reached.');
    assert.equal(codeOf!({ status: 401, ok: false, body: { code: 'SECOND_FACTOR_REQUIRED' } }), 'SECOND_FACTOR_REQUIRED');
    assert.equal(codeOf!({ status: 401, ok: false, body: ['x'] }), '');
  });

  it('calls the API with JSON on the path given, same-origin, never cached, and survives a body that is not JSON', async () => {
    const calls: Array<{ path: string; init: Record<string, unknown> }> = [];
    const fetch = (path: string, init: Record<string, unknown>) => {
      calls.push({ path, init });
      return Promise.resolve({ status: 502, ok: false, json: () => Promise.reject(new SyntaxError('not json')) });
    };
    const { callApi } = run({ fetch });
    const answer = await (callApi!('POST', '../api/auth/account/password', { password: 'a', newPassword: 'b' }) as Promise<unknown>);
    assert.deepEqual(JSON.parse(JSON.stringify(answer)), { status: 502, ok: false, body: null });
    assert.equal(calls[0]?.path, '../api/auth/account/password');
    assert.equal(calls[0]?.init['method'], 'POST');
    assert.equal(calls[0]?.init['credentials'], 'same-origin');
    assert.equal(calls[0]?.init['cache'], 'no-store');
    assert.deepEqual(JSON.parse(JSON.stringify(calls[0]?.init['headers'])), { accept: 'application/json', 'content-type': 'application/json' });
    assert.deepEqual(JSON.parse(String(calls[0]?.init['body'])), { password: 'a', newPassword: 'b' });

    const unreachable = run({ fetch: () => Promise.reject(new TypeError('network')) });
    assert.deepEqual(JSON.parse(JSON.stringify(await (unreachable['callApi']!('GET', 'x') as Promise<unknown>))), { status: 0, ok: false, body: null });
  });

  it('writes a message as text and hides it when empty', () => {
    const { say } = run();
    const element = { textContent: '', className: '', hidden: true };
    say!(element, '<b>x</b>', 'done');
    assert.deepEqual(element, { textContent: '<b>x</b>', className: 'message done', hidden: false });
    say!(element, '');
    assert.equal(element.hidden, true);
  });
});
