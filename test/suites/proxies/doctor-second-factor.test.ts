// Accounts with a second factor, through real nginx and Caddy sites whose app asks for two factors
// (mfa=1): the doctor signs in with the current TOTP code from a third line of standard input, or
// works with a machine token from --token-file; without either, what needs an account is reported
// skipped (with the reason), never as failed.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../../src/totp/base32.js';
import { totpCode } from '../../../src/totp/codes.js';
import { assertBuilt, killAllChildren, removeTempDirs, tempDir } from '../../helpers/process.js';
import { stopAllProxies } from '../../helpers/proxies.js';
import { viaHome } from './through-proxy.js';
import { assertOnlyFailed, lineOf, runDoctor, startSite, type Site } from './doctor-sites.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** Turns on TOTP for the site's user (straight at Gatehouse); its seed, and a session with both factors. */
async function enrolTotp(site: Site): Promise<{ seed: Buffer; twoFactorCookie: string }> {
  const signedIn = await viaHome(site.home, { method: 'POST', path: '/api/auth/authenticate', body: { username: site.username, password: site.password } });
  assert.equal(signedIn.status, 200, signedIn.text);
  const begun = await viaHome(site.home, { method: 'POST', path: '/api/auth/account/totp', token: signedIn.cookieToken ?? '', body: { password: site.password } });
  assert.equal(begun.status, 200, begun.text);
  const seed = decodeBase32((begun.json as { secret: string }).secret);
  assert.ok(seed !== undefined);
  const confirmed = await viaHome(site.home, { method: 'POST', path: '/api/auth/account/totp/confirm', token: signedIn.cookieToken ?? '', body: { code: totpCode(seed, Date.now()) } });
  assert.equal(confirmed.status, 200, confirmed.text);
  return { seed, twoFactorCookie: confirmed.cookieToken ?? '' };
}

/** A machine token of the site's user, in a file of its own. */
async function tokenFile(site: Site, twoFactorCookie: string): Promise<string> {
  const made = await viaHome(site.home, { method: 'POST', path: '/api/auth/account/tokens', token: twoFactorCookie, body: { name: 'doctor', password: site.password } });
  assert.equal(made.status, 200, made.text);
  const file = join(await tempDir('gatehouse-doctor-token-'), 'token');
  await writeFile(file, `${(made.json as { token: string }).token}\n`, { mode: 0o600 });
  return file;
}

const NEEDS_ACCOUNT = ['cookie', 'signed in', 'probe', 'forged headers', 'jwt cookie', 'forged URI'] as const;

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor with an account that has TOTP, through ${kind}`, () => {
    before(() => assertBuilt());

    it('skips what needs the account without a code, saying how to give one; with the current code on the third line every check passes on an mfa=1 app', async () => {
      const site = await startSite(kind, { require: 'mfa=1' });
      try {
        const { seed } = await enrolTotp(site);
        const withoutCode = await runDoctor(site, [`${site.origin}/reports/2026?x=1`]);
        assertOnlyFailed(withoutCode, [...NEEDS_ACCOUNT], site);
        assert.match(lineOf(withoutCode, 'cookie'), /^skip +cookie: not checked: the account has a second factor; give the account's current TOTP code as a third line of standard input \(printf '%s\\n%s\\n%s\\n' NAME PASSWORD CODE \| gatehouse doctor URL\), or a machine token with --token-file$/);
        for (const check of NEEDS_ACCOUNT) assert.match(lineOf(withoutCode, check), /^skip /, check);
        assert.match(withoutCode.stdout, /^9 of 15 checks passed; 6 skipped \(not made: each line says why\)\.$/m);
        assert.doesNotMatch(withoutCode.stdout, /failed|did not pass/);

        // The next step's code (one step of skew is allowed): confirming spent this one.
        const code = totpCode(seed, Date.now() + 30_000);
        const withCode = await runDoctor(site, [`${site.origin}/reports/2026?x=1`], [], `${site.username}\n${site.password}\n${code}\n`);
        assertOnlyFailed(withCode, [], site);
        assert.match(lineOf(withCode, 'signed in'), /^ok +signed in: signed in, the app answered 200$/);
      } finally {
        await site.stop();
      }
    });

    it('works with a machine token from --token-file where the URL lets tokens pass (mfa=1&tokens=1), and says what a token cannot check', async () => {
      const site = await startSite(kind, { require: 'mfa=1&tokens=1' });
      try {
        const { twoFactorCookie } = await enrolTotp(site);
        const run = await runDoctor(site, [`${site.origin}/reports/2026?x=1`], ['--token-file', await tokenFile(site, twoFactorCookie)], '');
        assertOnlyFailed(run, ['cookie', 'forged URI'], site);
        assert.match(lineOf(run, 'signed in'), /^ok +signed in: with the machine token, the app answered 200$/);
        assert.match(lineOf(run, 'forged headers'), /^ok /);
        assert.match(lineOf(run, 'cookie'), /^skip +cookie: not checked: a machine token signs nothing in/);
        assert.match(lineOf(run, 'forged URI'), /^skip +forged URI: not checked in full: a machine token is never read from a URL, .*, and neither reaches the app as sent$/);
      } finally {
        await site.stop();
      }
    });

    it('skips, not fails, the app itself with a machine token where the URL asks for two factors and lets no token pass (mfa=1)', async () => {
      const site = await startSite(kind, { require: 'mfa=1' });
      try {
        const { twoFactorCookie } = await enrolTotp(site);
        const run = await runDoctor(site, [`${site.origin}/reports/2026?x=1`], ['--token-file', await tokenFile(site, twoFactorCookie)], '');
        assertOnlyFailed(run, ['cookie', 'signed in', 'forged URI', 'long URL'], site);
        assert.match(lineOf(run, 'signed in'), /^skip +signed in: not checked: the URL asks for two factors \(mfa=1\) and lets no machine token pass \(it would say tokens=1\)/);
        assert.match(lineOf(run, 'long URL'), /^skip +long URL: .*not checked signed in: the short URL was not reached either \(see signed in\)$/);
      } finally {
        await site.stop();
      }
    });
  });
}
