// The address a sign-in counts against, through real nginx and Caddy sites: when Gatehouse does not
// trust the proxy every failed sign-in counts against the proxy (one stranger locks everyone out
// with 429); when it trusts everyone, or the proxy passes the client's own X-Forwarded-For on, a
// client picks its address and is never throttled. The doctor names each, with its fix.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { stopAllProxies } from '../../helpers/proxies.js';
import { assertOnlyFailed, lineOf, runDoctor, startSite, type ProxyName, type SiteOptions } from './doctor-sites.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

interface Case {
  readonly title: string;
  readonly kind: ProxyName;
  readonly options: SiteOptions;
  readonly line: RegExp;
}

const NOT_TRUSTED = /^FAIL +client address: Gatehouse does not trust the proxy: it takes every sign-in as coming from 127\.0\.0\.1, the proxy's address, so one stranger's wrong passwords lock everyone out \(429\)\. Fix: start Gatehouse with --trust-proxy 127\.0\.0\.1 \(GATEHOUSE_TRUST_PROXY\), the address the proxy connects from$/;
const TRUSTS_EVERYONE = /^FAIL +client address: Gatehouse believed a made-up X-Forwarded-For: it took 203\.0\.113\.\d+ for the client, so it trusts 198\.51\.100\.\d+, a documentation address, as a proxy: .*Fix: list only your proxies' addresses in --trust-proxy \(GATEHOUSE_TRUST_PROXY\), never 0\.0\.0\.0\/0 or ::\/0$/;

const CASES: readonly Case[] = [
  { title: 'Gatehouse not trusting nginx', kind: 'nginx', options: { trustProxy: null }, line: NOT_TRUSTED },
  { title: 'Gatehouse not trusting Caddy', kind: 'caddy', options: { trustProxy: null }, line: NOT_TRUSTED },
  {
    title: 'Gatehouse trusting everyone behind an nginx that adds the client\'s own X-Forwarded-For ($proxy_add_x_forwarded_for)',
    kind: 'nginx',
    options: { trustProxy: '0.0.0.0/0', mistake: 'xff-appended' },
    line: TRUSTS_EVERYONE,
  },
  {
    title: 'Gatehouse trusting everyone behind a Caddy that passes the client\'s own on (trusted_proxies private_ranges)',
    kind: 'caddy',
    options: { trustProxy: '0.0.0.0/0', mistake: 'xff-caddy-trusts-client' },
    line: TRUSTS_EVERYONE,
  },
  {
    title: 'an nginx that sets no X-Forwarded-For toward Gatehouse, so the client\'s own passes as it is',
    kind: 'nginx',
    options: { mistake: 'xff-passed' },
    line: /^FAIL +client address: Gatehouse believed a made-up X-Forwarded-For \(it took 198\.51\.100\.\d+ for the client\): the proxy adds no X-Forwarded-For of its own and passes the client's on, so a client picks its own address and is never throttled\. Fix: nginx: proxy_set_header X-Forwarded-For \$remote_addr; in the locations that go to Gatehouse/,
  },
];

describe('gatehouse doctor and the client address a sign-in counts against', () => {
  before(() => assertBuilt());

  for (const { title, kind, options, line } of CASES) {
    it(`names ${title}, with the fix, and nothing else`, async () => {
      const site = await startSite(kind, options);
      try {
        const run = await runDoctor(site, [`${site.origin}/reports/2026?x=1`]);
        assertOnlyFailed(run, ['client address'], site);
        assert.match(lineOf(run, 'client address'), line);
      } finally {
        await site.stop();
      }
    });
  }

  it('passes when Gatehouse trusts everyone but Caddy replaces the client\'s X-Forwarded-For (Caddy\'s default): no client can pick', async () => {
    const site = await startSite('caddy', { trustProxy: '0.0.0.0/0' });
    try {
      const run = await runDoctor(site, [`${site.origin}/`]);
      assertOnlyFailed(run, [], site);
      assert.match(lineOf(run, 'client address'), /^ok +client address: sign-ins from here count against 127\.0\.0\.1 \(from the proxy's X-Forwarded-For\), and a made-up X-Forwarded-For is not believed$/);
    } finally {
      await site.stop();
    }
  });
});
