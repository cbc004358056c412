// The doctor's inputs, parsed before any request: the URLs (given, or from a --paths file), the
// sign-in lines on standard input (a TOTP code on the third), and a --token-file's machine token.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appUrlOf, deepUrlOf, machineTokenOf, otherUrlOf, pathsFileText, pathsFileUrls, signInOf,
} from '../../src/cli/doctor-input.js';
import { UsageError } from '../../src/command-line/usage-error.js';

const APP = new URL('https://app.example.com/reports/2026?x=1');
const TOKEN = `gh_${'A'.repeat(20)}-_${'z'.repeat(21)}`;
const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

describe('the doctor reads the URLs it checks', () => {
  it('takes an http or https URL without credentials, dropping the fragment', () => {
    assert.equal(appUrlOf('https://app.example.com/x?y=1#top').href, 'https://app.example.com/x?y=1');
    for (const bad of ['app.example.com', '/path', 'ftp://app.example.com/', 'https://u:p@app.example.com/', '']) {
      assert.throws(() => appUrlOf(bad), UsageError, bad);
    }
  });

  it('takes further URLs as absolute http(s) URLs or as paths on the first URL\'s origin', () => {
    assert.equal(otherUrlOf('/ws', APP, 'URL 2').href, 'https://app.example.com/ws');
    assert.equal(otherUrlOf('/static/logo.png?v=2#x', APP, 'URL 2').href, 'https://app.example.com/static/logo.png?v=2');
    assert.equal(otherUrlOf('http://photos.example.com/', APP, 'URL 2').href, 'http://photos.example.com/');
    // `//host` is another site to a URL parser, `ws` a relative path: neither is what a user means.
    for (const bad of ['//evil.example/x', '/\\evil.example/x', 'ws', 'static/logo.png', 'ws://app.example.com/ws', 'https://u:p@app.example.com/', 'javascript:alert(1)']) {
      assert.throws(() => otherUrlOf(bad, APP, 'URL 2'), (error: unknown) => error instanceof UsageError && error.message.startsWith('URL 2'), bad);
    }
  });

  it('reads a --paths file: one path or URL a line, blank lines and # comments skipped, a bad line named by its number', () => {
    const urls = pathsFileUrls('# the app\'s other locations\n/ws\n\n  /static/logo.png  \r\nhttps://photos.example.com/\n', APP);
    assert.deepEqual(urls.map((url) => url.href), ['https://app.example.com/ws', 'https://app.example.com/static/logo.png', 'https://photos.example.com/']);
    assert.deepEqual(pathsFileUrls('', APP), []);
    assert.throws(() => pathsFileUrls('/ok\nnot-a-path\n', APP), (error: unknown) => error instanceof UsageError && error.message.startsWith('--paths line 2'));
    assert.throws(() => pathsFileText(Uint8Array.from([0x2f, 0xff, 0x0a]), 'paths.txt'), UsageError);
    assert.equal(pathsFileText(bytes('/ws\n'), 'paths.txt'), '/ws\n');
  });

  it('asks for a deep URL with a query, so a redirect that drops either shows', () => {
    assert.equal(deepUrlOf(new URL('https://app.example.com/')).href, 'https://app.example.com/gatehouse-doctor/deep/page?gatehouse-doctor=a%2Fb%20c&page=2');
    assert.equal(deepUrlOf(APP).href, 'https://app.example.com/reports/2026?x=1&gatehouse-doctor=a%2Fb%20c&page=2');
  });
});

describe('the doctor reads the sign-in from standard input', () => {
  it('takes a username line and a password line, CRLF or LF, the final newline optional', () => {
    assert.deepEqual(signInOf('alice\nher password\n'), { username: 'alice', password: 'her password' });
    assert.deepEqual(signInOf('alice\r\nher password'), { username: 'alice', password: 'her password' });
    assert.equal(signInOf(''), undefined);
  });

  it('takes the current TOTP code on a third line, spaces between the digits allowed', () => {
    assert.deepEqual(signInOf('alice\npw\n123456\n'), { username: 'alice', password: 'pw', code: '123456' });
    assert.deepEqual(signInOf('alice\npw\n123 456\r\n'), { username: 'alice', password: 'pw', code: '123456' });
    assert.deepEqual(signInOf('alice\npw\n\n\n'), { username: 'alice', password: 'pw' });
  });

  it('refuses a missing line, a code that is not 6 digits (a recovery code would be used up), and more lines', () => {
    for (const bad of ['alice\n', '\npw\n', 'alice\n\n123456\n', 'alice\npw\n12345\n', 'alice\npw\n1234567\n', 'alice\npw\nabcd-efgh\n', 'alice\npw\n123456\nmore\n']) {
      assert.throws(() => signInOf(bad), UsageError, JSON.stringify(bad));
    }
  });
});

describe('the doctor reads a machine token from --token-file', () => {
  it('takes one token, with surrounding whitespace and a final newline', () => {
    assert.equal(machineTokenOf(bytes(`${TOKEN}\n`), 't'), TOKEN);
    assert.equal(machineTokenOf(bytes(`  ${TOKEN}\r\n`), 't'), TOKEN);
  });

  it('refuses anything else without showing the file\'s content', () => {
    for (const bad of ['', 'gh_short', `${TOKEN}x`, `${TOKEN}\n${TOKEN}\n`, TOKEN.replace('gh_', 'gx_'), `gh_${'a'.repeat(42)}=`]) {
      assert.throws(
        () => machineTokenOf(bytes(bad), 'token.txt'),
        (error: unknown) => error instanceof UsageError && !(bad.length > 3 && error.message.includes(bad)),
        JSON.stringify(bad),
      );
    }
    assert.throws(() => machineTokenOf(Uint8Array.from([0x67, 0x68, 0x5f, 0xff]), 't'), UsageError);
  });
});
