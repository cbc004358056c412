// Mistakes the doctor caught but blamed on the wrong cause, through real nginx and Caddy sites, each
// now with its own fix: the forward URL and --base-uri disagreeing (both ways), a limit of Caddy's
// (never nginx's advice on a Caddy site: every run here and in the other doctor files checks that
// the report names only the proxy in front), a location not behind the gate at all, and a client's
// own X-Forwarded-Uri reaching Gatehouse through the redirect location rather than the check.
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

const WRONG_CAUSE = /the forward-auth answer must reach the client as it is|Fix: route \/(api\/auth\/|logout)/;

interface Case {
  readonly title: string;
  readonly kind: ProxyName;
  readonly options: SiteOptions;
  readonly path: string;
  /** The check whose line names the cause, and that line; `failed`: every check that does not pass, when asserted. */
  readonly check: Check;
  readonly line: RegExp;
  readonly failed?: readonly Check[];
}

const BASE_MISSING = 'Gatehouse runs with a --base-uri, and the proxy sends it paths without it \\(the forward URL /api/auth/forward, /login, /api/auth/\\)\\. Fix: start Gatehouse without --base-uri \\(GATEHOUSE_BASE_URI\\), or begin every path the proxy sends it with that base \\(BASE/api/auth/forward, BASE/login, BASE/api/auth/\\)$';
const NOT_GATED = (kind: ProxyName): string => kind === 'nginx'
  ? 'Fix: nginx: include gatehouse/protect.conf in the location that serves this URL'
  : 'Fix: Caddy: import gatehouse_protect in the handle block that serves this URL';

const CASES: readonly Case[] = [
  {
    title: 'Gatehouse started with a --base-uri the nginx site does not use: nginx turns the check\'s 404 into 500',
    kind: 'nginx',
    options: { baseUri: '/gh' },
    path: '/reports/2026?x=1',
    check: 'gate',
    line: new RegExp(`^FAIL +gate: the proxy answered 500 to http://127\\.0\\.0\\.1:\\d+/reports/2026\\?x=1, and Gatehouse answers its own 404 \\(nothing at this path\\) at /api/auth/verify, where the proxy sends it: ${BASE_MISSING}`),
  },
  {
    title: 'Gatehouse started with a --base-uri the Caddy site does not use: forward_auth passes the check\'s 404 on',
    kind: 'caddy',
    options: { baseUri: '/gh' },
    path: '/reports/2026?x=1',
    check: 'api',
    line: new RegExp(`^FAIL +api: a request without a session to http://127\\.0\\.0\\.1:\\d+/reports/2026\\?x=1 got Gatehouse's own 404 \\(nothing at this path\\), and so does /api/auth/verify: ${BASE_MISSING}`),
  },
  {
    title: 'an nginx forward URL with a base (/gh/api/auth/forward) Gatehouse does not have',
    kind: 'nginx',
    options: { mistake: 'forward-url-base' },
    path: '/',
    check: 'gate',
    line: /^FAIL +gate: the proxy answered 500 to http:\/\/127\.0\.0\.1:\d+\/, though Gatehouse answers at \/api\/auth\/verify through it: .*Fix: the forward URL must be \/api\/auth\/forward on that same Gatehouse .*nginx: error\.log says "auth request unexpected status"/,
  },
  {
    title: 'a Caddy forward URL with a base (/gh/api/auth/forward) Gatehouse does not have',
    kind: 'caddy',
    options: { mistake: 'forward-url-base' },
    path: '/',
    check: 'api',
    line: /^FAIL +api: a request without a session to http:\/\/127\.0\.0\.1:\d+\/ got Gatehouse's own 404 \(nothing at this path\), though Gatehouse answers at \/api\/auth\/verify: it has no --base-uri, so its forward endpoint is \/api\/auth\/forward, and the forward URL names another path\. Fix: Caddy: forward_auth GATEHOUSE \{ uri \/api\/auth\/forward\?\.\.\. \}/,
  },
  {
    title: 'a Caddy server whose max_header_size refuses a long URL, with Caddy\'s fix',
    kind: 'caddy',
    options: { mistake: 'tiny-max-header-size' },
    path: '/reports/2026?x=1',
    check: 'long URL',
    failed: ['long URL'],
    line: /^FAIL +long URL: a 4000-character URL from a browser without a session got 431, where the short one passed: the proxy refuses a request line or headers that long\. Fix: Caddy: raise or remove max_header_size in the global servers options$/,
  },
  ...(['nginx', 'caddy'] as const).flatMap((kind): Case[] => [
    {
      title: `a WebSocket location outside the gate on ${kind} (426 to a plain request, 101 to an upgrade)`,
      kind,
      options: { otherLocations: true, mistake: 'others-ungated' },
      path: '/ws',
      check: 'api',
      line: new RegExp(`^FAIL +api: a request without a session got 426 Upgrade Required, the answer of a WebSocket server \\(the gate never gives it\\): http://127\\.0\\.0\\.1:\\d+/ws is not behind forward auth; a WebSocket upgrade without a session reached the app too \\(101\\)\\. ${NOT_GATED(kind)}`),
    },
    {
      title: `a static file outside the gate on ${kind} (a regular-expression location for .png)`,
      kind,
      options: { otherLocations: true, mistake: 'others-ungated' },
      path: '/static/logo.png',
      check: 'api',
      line: new RegExp(`^FAIL +api: an API request without a session reached the app \\(200\\): http://127\\.0\\.0\\.1:\\d+/static/logo\\.png is not behind forward auth; a WebSocket upgrade without a session reached the app too \\(200\\)\\. ${NOT_GATED(kind)}`),
    },
  ]),
  {
    title: 'a client\'s X-Forwarded-Uri reaching Gatehouse through nginx\'s redirect location, which sets none: the missing line, not the check location',
    kind: 'nginx',
    options: { mistake: 'redirect-uri-unset' },
    path: '/reports/2026?x=1',
    check: 'forged URI',
    failed: ['return URL', 'forged URI'],
    line: /^FAIL +forged URI: a token in the client's own X-Forwarded-Uri opened the gate without a cookie, and the answer was Gatehouse's own 200, not the app's: the location that asks Gatehouse for the sign-in redirect passes the client's header on because it does not set its own\. Fix: nginx: proxy_set_header X-Forwarded-Uri \$request_uri; in the location the 401 goes to \(error_page 401 = @gatehouse_refused\)$/,
  },
  {
    title: 'a client\'s X-Original-URI reaching Caddy\'s forward_auth: Caddy\'s line',
    kind: 'caddy',
    options: { mistake: 'client-uri-to-check' },
    path: '/reports/2026?x=1',
    check: 'forged URI',
    failed: ['forged URI'],
    line: /^FAIL +forged URI: a token in the client's own X-Original-URI opened the gate without a cookie: the proxy passes it to the check\. Fix: set the check's URI headers in the proxy \(Caddy: request_header -X-Original-URI and request_header -X-Forwarded-Uri before forward_auth, which sets X-Forwarded-Uri itself\)$/,
  },
];

describe('gatehouse doctor names the cause, not a neighbour of it', () => {
  before(() => assertBuilt());

  for (const { title, kind, options, path, check, line, failed } of CASES) {
    it(`names ${title}`, async () => {
      const site = await startSite(kind, options);
      try {
        const run = await runDoctor(site, [`${site.origin}${path}`]);
        assert.match(lineOf(run, check), line);
        assert.doesNotMatch(run.stdout, WRONG_CAUSE, run.stdout);
        if (failed === undefined) assert.equal(run.code, 1, run.stdout);
        else assertOnlyFailed(run, failed, site);
      } finally {
        await site.stop();
      }
    });
  }
});
