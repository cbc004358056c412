// Real reverse proxies for the proxies suite: nginx and Caddy started as our own foreground
// processes with the recipes from deploy/ (only ports, paths and the Flood token replaced), and a
// small upstream app that echoes what it received. Every wait is bounded; stopAll() ends every
// process started here and removes every temp dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, REPO_ROOT, runCli, startServe, type ServeProcess } from './process.js';

export const NGINX_PATH = process.env['NGINX_PATH'] ?? '/usr/sbin/nginx';
export const CADDY_PATH = process.env['CADDY_PATH'] ?? '/usr/bin/caddy';

/** The addresses the recipes are written with, replaced by the test's ports. */
export const RECIPE_GATEHOUSE = '127.0.0.1:3000';
export const RECIPE_FLOOD = '127.0.0.1:3001';
export const RECIPE_APP = '127.0.0.1:8080';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

export type ProxyKind = 'nginx' | 'caddy';
export const PROXY_KINDS: readonly ProxyKind[] = ['nginx', 'caddy'];

export interface RunningProxy {
  readonly kind: ProxyKind;
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** The configuration as run, for failure messages. */
  readonly config: string;
  output(): string;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
const upstreams = new Set<Upstream>();
const tempDirs: string[] = [];

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * The recipe file with each `from` replaced by its `to`. Every `from` must occur: a recipe that
 * drifted from what the test replaces fails loudly instead of running half-templated.
 */
export function renderRecipe(relativePath: string, replacements: ReadonlyArray<readonly [string, string]>, source?: string): string {
  let text = source ?? readFileSync(join(REPO_ROOT, relativePath), 'utf8');
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`${relativePath} no longer contains ${JSON.stringify(from)}: update the test's templating`);
    text = text.split(from).join(to);
  }
  return text;
}

/** A proxy that could not listen because another process took its port meanwhile (the machine is shared). */
export class PortTaken extends Error {}

/** Throws PortTaken unless each port can be listened on now: chosen earlier, it may have been taken since. */
async function assertPortsFree(ports: readonly number[]): Promise<void> {
  for (const port of ports) {
    const isFree = await new Promise<boolean>((resolve) => {
      const probe = createNetServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (!isFree) throw new PortTaken(`127.0.0.1:${port} was taken by another process after it was chosen`);
  }
}

/**
 * Resolves once 127.0.0.1:port accepts a connection; rejects after the deadline or when the process
 * exits (with everything it said: `exited` waits for its output to end), PortTaken when it says why.
 */
async function waitForPort(port: number, child: ChildProcess, exited: Promise<void>, output: () => string, name: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await exited;
      const said = output();
      const message = `${name} exited (${child.exitCode ?? child.signalCode}) before listening:\n${said}`;
      throw /address already in use/i.test(said) ? new PortTaken(message) : new Error(message);
    }
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (isOpen) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${name} did not listen on 127.0.0.1:${port} within ${START_TIMEOUT_MS} ms:\n${output()}`);
}

function startProcess(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exited: Promise<void> } {
  if (!existsSync(command)) throw new Error(`${command} is missing: install the Debian package ${name} (the proxies suite needs it; CI installs it)`);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.add(child);
  let text = '';
  const append = (chunk: string): void => {
    text = (text + chunk).slice(-20_000);
  };
  child.stdout?.setEncoding('utf8').on('data', append);
  child.stderr?.setEncoding('utf8').on('data', append);
  child.once('error', (error) => append(`spawn error: ${error.message}\n`));
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => {
      children.delete(child);
      resolve();
    });
    child.once('error', () => {
      children.delete(child);
      resolve();
    });
  });
  return { child, output: () => text, exited };
}

async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

export interface ChosenPorts {
  /** The port the proxy is started on (a free one when absent): `RunningProxy.port`. */
  readonly port?: number;
  /** Other ports the rendered site listens on, waited for too. */
  readonly alsoListening?: readonly number[];
}

/** Renders the site configuration for a proxy on `port`, writing any file it includes into `dir`. */
export type RenderSite = (port: number, dir: string) => string | Promise<string>;

/**
 * nginx in the foreground on a free port (or `ports.port`), with a main configuration of ours (pid, logs and temp
 * paths in a temp dir) around the rendered recipe (upstreams and server blocks).
 */
export async function startNginx(renderSite: RenderSite, ports: ChosenPorts = {}): Promise<RunningProxy> {
  await assertPortsFree([...(ports.port === undefined ? [] : [ports.port]), ...(ports.alsoListening ?? [])]);
  const dir = await tempDir('gatehouse-nginx-');
  const port = ports.port ?? await freePort();
  const site = await renderSite(port, dir);
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(join(dir, sub));
  // As root the workers would become `nobody` and could not use the temp dir (0700, root's).
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  const config = `${user}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
    access_log ${dir}/access.log;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/site.conf;
}
`;
  await writeFile(join(dir, 'site.conf'), site);
  await writeFile(join(dir, 'nginx.conf'), config);
  const { child, output, exited } = startProcess('nginx', NGINX_PATH, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { PATH: process.env['PATH'] ?? '/usr/bin:/bin' });
  const fullOutput = (): string => `${output()}${readIfExists(join(dir, 'error.log'))}`;
  try {
    for (const each of [port, ...(ports.alsoListening ?? [])]) await waitForPort(each, child, exited, fullOutput, 'nginx');
  } catch (error) {
    await stopProcess(child, exited);
    throw error;
  }
  return { kind: 'nginx', port, origin: `http://127.0.0.1:${port}`, config: site, output: fullOutput, stop: () => stopProcess(child, exited) };
}

/**
 * Caddy in the foreground on a free port (or `ports.port`): our global options (admin off, no automatic HTTPS, storage
 * in a temp dir, and `globalOptions` if given) and the rendered recipe.
 */
export async function startCaddy(renderSite: RenderSite, env: Readonly<Record<string, string>> = {}, globalOptions = '', ports: ChosenPorts = {}): Promise<RunningProxy> {
  await assertPortsFree([...(ports.port === undefined ? [] : [ports.port]), ...(ports.alsoListening ?? [])]);
  const dir = await tempDir('gatehouse-caddy-');
  const port = ports.port ?? await freePort();
  const site = await renderSite(port, dir);
  const config = `{
	admin off
	auto_https off
	storage file_system ${dir}/data
${globalOptions}
}

${site}`;
  await writeFile(join(dir, 'Caddyfile'), config);
  const { child, output, exited } = startProcess('caddy', CADDY_PATH, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'xdg-data'),
    XDG_CONFIG_HOME: join(dir, 'xdg-config'),
    ...env,
  });
  try {
    for (const each of [port, ...(ports.alsoListening ?? [])]) await waitForPort(each, child, exited, output, 'caddy');
  } catch (error) {
    await stopProcess(child, exited);
    throw error;
  }
  return { kind: 'caddy', port, origin: `http://127.0.0.1:${port}`, config: site, output, stop: () => stopProcess(child, exited) };
}

function readIfExists(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

// ---- The upstream app: echoes every request, streams events, and remembers what it saw.

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Upstream {
  readonly port: number;
  /** Every request received, in order. */
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * Set-Cookie lines an app could send to plant a session under another spelling of `jwt`: each one
 * a browser would send back as a pair Gatehouse reads as `jwt` (SP/HTAB around the name, and a
 * nameless cookie, which browsers send back as its bare value `jwt=…`).
 */
export const ODD_JWT_SET_COOKIES: readonly string[] = ['jwt =sp-after; Path=/', ' jwt=sp-before; Path=/', '\tjwt\t=tabs; Path=/', '=jwt=nameless; Path=/'];
/** A Set-Cookie line whose name starts with U+00A0: not `jwt` to a browser or to Gatehouse. */
export const NBSP_JWT_SET_COOKIE = '\u00a0jwt=nbsp; Path=/';

/** The path of the event stream, as Flood names it. */
export const EVENT_STREAM_PATH = '/api/activity-stream';
export const EVENT_INTERVAL_MS = 100;

/**
 * Flood 4.14.3's check with --auth none, as observed: a `jwt` cookie that is an HS256 token
 * signed with the bytes of Flood's secret file, with a string `username` and an `exp` to come.
 */
function isFloodCookieValid(cookieHeader: string | undefined, secret: string): boolean {
  const token = /(?:^|;\s*)jwt=([^;]*)/.exec(cookieHeader ?? '')?.[1];
  const parts = token?.split('.');
  if (parts === undefined || parts.length !== 3) return false;
  const [header = '', payload = '', signature = ''] = parts;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { username?: unknown; exp?: unknown };
    return typeof claims.username === 'string' && typeof claims.exp === 'number' && claims.exp * 1000 > Date.now();
  } catch {
    return false;
  }
}

/**
 * A node:http app standing in for Flood or any app:
 * - with `floodSecret`, every `/api/` request without a `jwt` cookie Flood would accept gets
 *   Flood's 401 `{"code":"FLOOD_UNAUTHORIZED"}`, as Flood with --auth none answers;
 * - `/api/activity-stream`: server-sent events, one every 100 ms, until the client goes;
 * - `/api/set-cookie`: answers with `Set-Cookie: jwt=from-upstream` (what Flood's verify does in none mode)
 *   and a cookie of the app's own, `app=kept`;
 * - `/api/set-odd-cookies`: ODD_JWT_SET_COOKIES and `app=kept`;
 * - `/csp-violation`: an HTML page whose own CSP blocks its inline script (the browser tests' control);
 * - `/cacheable`: as anything else, with the app's own `Cache-Control: public, max-age=3600`;
 * - anything else: 200 JSON `{method, url, headers, bodyBytes, bodySha256}` as received.
 */
export async function startUpstream(options: { floodSecret?: string } = {}): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const streams = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => answer(req, res, Buffer.concat(chunks)));
  });
  const answer = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (options.floodSecret !== undefined && path.startsWith('/api/') && !isFloodCookieValid(req.headers.cookie, options.floodSecret)) {
      res.writeHead(401, { 'content-type': 'application/json; charset=utf-8' });
      res.end('{"code":"FLOOD_UNAUTHORIZED","message":"Unauthorized"}');
      return;
    }
    if (path === EVENT_STREAM_PATH) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams.add(res);
      let count = 0;
      const timer = setInterval(() => res.write(`id: ${++count}\ndata: {"n":${count}}\n\n`), EVENT_INTERVAL_MS);
      res.once('close', () => {
        clearInterval(timer);
        streams.delete(res);
      });
      return;
    }
    if (path === '/csp-violation') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'" });
      res.end('<!doctype html><title>control</title><p id="control">control</p><script>document.title = "ran"</script>');
      return;
    }
    const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
    if (path === '/api/set-cookie') headers['set-cookie'] = ['jwt=from-upstream; Path=/', 'app=kept; Path=/'];
    if (path === '/api/set-odd-cookies') headers['set-cookie'] = [...ODD_JWT_SET_COOKIES, 'app=kept; Path=/'];
    if (path === '/cacheable') headers['cache-control'] = 'public, max-age=3600';
    res.writeHead(200, headers);
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, bodyBytes: body.length, bodySha256: createHash('sha256').update(body).digest('hex') }));
  };
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  let closing: Promise<void> | undefined;
  const upstream: Upstream = {
    port,
    seen,
    close() {
      closing ??= new Promise<void>((resolve) => {
        upstreams.delete(upstream);
        for (const stream of streams) stream.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
  upstreams.add(upstream);
  return upstream;
}

/** Ends every proxy still running (SIGTERM, then SIGKILL), closes every upstream and removes the temp dirs. */
export async function stopAllProxies(): Promise<void> {
  await Promise.all([...upstreams].map((upstream) => upstream.close()));
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          child.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  children.clear();
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

// ---- A whole stack: Gatehouse (built, as a process) + the upstream + one proxy running a recipe:
// an app's site (or Flood's) and Gatehouse's own site beside it, on two ports of the same proxy.

export type RecipeName = 'flood' | 'app';

/** The addresses the second app of deploy/nginx/apps.conf and deploy/caddy/apps.Caddyfile is written with. */
export const RECIPE_SECOND_APP = '127.0.0.1:8081';
/** The host name of the second app: requests to it carry this Host. */
export const SECOND_APP_HOST = 'photos.example.com';
/** The host name of Gatehouse's own site in the recipes (its --public-url there). */
export const RECIPE_HOME_HOST = 'auth.example.com';

// The shared part of each proxy, copied beside the rendered site as docs/deploy.md installs it.
const NGINX_SHARED = ['conf.d/gatehouse.conf', 'gatehouse/site.conf', 'gatehouse/protect.conf', 'gatehouse/check.conf', 'gatehouse/to-gatehouse.conf'];
const CADDY_SHARED = 'deploy/caddy/gatehouse.caddy';
/** Gatehouse's own site for nginx, a file of its own beside the apps' (deploy/nginx/auth.conf). */
const NGINX_HOME_SITE = 'deploy/nginx/auth.conf';

const RECIPE_FILES: Readonly<Record<ProxyKind, Readonly<Record<RecipeName, string>>>> = {
  nginx: { flood: 'deploy/nginx/flood.conf', app: 'deploy/nginx/apps.conf' },
  caddy: { flood: 'deploy/caddy/flood.Caddyfile', app: 'deploy/caddy/apps.Caddyfile' },
};

interface RecipePorts {
  readonly gatehouse: number;
  readonly upstream: number;
  readonly second: number;
  /** Gatehouse's own site. */
  readonly home: number;
}

/**
 * The recipe for `kind` as the test runs it, with the shared files beside it: only addresses,
 * ports, the token file path and the shared files' location differ from deploy/. Gatehouse's own
 * site listens on `ports.home`, the apps' (or Flood's) on the proxy's port.
 */
function recipeRenderer(kind: ProxyKind, recipe: RecipeName, ports: RecipePorts, floodToken: string, siteText?: string): RenderSite {
  const file = RECIPE_FILES[kind][recipe];
  // Per-app lines of a test's own, written as docs/deploy.md writes them, on the same shared part.
  const hasSecondApp = siteText === undefined || siteText.includes(RECIPE_SECOND_APP);
  const upstreamAddress = recipe === 'flood' ? RECIPE_FLOOD : RECIPE_APP;
  const gatehouse = `127.0.0.1:${ports.gatehouse}`;
  if (kind === 'nginx') {
    return async (port, dir) => {
      for (const shared of NGINX_SHARED) {
        await mkdir(join(dir, shared, '..'), { recursive: true });
        const text = shared === 'conf.d/gatehouse.conf' ? renderRecipe(`deploy/nginx/${shared}`, [[`server ${RECIPE_GATEHOUSE};`, `server ${gatehouse};`]]) : renderRecipe(`deploy/nginx/${shared}`, []);
        await writeFile(join(dir, shared), text);
      }
      const replacements: Array<[string, string]> = [
        ['listen 80;', `listen 127.0.0.1:${port};`],
        [`http://${upstreamAddress};`, `http://127.0.0.1:${ports.upstream};`],
      ];
      // The recipe's catch-all server, last, refuses every name but the apps': the tests send
      // 127.0.0.1 and other names to the apps' port, so here it is not the default and the first
      // app's server answers them (test/suites/proxies/foreign-host.test.ts runs it as the default).
      const siteSource = siteText ?? readFileSync(join(REPO_ROOT, file), 'utf8');
      if (siteSource.includes('listen 80 default_server;')) replacements.push(['listen 80 default_server;', `listen 127.0.0.1:${port};`]);
      if (recipe === 'flood') {
        const tokenFile = join(dir, 'flood-token.conf');
        await writeFile(tokenFile, `set $flood_token "${floodToken}";\n`, { mode: 0o600 });
        replacements.push(['/etc/nginx/flood-token.conf', tokenFile]);
      } else if (hasSecondApp) {
        replacements.push([`http://${RECIPE_SECOND_APP};`, `http://127.0.0.1:${ports.second};`]);
      }
      // The http-level file as Debian's nginx.conf includes conf.d/*.conf; Gatehouse's site, then the apps'.
      const home = renderRecipe(NGINX_HOME_SITE, [['listen 80;', `listen 127.0.0.1:${ports.home};`]]);
      return `include conf.d/gatehouse.conf;\n${home}\n${renderRecipe(siteText === undefined ? file : 'the test\'s site', replacements, siteText)}`;
    };
  }
  return async (port, dir) => {
    // Unchanged: Caddy finds Gatehouse through GATEHOUSE_UPSTREAM, as docs/deploy.md says (startStack).
    await writeFile(join(dir, 'gatehouse.caddy'), renderRecipe(CADDY_SHARED, []));
    const replacements: Array<[string, string]> = [
      ['import /etc/caddy/gatehouse.caddy', `import ${join(dir, 'gatehouse.caddy')}`],
      // Any host name (the tests use 127.0.0.1, localhost and example.com names), on loopback only.
      [`${RECIPE_HOME_HOST} {`, `http://:${ports.home} {\n\tbind 127.0.0.1`],
      [`${recipe === 'flood' ? 'flood' : 'app'}.example.com {`, `http://:${port} {\n\tbind 127.0.0.1`],
      [upstreamAddress, `127.0.0.1:${ports.upstream}`],
    ];
    if (recipe === 'app' && hasSecondApp) {
      replacements.push([`${SECOND_APP_HOST} {`, `http://${SECOND_APP_HOST}:${port} {\n\tbind 127.0.0.1`], [RECIPE_SECOND_APP, `127.0.0.1:${ports.second}`]);
    }
    return renderRecipe(siteText === undefined ? file : 'the test\'s site', replacements, siteText);
  };
}

/** Gatehouse's own site on the stack's proxy: where its account and administration API answers. */
export interface HomeSite {
  readonly port: number;
  /** What a client sends as Host there: `127.0.0.1:PORT`, or `localhost:PORT` under --public-url. */
  readonly host: string;
  /** `http://` and `host`. */
  readonly origin: string;
}

export interface Stack {
  /** For the Flood recipe: what `gatehouse flood-token` printed for the stand-in Flood's secret (else ''). */
  readonly floodToken: string;
  readonly gatehouse: ServeProcess;
  readonly upstream: Upstream;
  /** The second app of the app recipe (photos.example.com, group family); for Flood, unused. */
  readonly secondUpstream: Upstream;
  /** The apps' site (or Flood's): `proxy.port`. */
  readonly proxy: RunningProxy;
  readonly home: HomeSite;
  /** Everything the three processes said, for assertion messages. */
  describe(): string;
  stop(): Promise<void>;
}

/** The proxy's two ports, known before Gatehouse starts (for flags that name them). */
export interface StackPorts {
  /** The apps' site (or Flood's). */
  readonly site: number;
  /** Gatehouse's own site. */
  readonly home: number;
}

export interface StackOptions {
  readonly proxy: ProxyKind;
  readonly recipe: RecipeName;
  /** Extra `gatehouse serve` flags, or a function of the proxy's ports giving them. */
  readonly gatehouseArgs?: readonly string[] | ((ports: StackPorts) => readonly string[]);
  /**
   * Gatehouse runs with `--public-url http://localhost:HOME` (its own site, as the recipes have
   * it), so `127.0.0.1` and every other name are apps' origins. Without it (the default) every
   * loopback origin is Gatehouse's own, as on a fresh install.
   */
  readonly publicUrl?: boolean;
  /**
   * For the app recipe: per-app lines of the test's own in place of deploy/'s apps file, written
   * with the same addresses (app.example.com, 127.0.0.1:8080), on the same shared part.
   */
  readonly siteText?: Readonly<Record<ProxyKind, string>>;
}

/**
 * Starts Gatehouse (loopback, free port, fresh data dir, --trust-proxy 127.0.0.1), the upstream,
 * then the proxy with the recipe: the apps' site on one port, Gatehouse's own on another. The
 * ports are chosen before Gatehouse starts (its flags may name them), so another process may take
 * one meanwhile: then everything starts again on new ones, at most three times.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  return withFreshPorts(() => startStackOnce(options));
}

/** Runs `start` again while it fails with PortTaken, at most `attempts` times in all. */
export async function withFreshPorts<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= attempts) throw error;
    }
  }
}

async function startStackOnce(options: StackOptions): Promise<Stack> {
  const dataDir = await tempDir('gatehouse-stack-');
  const ports: StackPorts = { site: await freePort(), home: await freePort() };
  const homeHost = `${options.publicUrl === true ? 'localhost' : '127.0.0.1'}:${ports.home}`;
  const extraArgs = typeof options.gatehouseArgs === 'function' ? options.gatehouseArgs(ports) : options.gatehouseArgs ?? [];
  const gatehouse = await startServe([
    '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--trust-proxy', '127.0.0.1',
    ...(options.publicUrl === true ? ['--public-url', `http://${homeHost}`] : []),
    ...extraArgs,
  ]);
  let floodToken = '';
  let floodSecret: string | undefined;
  if (options.recipe === 'flood') {
    // Flood writes <rundir>/flood.secret itself; the token comes from the real command, as an operator makes it.
    floodSecret = randomBytes(36).toString('hex');
    const secretFile = join(dataDir, 'flood.secret');
    await writeFile(secretFile, floodSecret, { mode: 0o600 });
    const minted = await runCli(['flood-token', '--secret-file', secretFile]);
    if (minted.code !== 0) throw new Error(`gatehouse flood-token failed (${minted.code}): ${minted.stderr}`);
    floodToken = minted.stdout.trim();
  }
  const upstream = await startUpstream(floodSecret === undefined ? {} : { floodSecret });
  const secondUpstream = await startUpstream();
  const render = recipeRenderer(options.proxy, options.recipe, { gatehouse: gatehouse.port, upstream: upstream.port, second: secondUpstream.port, home: ports.home }, floodToken, options.siteText?.[options.proxy]);
  let proxy: RunningProxy;
  try {
    proxy = options.proxy === 'nginx'
      ? await startNginx(render, { port: ports.site, alsoListening: [ports.home] })
      : await startCaddy(render, { FLOOD_TOKEN: floodToken, GATEHOUSE_UPSTREAM: `127.0.0.1:${gatehouse.port}` }, '', { port: ports.site, alsoListening: [ports.home] });
  } catch (error) {
    await upstream.close();
    await secondUpstream.close();
    await gatehouse.stop();
    throw error;
  }
  return {
    floodToken,
    gatehouse,
    upstream,
    secondUpstream,
    proxy,
    home: { port: ports.home, host: homeHost, origin: `http://${homeHost}` },
    describe: () => `--- ${proxy.kind} output\n${proxy.output()}\n--- gatehouse stderr\n${gatehouse.stderr()}`,
    async stop() {
      await proxy.stop();
      await upstream.close();
      await secondUpstream.close();
      await gatehouse.stop();
    },
  };
}
