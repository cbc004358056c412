// `gatehouse doctor URL` run as an operator runs it, against a real nginx and a real Caddy in front
// of the built Gatehouse and an app that echoes what it receives: once wired correctly (every
// check passes, exit 0), and once per deliberate mistake, which the doctor must name (that check
// fails, exit 1) without blaming the checks the mistake does not touch. The sites: doctor-sites.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { SECOND_APP_HOST, startStack, stopAllProxies } from '../../helpers/proxies.js';
import { sendRequest } from '../../helpers/server.js';
import { viaHome } from './through-proxy.js';
import { CLIENT_SETTINGS } from '../../helpers/process.js';
import { assertOnlyFailed, runDoctor, startSite, type Check, type Mistake, type Site } from './doctor-sites.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

interface Case {
  readonly mistake: Mistake | undefined;
  readonly failed: readonly Check[];
}

const CASES: Readonly<Record<'nginx' | 'caddy', readonly Case[]>> = {
  nginx: [
    { mistake: undefined, failed: [] },
    { mistake: 'login-gated', failed: ['sign-in page', 'return URL'] },
    { mistake: 'client-remote-headers', failed: ['forged headers'] },
    { mistake: 'jwt-to-app', failed: ['jwt cookie'] },
    { mistake: 'client-uri-to-check', failed: ['forged URI'] },
    { mistake: 'small-header-buffers', failed: ['long URL'] },
    { mistake: 'probe-ungated', failed: ['probe', 'forged headers', 'jwt cookie'] },
    { mistake: 'logout-unrouted', failed: ['sign-out'] },
  ],
  caddy: [
    { mistake: undefined, failed: [] },
    { mistake: 'login-gated', failed: ['sign-in page', 'return URL'] },
    { mistake: 'no-login-redirect', failed: ['sign-in page', 'return URL'] },
    { mistake: 'client-remote-headers', failed: ['forged headers'] },
    { mistake: 'jwt-to-app', failed: ['jwt cookie'] },
    { mistake: 'client-uri-to-check', failed: ['forged URI'] },
    { mistake: 'app-ungated', failed: ['api', 'sign-in page', 'return URL', 'forged URI', 'long URL'] },
    { mistake: 'logout-unrouted', failed: ['sign-out'] },
  ],
};

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor through ${kind}`, () => {
    before(() => assertBuilt());

    for (const { mistake, failed } of CASES[kind]) {
      const title = mistake === undefined ? 'passes every check and exits 0 when the wiring is right' : `names the mistake "${mistake}": ${failed.join(', ')} fail, with a fix, and it exits 1`;
      it(title, async () => {
        const site = await startSite(kind, mistake === undefined ? {} : { mistake });
        try {
          assertOnlyFailed(await runDoctor(site, [`${site.origin}/reports/2026?x=1`]), failed, site);
          if (mistake === 'login-gated') {
            // The loop guard itself: the gated sign-in page gets 401, not a 302 to itself, and the log says why.
            const res = await sendRequest(site.proxy.port, { path: `/login?rd=${encodeURIComponent(`${site.proxy.origin}/`)}`, headers: { accept: 'text/html' } });
            assert.equal(res.status, 401, res.text);
            assert.equal(res.headers['location'], undefined);
            await site.gatehouse.waitForLine((line) => line.includes('the login page is behind the gate'));
          }
        } finally {
          await site.stop();
        }
      });
    }
  });
}

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor on the deploy/ snippets as shipped, through ${kind}`, () => {
    before(() => assertBuilt());

    it('passes every check on the app for any signed-in user, and names the 403 on the group app the account is not in', async () => {
      // As the recipes start Gatehouse: --public-url naming its own site.
      const stack = await startStack({ proxy: kind, recipe: 'app', publicUrl: true });
      try {
        const admin = await viaHome(stack.home, { method: 'POST', path: '/api/auth/register', body: { username: 'admin', password: 'admin-password-1', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
        assert.equal(admin.status, 200, admin.text);
        const created = await viaHome(stack.home, { method: 'POST', path: '/api/auth/users', token: admin.cookieToken ?? '', body: { username: 'doctor user', password: 'doctor-password-1', level: 'USER' } });
        assert.equal(created.status, 200, created.text);
        const site: Site = {
          kind, gatehouse: stack.gatehouse, home: stack.home, proxy: stack.proxy, upstream: stack.upstream, username: 'doctor user', password: 'doctor-password-1',
          adminToken: admin.cookieToken ?? '', origin: stack.proxy.origin, doctorArgs: [], doctorEnv: {}, stop: () => stack.stop(),
        };
        assertOnlyFailed(await runDoctor(site, [`${stack.proxy.origin}/reports/2026?x=1`]), [], site);
        // The second app (members of "family" only) by its host name, sent to the same proxy.
        const photos = await runDoctor(site, [`http://${SECOND_APP_HOST}:${stack.proxy.port}/`], ['--connect', `127.0.0.1:${stack.proxy.port}`]);
        assertOnlyFailed(photos, ['signed in', 'long URL'], site);
        assert.match(photos.stdout, /^FAIL +signed in: signed in as doctor user, the gate answers 403/m);
      } finally {
        await stack.stop();
      }
    });
  });
}

describe('gatehouse doctor and the session cookie', () => {
  before(() => assertBuilt());

  it('names a Secure cookie on a plain-http site (a browser drops it) and a Domain that does not cover the host', async () => {
    for (const [args, pattern] of [
      [['--secure-cookie'], /^FAIL +cookie: the session cookie is Secure but http:\/\/app\.test:\d+ is plain http.*Fix: /m],
      [['--cookie-domain', 'other.example'], /^FAIL +cookie: the session cookie says Domain=other\.example, which does not cover app\.test.*Fix: /m],
    ] as const) {
      const site = await startSite('caddy', { gatehouseArgs: args });
      try {
        // A host name that is not loopback: browsers keep Secure cookies on http://127.0.0.1 and localhost.
        const run = await runDoctor(site, [`http://app.test:${site.proxy.port}/`], ['--connect', `127.0.0.1:${site.proxy.port}`]);
        assert.match(run.stdout, pattern, run.stdout);
        assert.deepEqual([...run.failed], ['cookie'], run.stdout);
        assert.equal(run.code, 1);
      } finally {
        await site.stop();
      }
    }
  });

  it('skips, and exits 1, what needs an account when standard input holds no credentials', async () => {
    const site = await startSite('nginx');
    try {
      const run = await runDoctor(site, [`${site.proxy.origin}/`], [], '');
      assert.equal(run.code, 1);
      assert.deepEqual([...run.failed].sort(), ['cookie', 'forged URI', 'forged headers', 'jwt cookie', 'probe', 'signed in'], run.stdout);
      assert.match(run.stdout, /^ok +long URL: /m);
      assert.match(run.stdout, /^9 of 15 checks passed; 6 skipped \(not made: each line says why\)\.$/m, run.stdout);
      assert.doesNotMatch(run.stdout, /did not pass/);
    } finally {
      await site.stop();
    }
  });
});
