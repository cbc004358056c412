// Sites for running `gatehouse doctor` as an operator runs it: a real nginx or Caddy in front of the
// built Gatehouse and an app that echoes what it receives, wired after the app recipe (the app's
// site routes only signing in and out to Gatehouse; Gatehouse's own site, on a second port, routes
// everything, and is its --public-url), each either right or broken in one named way. Optional: a TLS front (TLS ends before the proxy), a WebSocket
// server at /ws and static .png files beside the app, an account with TOTP.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { promisify } from 'node:util';
import { CLIENT_SETTINGS, freePort, runCli, startServe, tempDir, type ServeProcess } from '../../helpers/process.js';
import { startCaddy, startNginx, startUpstream, withFreshPorts, type HomeSite, type RunningProxy, type Upstream } from '../../helpers/proxies.js';
import { viaHome } from './through-proxy.js';

export const CHECKS = [
  'gate', 'api', 'sign-in page', 'return URL', 'client address', 'cookie', 'signed in', 'probe', 'forged headers',
  'jwt cookie', 'forged URI', 'public URL', 'account API', 'long URL', 'sign-out',
] as const;
export type Check = (typeof CHECKS)[number] | 'behind the gate';
export type ProxyName = 'nginx' | 'caddy';

/** The mistakes a site can be made with; none of them: the correct wiring. */
export type Mistake =
  | 'login-gated' // the sign-in page falls under the gated location
  | 'no-login-redirect' // browsers are never sent to the sign-in page
  | 'client-remote-headers' // the client's Remote-* headers are not removed
  | 'jwt-to-app' // the app gets the jwt cookie
  | 'client-uri-to-check' // the check believes the client's own X-Original-URI / X-Forwarded-Uri
  | 'small-header-buffers' // nginx refuses long request lines
  | 'tiny-max-header-size' // Caddy refuses long request lines
  | 'probe-ungated' // the probe path skips forward auth
  | 'app-ungated' // the app itself skips forward auth
  | 'logout-unrouted' // the sign-out page falls under the app's location
  | 'xff-passed' // nginx: no X-Forwarded-For line toward Gatehouse, so the client's own passes on
  | 'xff-appended' // nginx: $proxy_add_x_forwarded_for toward Gatehouse (the client's own, then the peer)
  | 'xff-caddy-trusts-client' // Caddy: trusted_proxies private_ranges, so it passes the client's own on
  | 'redirect-uri-unset' // nginx: the redirect location sets no X-Forwarded-Uri (the client's passes)
  | 'redirect-uri-rewritten' // nginx: the redirect location sends $uri, which its rewrite changed
  | 'handle-path' // Caddy: handle_path strips /reports before forward_auth
  | 'scheme-not-forwarded' // behind a TLS front, Gatehouse is told the proxy's own scheme (http)
  | 'others-ungated' // /ws and *.png are served without the gate
  | 'forward-url-base' // the forward URL begins with /gh, a --base-uri Gatehouse does not have
  | 'api-on-app-site' // the app's site sends all of /api/auth/ to Gatehouse, as the snippets once did
  | 'host-rewritten'; // as api-on-app-site, and the app's site tells Gatehouse its own site's name in X-Forwarded-Host

/**
 * Gatehouse's --public-url: `home`, its own site on the proxy's second port (http://localhost:HOME),
 * as the recipes run it; `app`, the app's own site (one origin for everything); `none`, unset.
 */
export type PublicUrl = 'home' | 'app' | 'none';

export interface SiteOptions {
  readonly mistake?: Mistake;
  /** Gatehouse's --trust-proxy; null: none. Default 127.0.0.1, where the proxies connect from. */
  readonly trustProxy?: string | null;
  readonly gatehouseArgs?: readonly string[];
  /** Gatehouse's --base-uri (the sites themselves never use one). */
  readonly baseUri?: string;
  /** What the app's forward URL asks for beyond a session (mfa=1, mfa=1&tokens=1). */
  readonly require?: string;
  /** TLS ends in a front before the proxy: the site is https://app.test:PORT (see `doctorArgs`). */
  readonly tlsFront?: boolean;
  /** A WebSocket server at /ws and static files at *.png beside the app. */
  readonly otherLocations?: boolean;
  /** Default `home`. */
  readonly publicUrl?: PublicUrl;
}

const unless = (condition: boolean, text: string): string => (condition ? '' : text);

interface Rendered {
  readonly options: SiteOptions;
  /** Gatehouse's own site. */
  readonly homePort: number;
  readonly gatehousePort: number;
  readonly appPort: number;
  readonly webSocketPort: number;
}

/** A minimal nginx site after the app recipe, with the probe route, and one mistake if asked. */
function nginxSite(site: Rendered, port: number, staticDir: string): string {
  const { mistake, tlsFront = false, require = '', otherLocations = false } = site.options;
  const gatehouse = `http://127.0.0.1:${site.gatehousePort}`;
  const proto = tlsFront && mistake !== 'scheme-not-forwarded' ? 'https' : '$scheme';
  const forwardedFor = mistake === 'xff-passed' ? '' : `proxy_set_header X-Forwarded-For ${mistake === 'xff-appended' ? '$proxy_add_x_forwarded_for' : '$remote_addr'};`;
  const redirectUri = mistake === 'redirect-uri-unset' ? '' : `proxy_set_header X-Forwarded-Uri ${mistake === 'redirect-uri-rewritten' ? '$uri' : '$request_uri'};`;
  const forward = `${mistake === 'forward-url-base' ? '/gh' : ''}/api/auth/forward`;
  const check = (name: string, query: string): string => `
    location = /_gatehouse/${name} {
        internal;
        proxy_pass ${gatehouse}${forward}${query};
        proxy_pass_request_body off;
        client_max_body_size 0;
        proxy_set_header Content-Length "";
${unless(mistake === 'client-uri-to-check', `        proxy_set_header X-Original-URI $request_uri;
        proxy_set_header X-Forwarded-Uri "";`)}
        proxy_set_header X-Forwarded-Proto ${proto};
        proxy_set_header X-Forwarded-Host $http_host;
    }`;
  const gate = (checkName: string, isGated: boolean): string => unless(!isGated, `
        auth_request /_gatehouse/${checkName};
        auth_request_set $gatehouse_user $upstream_http_remote_user;
        auth_request_set $gatehouse_level $upstream_http_remote_level;
        auth_request_set $gatehouse_groups $upstream_http_remote_groups;
${unless(mistake === 'no-login-redirect', '        error_page 401 = @gatehouse_login;')}`);
  const toApp = (upstream: string): string => `
        proxy_pass ${upstream};
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Original-URI "";
        proxy_set_header X-Forwarded-Uri "";
${unless(mistake === 'client-remote-headers', `        proxy_set_header Remote-User $gatehouse_user;
        proxy_set_header Remote-Level $gatehouse_level;
        proxy_set_header Remote-Groups $gatehouse_groups;`)}
${unless(mistake === 'jwt-to-app', '        proxy_set_header Cookie $gatehouse_app_cookie;')}`;
  const toGatehouse = `
        proxy_pass ${gatehouse};
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-Proto ${proto};
        ${forwardedFor}
${unless(mistake !== 'host-rewritten', `        proxy_set_header X-Forwarded-Host localhost:${site.homePort};`)}`;
  const othersGated = mistake !== 'others-ungated';
  // The sign-in surface only (the recipe's site.conf), or all of /api/auth/ as the snippets once sent.
  const api = mistake === 'api-on-app-site' || mistake === 'host-rewritten'
    ? `    location /api/auth/ {${toGatehouse}
    }`
    : `${['authenticate', 'passkey/options', 'passkey', 'verify', 'logout', 'probe'].map((path) => `    location = /api/auth/${path} {${toGatehouse}
    }`).join('\n')}
    location ~* ^/api/auth/ {
        return 404;
    }
    location ^~ /gatehouse/ {${toGatehouse}
    }`;
  return `
server {
    listen 127.0.0.1:${site.homePort};
    location / {
        proxy_pass ${gatehouse};
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $remote_addr;
    }
}
map $http_cookie $gatehouse_app_cookie {
    default $http_cookie;
    "~(?:^|;\\s*)jwt=" "";
}
server {
    listen 127.0.0.1:${port};
${mistake === 'small-header-buffers' ? '    large_client_header_buffers 4 2k;' : ''}
${check('app', require === '' ? '' : `?${require}`)}
${check('any', '')}
    location @gatehouse_login {
        rewrite ^ ${forward}?${require === '' ? '' : `${require}&`}login=/login? break;
        proxy_pass ${gatehouse};
        proxy_method GET;
        proxy_pass_request_body off;
        client_max_body_size 0;
        proxy_set_header Content-Length "";
        ${redirectUri}
        proxy_set_header X-Original-URI "";
        proxy_set_header X-Forwarded-Proto ${proto};
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_buffer_size 32k;
        proxy_buffers 4 32k;
        proxy_busy_buffers_size 32k;
    }
${api}
${unless(mistake === 'login-gated', `    location = /login {${toGatehouse}
    }`)}
${unless(mistake === 'logout-unrouted', `    location = /logout {${toGatehouse}
    }`)}
    location = /.well-known/gatehouse/probe {${gate('any', mistake !== 'probe-ungated')}${toApp(`${gatehouse}/api/auth/probe`)}
    }
    location / {${gate('app', mistake !== 'app-ungated')}${toApp(`http://127.0.0.1:${site.appPort}`)}
    }
${unless(!otherLocations, `    location ~* \\.png$ {${gate('app', othersGated)}
        root ${staticDir};
    }
    location /ws {${gate('app', othersGated)}${toApp(`http://127.0.0.1:${site.webSocketPort}`)}
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection "upgrade";
    }`)}
}
`;
}

/** A minimal Caddy site after the app recipe, with the probe route, and one mistake if asked. */
function caddySite(site: Rendered, port: number, staticDir: string): string {
  const { mistake, tlsFront = false, require = '', otherLocations = false } = site.options;
  const gatehouse = `127.0.0.1:${site.gatehousePort}`;
  const toGatehouse = `reverse_proxy ${gatehouse} {
${unless(!tlsFront || mistake === 'scheme-not-forwarded', '			header_up X-Forwarded-Proto https')}
${unless(mistake !== 'xff-caddy-trusts-client', '			trusted_proxies private_ranges')}
${unless(mistake !== 'host-rewritten', `			header_up X-Forwarded-Host localhost:${site.homePort}`)}
		}`;
  const checkLines = (query: string, isGated: boolean): string => `
${unless(mistake === 'client-remote-headers', `			request_header -Remote-User
			request_header -Remote_User
			request_header -Remote-Level
			request_header -Remote_Level
			request_header -Remote-Groups
			request_header -Remote_Groups`)}
${unless(!isGated, `			forward_auth ${gatehouse} {
				uri ${mistake === 'forward-url-base' ? '/gh' : ''}/api/auth/forward?${query}${mistake === 'no-login-redirect' ? '' : `${query === '' ? '' : '&'}login=/login`}
				copy_headers Remote-User Remote-Level Remote-Groups
${unless(mistake === 'client-uri-to-check', '				header_up -X-Original-URI')}
${unless(!tlsFront || mistake === 'scheme-not-forwarded', '				header_up X-Forwarded-Proto https')}
			}`)}
			request_header -X-Original-URI
			request_header -X-Forwarded-Uri`;
  const route = (upstream: string, query: string, rewrite: string, isGated: boolean): string => `
		route {${checkLines(query, isGated)}
${rewrite}
			reverse_proxy ${upstream} {
${unless(mistake === 'jwt-to-app', `				header_up Cookie "(?:^|;\\s*)jwt=[^;]*()" "$1"
				header_up Cookie "^;\\s*()" "$1"`)}
			}
		}`;
  const app = `127.0.0.1:${site.appPort}`;
  const othersGated = mistake !== 'others-ungated';
  // The sign-in surface only (the recipe's gatehouse_site), or all of /api/auth/ as the snippets once sent.
  const api = mistake === 'api-on-app-site' || mistake === 'host-rewritten'
    ? `	handle /api/auth/* {
		${toGatehouse}
	}`
    : `	handle /api/auth/* {
		@sign_in path /api/auth/authenticate /api/auth/passkey/options /api/auth/passkey /api/auth/verify /api/auth/logout /api/auth/probe
		handle @sign_in {
			${toGatehouse}
		}
		respond 404
	}
	handle /gatehouse/* {
		${toGatehouse}
	}`;
  return `
http://:${site.homePort} {
	bind 127.0.0.1
	reverse_proxy ${gatehouse}
}

http://:${port} {
	bind 127.0.0.1
${api}
${unless(mistake === 'login-gated', `	handle /login {
		${toGatehouse}
	}`)}
${unless(mistake === 'logout-unrouted', `	handle /logout {
		${toGatehouse}
	}`)}
	handle /.well-known/gatehouse/probe {${route(gatehouse, '', '			rewrite * /api/auth/probe', mistake !== 'probe-ungated')}
	}
${unless(!otherLocations, `	@png path *.png
	handle @png {
		route {${checkLines(require, othersGated)}
			root * ${staticDir}
			file_server
		}
	}
	handle /ws {${route(`127.0.0.1:${site.webSocketPort}`, require, '', othersGated)}
	}`)}
${unless(mistake !== 'handle-path', `	handle_path /reports/* {${route(app, require, '', true)}
	}`)}
	handle {${route(app, require, '', mistake !== 'app-ungated')}
	}
}
`;
}

export const PNG_BYTES = Buffer.from('89504e470d0a1a0a', 'hex');

export interface Site {
  readonly kind: ProxyName;
  readonly gatehouse: ServeProcess;
  /** Gatehouse itself (not through the proxy), asked with the Host of its own origin. */
  readonly home: HomeSite;
  readonly proxy: RunningProxy;
  readonly upstream: Upstream;
  readonly username: string;
  readonly password: string;
  /** The administrator's session cookie token, straight at Gatehouse. */
  readonly adminToken: string;
  /** Where the doctor is pointed: the proxy, or the TLS front as https://app.test:PORT. */
  readonly origin: string;
  /** Arguments and environment the doctor needs to reach `origin` (--connect, the front's certificate). */
  readonly doctorArgs: readonly string[];
  readonly doctorEnv: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/**
 * Starts Gatehouse, the echo app (and the WebSocket server, the TLS front), then the proxy, and makes
 * a plain user; again on new ports when another process took one meanwhile.
 */
export async function startSite(kind: ProxyName, options: SiteOptions = {}): Promise<Site> {
  return withFreshPorts(() => startSiteOnce(kind, options));
}

async function startSiteOnce(kind: ProxyName, options: SiteOptions): Promise<Site> {
  const dataDir = await tempDir('gatehouse-doctor-');
  const trust = options.trustProxy === undefined ? '127.0.0.1' : options.trustProxy;
  const ports = { site: await freePort(), home: await freePort() };
  const publicUrl = options.publicUrl ?? 'home';
  // What Gatehouse takes for its own origin: requests straight to it name that host.
  const homeHost = publicUrl === 'home' ? `localhost:${ports.home}` : publicUrl === 'app' ? `127.0.0.1:${ports.site}` : '127.0.0.1';
  const gatehouse = await startServe([
    '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir,
    ...(trust === null ? [] : ['--trust-proxy', trust]),
    ...(options.baseUri === undefined ? [] : ['--base-uri', options.baseUri]),
    ...(publicUrl === 'none' ? [] : ['--public-url', `http://${homeHost}${options.baseUri ?? ''}`]),
    ...(options.gatehouseArgs ?? []),
  ]);
  const upstream = await startUpstream();
  // Closed with the site; stopAllProxies in a test file's after() does not know it.
  const webSocket = await startWebSocketServer();
  const rendered: Rendered = { options, homePort: ports.home, gatehousePort: gatehouse.port, appPort: upstream.port, webSocketPort: webSocket.port };
  const render = async (port: number, dir: string): Promise<string> => {
    await mkdir(join(dir, 'static'));
    await writeFile(join(dir, 'static', 'logo.png'), PNG_BYTES);
    return kind === 'nginx' ? nginxSite(rendered, port, dir) : caddySite(rendered, port, dir);
  };
  const globalOptions = options.mistake === 'tiny-max-header-size' ? '\tservers {\n\t\tmax_header_size 10B\n\t}' : '';
  let proxy: RunningProxy | undefined;
  let front: Awaited<ReturnType<typeof startTlsFront>> | undefined;
  const stop = async (): Promise<void> => {
    await front?.close();
    await proxy?.stop();
    await upstream.close();
    await webSocket.close();
    await gatehouse.stop();
  };
  const username = 'doctor user';
  const password = 'doctor-password-1';
  const homeName = homeHost === '127.0.0.1' ? `127.0.0.1:${gatehouse.port}` : homeHost;
  const home: HomeSite = { port: gatehouse.port, host: homeName, origin: `http://${homeName}` };
  let adminToken: string;
  try {
    const chosen = { port: ports.site, alsoListening: [ports.home] };
    proxy = kind === 'nginx' ? await startNginx(render, chosen) : await startCaddy(render, {}, globalOptions, chosen);
    front = options.tlsFront === true ? await startTlsFront(proxy.port) : undefined;
    // The first account (an administrator) straight at Gatehouse, on its own origin; the doctor signs in as a plain user.
    const base = options.baseUri ?? '';
    const admin = await viaHome(home, { method: 'POST', path: `${base}/api/auth/register`, body: { username: 'admin', password: 'admin-password-1', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
    assert.equal(admin.status, 200, admin.text);
    adminToken = admin.cookieToken ?? '';
    const user = await viaHome(home, { method: 'POST', path: `${base}/api/auth/register?cookie=false`, token: adminToken, body: { username, password, client: CLIENT_SETTINGS, level: 'USER' } });
    assert.equal(user.status, 200, user.text);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    kind,
    gatehouse,
    home,
    proxy,
    upstream,
    username,
    password,
    adminToken,
    origin: front === undefined ? proxy.origin : `https://app.test:${front.port}`,
    doctorArgs: front === undefined ? [] : ['--connect', `127.0.0.1:${front.port}`],
    doctorEnv: front === undefined ? {} : { NODE_EXTRA_CA_CERTS: front.certificateFile },
    stop,
  };
}

export interface DoctorRun {
  readonly code: number | null;
  readonly stdout: string;
  /** The checks reported other than ok (FAIL, WARN, skip). */
  readonly failed: Set<string>;
}

/**
 * `gatehouse doctor` against the site, signed in as its user unless `stdin` says otherwise. Every
 * check has its line, the report ends with the note on what the probe cannot see, and a site behind
 * one proxy is never given the other's advice.
 */
export async function runDoctor(site: Site, urls: readonly string[], extra: readonly string[] = [], stdin = `${site.username}\n${site.password}\n`): Promise<DoctorRun> {
  const result = await runCli(['doctor', ...urls, '--timeout', '10', ...site.doctorArgs, ...extra], { stdin, timeoutMs: 90_000, env: site.doctorEnv });
  const failed = new Set<string>();
  for (const line of result.stdout.split('\n')) {
    const match = /^(ok|FAIL|WARN|skip) +([A-Za-z -]+): /.exec(line);
    if (match !== null && match[1] !== 'ok') failed.add(match[2] ?? '');
  }
  const context = describeRun(result.stdout, site);
  for (const check of CHECKS) assert.match(result.stdout, new RegExp(`^(ok|FAIL|WARN|skip) +${check}: `, 'm'), `a line for ${check}:\n${context}`);
  assert.match(result.stdout, /\nNot seen: the probe shows only what reaches its own location\. .*\n$/, `the report ends with what the probe cannot see:\n${context}`);
  assert.doesNotMatch(result.stdout, site.kind === 'caddy' ? /nginx/i : /caddy/i, `no advice for the other proxy:\n${context}`);
  return { code: result.code, stdout: result.stdout, failed };
}

export function describeRun(stdout: string, site: Site): string {
  return `${stdout}\n--- ${site.proxy.kind} config\n${site.proxy.config}\n--- ${site.proxy.kind} output\n${site.proxy.output().slice(-2_000)}`;
}

/** Exactly `expected` did not pass (failed, warned or skipped), each FAIL saying what to fix, and the exit code says so. */
export function assertOnlyFailed(run: DoctorRun, expected: readonly Check[], site: Site): void {
  const context = describeRun(run.stdout, site);
  assert.deepEqual([...run.failed].sort(), [...new Set(expected)].sort(), context);
  assert.equal(run.code, expected.length === 0 ? 0 : 1, context);
  for (const check of expected) assert.match(run.stdout, new RegExp(`^((FAIL|WARN) +${check}: .*Fix: |skip +${check}: )`, 'm'), `${check} says what to fix:\n${context}`);
  assert.match(run.stdout, expected.length === 0 ? /^Every check passed\.$/m : /^\d+ of \d+ checks passed; /m, context);
}

/** The line the doctor printed for `check` (the first, for `behind the gate`), for exact assertions. */
export function lineOf(run: DoctorRun, check: Check): string {
  return new RegExp(`^(ok|FAIL|WARN|skip) +${check}: .*$`, 'm').exec(run.stdout)?.[0] ?? `(no line for ${check})`;
}

// ---- A WebSocket server (426 to a plain request, 101 to an upgrade) and a TLS front.

async function startWebSocketServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket', connection: 'Upgrade' });
    res.end('Upgrade Required');
  });
  server.on('upgrade', (req, socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // RFC 6455 section 4.2.2: the accept value proves the server read the key.
    const accept = createHash('sha1').update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

let certificate: Promise<{ key: string; cert: string; file: string }> | undefined;

/** A self-signed certificate for app.test, made once per process with openssl (the doctor trusts it through NODE_EXTRA_CA_CERTS). */
function appTestCertificate(): Promise<{ key: string; cert: string; file: string }> {
  certificate ??= (async () => {
    const dir = await tempDir('gatehouse-doctor-tls-');
    const key = join(dir, 'key.pem');
    const file = join(dir, 'cert.pem');
    await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', file, '-days', '2', '-subj', '/CN=app.test', '-addext', 'subjectAltName=DNS:app.test'], { timeout: 20_000 });
    return { key: await readFile(key, 'utf8'), cert: await readFile(file, 'utf8'), file };
  })();
  return certificate;
}

/** TLS ends here, before the proxy: each connection's bytes go on to the proxy's plain port, as a load balancer's would. */
async function startTlsFront(proxyPort: number): Promise<{ port: number; certificateFile: string; close(): Promise<void> }> {
  const { key, cert, file } = await appTestCertificate();
  const sockets = new Set<Socket>();
  const server: TlsServer = createTlsServer({ key, cert }, (socket) => {
    const onward = connect({ host: '127.0.0.1', port: proxyPort });
    for (const end of [socket, onward]) {
      sockets.add(end);
      end.on('error', () => undefined);
      end.once('close', () => sockets.delete(end));
    }
    socket.pipe(onward).pipe(socket);
    socket.once('close', () => onward.destroy());
    onward.once('close', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    certificateFile: file,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
