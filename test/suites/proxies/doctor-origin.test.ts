// `gatehouse doctor` and Gatehouse's own origin (docs/contract/own-origin.md "Doctor"), through a
// real nginx and a real Caddy: a deployment reached by a name is not called healthy without
// --public-url; the account and administration API answering on an app's origin is a failure
// with its fix; an app on Gatehouse's own origin is named in a warning. The sites: doctor-sites.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { stopAllProxies } from '../../helpers/proxies.js';
import { assertOnlyFailed, describeRun, lineOf, runDoctor, startSite, type Site } from './doctor-sites.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

async function withSite(kind: 'nginx' | 'caddy', options: Parameters<typeof startSite>[1], test: (site: Site) => Promise<void>): Promise<void> {
  const site = await startSite(kind, options);
  try {
    await test(site);
  } finally {
    await site.stop();
  }
}

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor and Gatehouse's own origin, through ${kind}`, () => {
    before(() => assertBuilt());

    it('names Gatehouse\'s own origin and finds the account API answering nowhere on the app\'s', async () => {
      await withSite(kind, {}, async (site) => {
        const run = await runDoctor(site, [`${site.origin}/reports`]);
        assertOnlyFailed(run, [], site);
        assert.match(lineOf(run, 'public URL'), new RegExp(`^ok +public URL: Gatehouse's own origin is http://localhost:${site.home.host.split(':')[1]} \\(--public-url\\)$`));
        assert.match(lineOf(run, 'account API'), /^ok +account API: http:\/\/127\.0\.0\.1:\d+: the account and administration API does not answer there \(\/api\/auth\/account: 404, \/api\/auth\/users: 404, not Gatehouse's\)$/);
      });
    });

    it('refuses to call a site reached by a name healthy without --public-url, with the fix', async () => {
      await withSite(kind, { publicUrl: 'none' }, async (site) => {
        const named = await runDoctor(site, [`http://app.test:${site.proxy.port}/`], ['--connect', `127.0.0.1:${site.proxy.port}`]);
        assertOnlyFailed(named, ['public URL'], site);
        assert.match(lineOf(named, 'public URL'), /^FAIL +public URL: Gatehouse runs without --public-url, and is reached here as app\.test:\d+, a name that is not loopback: .*Fix: .*--public-url https:\/\/THAT-SITE/);
        // On loopback it is a fresh install or a tunnel, and healthy.
        const loopback = await runDoctor(site, [`${site.origin}/`]);
        assertOnlyFailed(loopback, [], site);
        assert.match(lineOf(loopback, 'public URL'), /^ok +public URL: Gatehouse runs without --public-url and is reached here on loopback only/);
      });
    });

    it('fails when the account API answers on the app\'s origin (the site tells Gatehouse its own name), with the fix', async () => {
      await withSite(kind, { mistake: 'host-rewritten' }, async (site) => {
        const run = await runDoctor(site, [`${site.origin}/`]);
        assertOnlyFailed(run, ['account API'], site);
        const line = lineOf(run, 'account API');
        assert.match(line, /^FAIL +account API: http:\/\/127\.0\.0\.1:\d+ is an app's origin, yet Gatehouse's account and administration API answers there as on its own origin \(\/api\/auth\/account\): a script on any page of the app can read the account, sign it out everywhere/, describeRun(run.stdout, site));
        assert.match(line, kind === 'nginx' ? /Fix: nginx: include gatehouse\/site\.conf/ : /Fix: Caddy: import gatehouse_site/);
      });
    });

    it('warns about an app on Gatehouse\'s own origin (one origin for everything): its scripts act with the signed-in person\'s powers', async () => {
      await withSite(kind, { publicUrl: 'app', mistake: 'api-on-app-site' }, async (site) => {
        const run = await runDoctor(site, [`${site.origin}/`]);
        assertOnlyFailed(run, ['account API'], site);
        assert.match(lineOf(run, 'account API'), /^WARN +account API: http:\/\/127\.0\.0\.1:\d+ is Gatehouse's own origin \(it is --public-url's\), where its account and administration API answers \(\/api\/auth\/account: 200, \/api\/auth\/users: 403\): that app's scripts act with the signed-in person's powers .*Fix: /);
        assert.match(run.stdout, /^1\d of 15 checks passed; 1 passed with a warning\.$/m);
      });
    });

    it('warns without --public-url when a loopback app\'s site sends the whole API to Gatehouse, as the snippets once did', async () => {
      await withSite(kind, { publicUrl: 'none', mistake: 'api-on-app-site' }, async (site) => {
        const run = await runDoctor(site, [`${site.origin}/`]);
        assertOnlyFailed(run, ['account API'], site);
        assert.match(lineOf(run, 'account API'), /^WARN +account API: .* is Gatehouse's own origin \(without --public-url every loopback address is\)/);
      });
    });
  });
}
