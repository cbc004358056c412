// `gatehouse doctor URL` run as an operator runs it, against a real nginx and a real Caddy in front
// of the built Gatehouse and an app that echoes what it receives: once wired correctly (every
// check passes, exit 0), and once per deliberate mistake, which the doctor must name (that check
// fails, exit 1) without blaming the checks the mistake does not touch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, tempDir, killAllChildren, removeTempDirs, runCli, startServe, type ServeProcess } from '../../helpers/process.js';
import { SECOND_APP_HOST, startCaddy, startNginx, startStack, startUpstream, stopAllProxies, type RunningProxy, type Upstream } from '../../helpers/proxies.js';
import { sendRequest } from '../../helpers/server.js';
import { CLIENT_SETTINGS } from '../../helpers/process.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

const CHECKS = ['gate', 'api', 'sign-in page', 'cookie', 'signed in', 'probe', 'forged headers', 'jwt cookie', 'forged URI', 'long URL', 'sign-out'] as const;
type Check = (typeof CHECKS)[number];

/** The mistakes a configuration can be made with; none of them: the correct wiring. */
type Mistake =
  | 'login-gated' // the sign-in page falls under the gated location
  | 'no-login-redirect' // browsers are never sent to the sign-in page
  | 'client-remote-headers' // the client's Remote-* headers are not removed
  | 'jwt-to-app' // the app gets the jwt cookie
  | 'client-uri-to-check' // the check believes the client's own X-Original-URI / X-Forwarded-Uri
  | 'small-header-buffers' // nginx refuses long request lines
  | 'probe-ungated' // the probe path skips forward auth
  | 'app-ungated' // the app itself skips forward auth
  | 'logout-unrouted'; // the sign-out page falls under the app's location

interface SiteOptions {
  readonly port: number;
  readonly gatehousePort: number;
  readonly appPort: number;
  readonly mistake: Mistake | undefined;
}

const unless = (condition: boolean, text: string): string => (condition ? '' : text);

/** A minimal nginx site after the app recipe, with the probe route, and one mistake if asked. */
function nginxSite(options: SiteOptions): string {
  const { mistake } = options;
  const check = (name: string, query: string): string => `
    location = /_gatehouse/${name} {
        internal;
        proxy_pass http://127.0.0.1:${options.gatehousePort}/api/auth/forward${query};
        proxy_pass_request_body off;
        client_max_body_size 0;
        proxy_set_header Content-Length "";
${unless(mistake === 'client-uri-to-check', `        proxy_set_header X-Original-URI $request_uri;
        proxy_set_header X-Forwarded-Uri "";`)}
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;
    }`;
  const gated = (upstream: string, isGated: boolean): string => `
${unless(!isGated, `        auth_request /_gatehouse/forward;
        auth_request_set $gatehouse_user $upstream_http_remote_user;
        auth_request_set $gatehouse_level $upstream_http_remote_level;
        auth_request_set $gatehouse_groups $upstream_http_remote_groups;
${unless(mistake === 'no-login-redirect', '        error_page 401 = @gatehouse_login;')}`)}
        proxy_pass ${upstream};
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Original-URI "";
        proxy_set_header X-Forwarded-Uri "";
${unless(mistake === 'client-remote-headers', `        proxy_set_header Remote-User $gatehouse_user;
        proxy_set_header Remote-Level $gatehouse_level;
        proxy_set_header Remote-Groups $gatehouse_groups;`)}
${unless(mistake === 'jwt-to-app', '        proxy_set_header Cookie $gatehouse_app_cookie;')}`;
  return `
map $http_cookie $gatehouse_app_cookie {
    default $http_cookie;
    "~(?:^|;\\s*)jwt=" "";
}
server {
    listen 127.0.0.1:${options.port};
${mistake === 'small-header-buffers' ? '    large_client_header_buffers 4 2k;' : ''}
${check('forward', '')}
    location @gatehouse_login {
        rewrite ^ /api/auth/forward?login=/login? break;
        proxy_pass http://127.0.0.1:${options.gatehousePort};
        proxy_method GET;
        proxy_pass_request_body off;
        client_max_body_size 0;
        proxy_set_header Content-Length "";
        proxy_set_header X-Forwarded-Uri $request_uri;
        proxy_set_header X-Original-URI "";
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_buffer_size 32k;
        proxy_buffers 4 32k;
        proxy_busy_buffers_size 32k;
    }
    location /api/auth/ {
        proxy_pass http://127.0.0.1:${options.gatehousePort};
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-Proto $scheme;
    }
${unless(mistake === 'login-gated', `    location = /login {
        proxy_pass http://127.0.0.1:${options.gatehousePort};
        proxy_set_header Host $http_host;
    }`)}
${unless(mistake === 'logout-unrouted', `    location = /logout {
        proxy_pass http://127.0.0.1:${options.gatehousePort};
        proxy_set_header Host $http_host;
    }`)}
    location = /.well-known/gatehouse/probe {${gated(`http://127.0.0.1:${options.gatehousePort}/api/auth/probe`, mistake !== 'probe-ungated')}
    }
    location / {${gated(`http://127.0.0.1:${options.appPort}`, mistake !== 'app-ungated')}
    }
}
`;
}

/** A minimal Caddy site after the app recipe, with the probe route, and one mistake if asked. */
function caddySite(options: SiteOptions): string {
  const { mistake } = options;
  const gatehouse = `127.0.0.1:${options.gatehousePort}`;
  const route = (upstream: string, rewrite: string, isGated: boolean): string => `
		route {
${unless(mistake === 'client-remote-headers', `			request_header -Remote-User
			request_header -Remote_User
			request_header -Remote-Level
			request_header -Remote_Level
			request_header -Remote-Groups
			request_header -Remote_Groups`)}
${unless(!isGated, `			forward_auth ${gatehouse} {
				uri /api/auth/forward${mistake === 'no-login-redirect' ? '' : '?login=/login'}
				copy_headers Remote-User Remote-Level Remote-Groups
${unless(mistake === 'client-uri-to-check', '				header_up -X-Original-URI')}
			}`)}
			request_header -X-Original-URI
			request_header -X-Forwarded-Uri
${rewrite}
			reverse_proxy ${upstream} {
${unless(mistake === 'jwt-to-app', `				header_up Cookie "(?:^|;\\s*)jwt=[^;]*()" "$1"
				header_up Cookie "^;\\s*()" "$1"`)}
			}
		}`;
  return `
http://app.test:${options.port}, http://127.0.0.1:${options.port} {
	handle /api/auth/* {
		reverse_proxy ${gatehouse}
	}
${unless(mistake === 'login-gated', `	handle /login {
		reverse_proxy ${gatehouse}
	}`)}
${unless(mistake === 'logout-unrouted', `	handle /logout {
		reverse_proxy ${gatehouse}
	}`)}
	handle /.well-known/gatehouse/probe {${route(gatehouse, '			rewrite * /api/auth/probe', mistake !== 'probe-ungated')}
	}
	handle {${route(`127.0.0.1:${options.appPort}`, '', mistake !== 'app-ungated')}
	}
}
`;
}

interface Site {
  readonly gatehouse: ServeProcess;
  readonly proxy: RunningProxy;
  readonly upstream: Upstream;
  readonly username: string;
  readonly password: string;
}

async function startSite(kind: 'nginx' | 'caddy', mistake: Mistake | undefined, gatehouseArgs: readonly string[] = []): Promise<Site> {
  const dataDir = await tempDir('gatehouse-doctor-');
  const gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--trust-proxy', '127.0.0.1', ...gatehouseArgs]);
  const upstream = await startUpstream();
  const render = (port: number): string => {
    const options = { port, gatehousePort: gatehouse.port, appPort: upstream.port, mistake };
    return kind === 'nginx' ? nginxSite(options) : caddySite(options);
  };
  const proxy = kind === 'nginx' ? await startNginx(render) : await startCaddy(render);
  // The first account (an administrator) straight at Gatehouse; the doctor signs in as a plain user.
  const admin = await sendRequest(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: 'admin', password: 'admin-password-1', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
  assert.equal(admin.status, 200, admin.text);
  const username = 'doctor user';
  const password = 'doctor-password-1';
  const user = await sendRequest(gatehouse.port, { method: 'POST', path: '/api/auth/register?cookie=false', token: admin.cookieToken ?? '', body: { username, password, client: CLIENT_SETTINGS, level: 'USER' } });
  assert.equal(user.status, 200, user.text);
  return { gatehouse, proxy, upstream, username, password };
}

interface DoctorRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly failed: Set<string>;
}

async function runDoctor(url: string, site: Site, extra: readonly string[] = [], stdin = `${site.username}\n${site.password}\n`): Promise<DoctorRun> {
  const result = await runCli(['doctor', url, '--timeout', '10', ...extra], { stdin, timeoutMs: 90_000 });
  const failed = new Set<string>();
  for (const line of result.stdout.split('\n')) {
    const match = /^(ok|FAIL|skip) +([A-Za-z -]+): /.exec(line);
    if (match !== null && match[1] !== 'ok') failed.add(match[2] ?? '');
  }
  for (const check of CHECKS) assert.match(result.stdout, new RegExp(`^(ok|FAIL|skip) +${check}: `, 'm'), `a line for ${check}:\n${result.stdout}`);
  return { code: result.code, stdout: result.stdout, failed };
}

function assertOnlyFailed(run: DoctorRun, expected: readonly Check[], site: Site): void {
  const context = `${run.stdout}\n--- ${site.proxy.kind} config\n${site.proxy.config}\n--- ${site.proxy.kind} output\n${site.proxy.output().slice(-2_000)}`;
  assert.deepEqual([...run.failed].sort(), [...expected].sort(), context);
  assert.equal(run.code, expected.length === 0 ? 0 : 1, context);
  // A check that fails says what to fix; one that depends on it may instead say it was not made.
  for (const check of expected) assert.match(run.stdout, new RegExp(`^(FAIL +${check}: .*Fix: |skip +${check}: )`, 'm'), `${check} says what to fix:\n${run.stdout}`);
  if (expected.length > 0) assert.match(run.stdout, /^FAIL +[A-Za-z -]+: .*Fix: /m, run.stdout);
}

interface Case {
  readonly mistake: Mistake | undefined;
  readonly failed: readonly Check[];
}

const CASES: Readonly<Record<'nginx' | 'caddy', readonly Case[]>> = {
  nginx: [
    { mistake: undefined, failed: [] },
    { mistake: 'login-gated', failed: ['sign-in page'] },
    { mistake: 'client-remote-headers', failed: ['forged headers'] },
    { mistake: 'jwt-to-app', failed: ['jwt cookie'] },
    { mistake: 'client-uri-to-check', failed: ['forged URI'] },
    { mistake: 'small-header-buffers', failed: ['long URL'] },
    { mistake: 'probe-ungated', failed: ['probe', 'forged headers', 'jwt cookie'] },
    { mistake: 'logout-unrouted', failed: ['sign-out'] },
  ],
  caddy: [
    { mistake: undefined, failed: [] },
    { mistake: 'login-gated', failed: ['sign-in page'] },
    { mistake: 'no-login-redirect', failed: ['sign-in page'] },
    { mistake: 'client-remote-headers', failed: ['forged headers'] },
    { mistake: 'jwt-to-app', failed: ['jwt cookie'] },
    { mistake: 'client-uri-to-check', failed: ['forged URI'] },
    { mistake: 'app-ungated', failed: ['api', 'sign-in page', 'forged URI', 'long URL'] },
    { mistake: 'logout-unrouted', failed: ['sign-out'] },
  ],
};

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor through ${kind}`, () => {
    before(() => assertBuilt());

    for (const { mistake, failed } of CASES[kind]) {
      const title = mistake === undefined ? 'passes every check and exits 0 when the wiring is right' : `names the mistake "${mistake}": ${failed.join(', ')} fail, with a fix, and it exits 1`;
      it(title, async () => {
        const site = await startSite(kind, mistake);
        try {
          assertOnlyFailed(await runDoctor(`${site.proxy.origin}/reports/2026?x=1`, site), failed, site);
          if (mistake === 'login-gated') {
            // The loop guard itself: the gated sign-in page gets 401, not a 302 to itself, and the log says why.
            const res = await sendRequest(site.proxy.port, { path: `/login?rd=${encodeURIComponent(`${site.proxy.origin}/`)}`, headers: { accept: 'text/html' } });
            assert.equal(res.status, 401, res.text);
            assert.equal(res.headers['location'], undefined);
            await site.gatehouse.waitForLine((line) => line.includes('the login page is behind the gate'));
          }
        } finally {
          await site.proxy.stop();
          await site.upstream.close();
          await site.gatehouse.stop();
        }
      });
    }
  });
}

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor on the deploy/ snippets as shipped, through ${kind}`, () => {
    before(() => assertBuilt());

    it('passes every check on the app for any signed-in user, and names the 403 on the group app the account is not in', async () => {
      const stack = await startStack({ proxy: kind, recipe: 'app' });
      try {
        const admin = await sendRequest(stack.gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { username: 'admin', password: 'admin-password-1', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
        assert.equal(admin.status, 200, admin.text);
        const created = await sendRequest(stack.gatehouse.port, { method: 'POST', path: '/api/auth/users', token: admin.cookieToken ?? '', body: { username: 'doctor user', password: 'doctor-password-1', level: 'USER' } });
        assert.equal(created.status, 200, created.text);
        const site = { gatehouse: stack.gatehouse, proxy: stack.proxy, upstream: stack.upstream, username: 'doctor user', password: 'doctor-password-1' };
        assertOnlyFailed(await runDoctor(`${stack.proxy.origin}/reports/2026?x=1`, site), [], site);
        // The second app (members of "family" only) by its host name, sent to the same proxy.
        const photos = await runDoctor(`http://${SECOND_APP_HOST}:${stack.proxy.port}/`, site, ['--connect', `127.0.0.1:${stack.proxy.port}`]);
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
      const site = await startSite('caddy', undefined, args);
      try {
        // A host name that is not loopback: browsers keep Secure cookies on http://127.0.0.1 and localhost.
        const run = await runDoctor(`http://app.test:${site.proxy.port}/`, site, ['--connect', `127.0.0.1:${site.proxy.port}`]);
        assert.match(run.stdout, pattern, run.stdout);
        assert.deepEqual([...run.failed], ['cookie'], run.stdout);
        assert.equal(run.code, 1);
      } finally {
        await site.proxy.stop();
        await site.upstream.close();
        await site.gatehouse.stop();
      }
    }
  });

  it('skips, and exits 1, what needs an account when standard input holds no credentials', async () => {
    const site = await startSite('nginx', undefined);
    try {
      const run = await runDoctor(`${site.proxy.origin}/`, site, [], '');
      assert.equal(run.code, 1);
      assert.deepEqual([...run.failed].sort(), ['cookie', 'forged URI', 'forged headers', 'jwt cookie', 'probe', 'signed in'], run.stdout);
      assert.match(run.stdout, /^ok +long URL: /m);
    } finally {
      await site.proxy.stop();
      await site.upstream.close();
      await site.gatehouse.stop();
    }
  });
});
