// The sign-in redirect must name exactly the page asked for, through real nginx and Caddy sites: a
// redirect without rd, or with another path, lands the user elsewhere after signing in; one that
// says http:// on an https site (TLS ends in front of the proxy, and Gatehouse was told http) sends
// them off the site's scheme. The doctor asks for a deep URL with a query and compares; on an https
// site it also warns about a session cookie without Secure.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { stopAllProxies } from '../../helpers/proxies.js';
import { assertOnlyFailed, lineOf, runDoctor, startSite, type Check, type ProxyName, type SiteOptions } from './doctor-sites.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

interface Case {
  readonly title: string;
  readonly kind: ProxyName;
  readonly options: SiteOptions;
  readonly failed: readonly Check[];
  readonly line: RegExp;
}

const ASKED = 'reports/2026\\?x=1&gatehouse-doctor=a%2Fb%20c&page=2';

const CASES: readonly Case[] = [
  {
    title: 'an nginx redirect location that sends $uri, which its own rewrite changed: the user returns to /api/auth/forward',
    kind: 'nginx',
    options: { mistake: 'redirect-uri-rewritten' },
    failed: ['return URL'],
    line: new RegExp(`^FAIL +return URL: the sign-in redirect returns to http://127\\.0\\.0\\.1:\\d+/api/auth/forward, not to http://127\\.0\\.0\\.1:\\d+/${ASKED}, the page asked for: Gatehouse was given another URI than the one the browser asked for\\. Fix: nginx: proxy_set_header X-Forwarded-Uri \\$request_uri; \\(not \\$uri, which loses the query, nor a fixed path\\) in the location the 401 goes to`),
  },
  {
    title: 'an nginx redirect location that sends no X-Forwarded-Uri: no rd at all, the user lands on the home page',
    kind: 'nginx',
    options: { mistake: 'redirect-uri-unset' },
    // The same missing line lets a client's own X-Forwarded-Uri reach Gatehouse (doctor-fixes.test.ts).
    failed: ['return URL', 'forged URI'],
    line: new RegExp(`^FAIL +return URL: the redirect to the sign-in page carries no rd, so after signing in the user lands on the home page, not on http://127\\.0\\.0\\.1:\\d+/${ASKED}: Gatehouse was given no URI\\. Fix: nginx: proxy_set_header X-Forwarded-Uri \\$request_uri;`),
  },
  {
    title: 'a Caddy handle_path that strips /reports before forward_auth: the user returns to the stripped path',
    kind: 'caddy',
    options: { mistake: 'handle-path' },
    failed: ['return URL'],
    line: new RegExp(`^FAIL +return URL: the sign-in redirect returns to http://127\\.0\\.0\\.1:\\d+/2026\\?x=1&gatehouse-doctor=a%2Fb%20c&page=2, not to http://127\\.0\\.0\\.1:\\d+/${ASKED}, the page asked for: .*Fix: Caddy: forward_auth sends the URI as it stands then: put it before any rewrite, uri or handle_path`),
  },
  ...(['nginx', 'caddy'] as const).map((kind): Case => ({
    title: `an https site whose TLS ends in front of ${kind}, which tells Gatehouse its own scheme: the redirect says http://, and the cookie is not Secure`,
    kind,
    options: { tlsFront: true, mistake: 'scheme-not-forwarded' },
    failed: ['return URL', 'cookie'],
    line: new RegExp(`^FAIL +return URL: the sign-in redirect returns to http://app\\.test:\\d+/${ASKED}, not to https://app\\.test:\\d+/${ASKED}, the page asked for: Gatehouse was told http in X-Forwarded-Proto, as when TLS ends in front of the proxy\\. Fix: ${kind === 'nginx' ? 'nginx: proxy_set_header X-Forwarded-Proto https;' : 'Caddy: header_up X-Forwarded-Proto https in forward_auth'}`),
  })),
];

describe('gatehouse doctor and the page the sign-in redirect returns to', () => {
  before(() => assertBuilt());

  for (const { title, kind, options, failed, line } of CASES) {
    it(`names ${title}`, async () => {
      const site = await startSite(kind, options);
      try {
        const run = await runDoctor(site, [`${site.origin}/reports/2026?x=1`]);
        assertOnlyFailed(run, failed, site);
        assert.match(lineOf(run, 'return URL'), line);
        if (failed.includes('cookie')) {
          assert.match(lineOf(run, 'cookie'), /^WARN +cookie: signed in as doctor user; a browser keeps the session cookie and sends it to https:\/\/app\.test:\d+\/reports\/2026, but on this https site it is not marked Secure, .*Fix: start Gatehouse with --secure-cookie/);
        }
      } finally {
        await site.stop();
      }
    });
  }

  for (const kind of ['nginx', 'caddy'] as const) {
    it(`passes every check on an https site whose TLS ends in front of ${kind}, which tells Gatehouse https: the redirect and a Secure cookie`, async () => {
      const site = await startSite(kind, { tlsFront: true });
      try {
        const run = await runDoctor(site, [`${site.origin}/`]);
        assertOnlyFailed(run, [], site);
        assert.match(lineOf(run, 'return URL'), /^ok +return URL: the sign-in redirect names the page asked for exactly \(https:\/\/app\.test:\d+\/gatehouse-doctor\/deep\/page\?gatehouse-doctor=a%2Fb%20c&page=2\)/);
      } finally {
        await site.stop();
      }
    });
  }
});
