// The doctor's report: outcomes counted apart (a skipped check is not a failed one), and fixes in the
// terms of the proxy whose answers name it, every proxy's only when none does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixFor, proxyKindOf } from '../../src/cli/doctor-proxy.js';
import { createReport, fail, ok, skip, warn } from '../../src/cli/doctor-report.js';

describe('the doctor report', () => {
  it('writes one line per check and counts passed, failed, warned and skipped apart', () => {
    const lines: string[] = [];
    const { report, summary, isClean } = createReport((text) => lines.push(text));
    report('gate', ok('answered 401'));
    assert.equal(summary(), 'Every check passed.');
    assert.equal(isClean(), true);
    report('cookie', warn('not Secure. Fix: --secure-cookie'));
    report('signed in', skip('not checked: no credentials'));
    report('probe', skip('not checked: no credentials'));
    report('api', fail('reached the app. Fix: gate it'));
    assert.deepEqual(lines, [
      'ok    gate: answered 401\n',
      'WARN  cookie: not Secure. Fix: --secure-cookie\n',
      'skip  signed in: not checked: no credentials\n',
      'skip  probe: not checked: no credentials\n',
      'FAIL  api: reached the app. Fix: gate it\n',
    ]);
    assert.equal(summary(), '1 of 5 checks passed; 1 failed, 1 passed with a warning, 2 skipped (not made: each line says why).');
    assert.equal(isClean(), false);
  });

  it('writes only printable text, even from a check that put a server\'s bytes in its line as they came', () => {
    const lines: string[] = [];
    const { report } = createReport((text) => lines.push(text));
    report('cookie', fail('the session cookie says Domain=\x9b2J\x1b]0;pwned\x07.example, which does not cover app.example'));
    assert.deepEqual(lines, ['FAIL  cookie: the session cookie says Domain=?2J?]0;pwned?.example, which does not cover app.example\n']);
  });

  it('is not clean with only skipped checks, and says so without calling them failed', () => {
    const { report, summary, isClean } = createReport(() => undefined);
    report('gate', ok('answered 401'));
    report('cookie', skip('not checked'));
    assert.equal(isClean(), false);
    assert.equal(summary(), '1 of 2 checks passed; 1 skipped (not made: each line says why).');
  });
});

describe('the proxy in front, and its fixes', () => {
  it('knows nginx and Caddy by their Server header, and nothing else', () => {
    assert.equal(proxyKindOf({ server: 'nginx/1.22.1' }), 'nginx');
    assert.equal(proxyKindOf({ server: 'nginx' }), 'nginx');
    assert.equal(proxyKindOf({ server: 'Caddy' }), 'Caddy');
    for (const server of [undefined, '', 'cloudflare', 'Apache', 'not nginx', 'nginxish']) {
      assert.equal(proxyKindOf(server === undefined ? {} : { server }), undefined, String(server));
    }
  });

  it('gives only the named proxy\'s fix, else each one that applies', () => {
    const fixes = { nginx: 'large_client_header_buffers 4 16k', Caddy: 'max_header_size', Traefik: 'transport limits' };
    assert.equal(fixFor('nginx', fixes), 'nginx: large_client_header_buffers 4 16k');
    assert.equal(fixFor('Caddy', fixes), 'Caddy: max_header_size');
    assert.equal(fixFor(undefined, fixes), 'nginx: large_client_header_buffers 4 16k; Caddy: max_header_size; Traefik: transport limits');
    assert.equal(fixFor(undefined, { nginx: 'a', Caddy: 'b' }), 'nginx: a; Caddy: b');
  });
});
