import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { buildForbiddenPage } from '../../src/routes/forbidden-page.js';

const sha256Base64 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

describe('the 403 page', () => {
  const render = buildForbiddenPage(sha256Base64, { isPasskeyOffered: true });

  it('lists each thing missing, escapes every piece of text, and keeps its length and CSP true', () => {
    const page = render({ username: '<img src=x onerror=alert(1)>&"\'', missing: { isAdministratorNeeded: true, groups: ['media', 'ops'], isSecondFactorNeeded: true }, switchAccountUrl: '/logout?rd=https%3A%2F%2Fa.example%2F"><script>' });
    const html = page.body.toString('utf8');
    assert.equal(page.headers['content-length'], page.body.length);
    assert.ok(!html.includes('<img') && !html.includes('"><script>'), html);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;&amp;&quot;&#39;/);
    assert.match(html, /<li>an administrator account<\/li>/);
    assert.match(html, /<li>membership in one of the groups <code>media<\/code>, <code>ops<\/code><\/li>/);
    assert.match(html, /<li>a sign-in with a second factor \(a code or a passkey\)<\/li>/);
    // No script at all, and the CSP allows none.
    assert.match(String(page.headers['content-security-policy']), /^default-src 'none'; script-src 'none'; /);
    assert.doesNotMatch(html, /<script/);
  });

  it('says the page is not open to the account when nothing specific is known, and has no link without a sign-out URL', () => {
    const html = render({ username: 'bob', missing: {} }).body.toString('utf8');
    assert.match(html, /This page is not open to your account/);
    assert.doesNotMatch(html, /<a /);
  });

  it('names a passkey as a second factor only where passkeys are offered', () => {
    const html = buildForbiddenPage(sha256Base64, { isPasskeyOffered: false })({ username: 'bob', missing: { isSecondFactorNeeded: true } }).body.toString('utf8');
    assert.match(html, /<li>a sign-in with a second factor \(a code from an authenticator app\)<\/li>/);
    assert.doesNotMatch(html, /passkey/);
  });
});
