#!/usr/bin/env node
// Gatehouse benchmark (`npm run bench` builds first, then runs this). Plain ESM, node: modules only.
//
// Starts the built service (a snapshot of dist/ taken at the start) on temporary data directories,
// two references: the bare node:http server of scripts/bench/bare-server.mjs (a fixed 75-byte JSON
// body, content-type and content-length only: what anyone would write first) and a node:http
// "same bytes" server (the "ceiling") returning a same-sized JSON body with the same headers, both
// sent verify's request (the session cookie included); and a load generator: wrk when installed (one
// thread, a Lua script for cookies and POST bodies), otherwise a node:http load generator (this
// file run as a child). With taskset the services, the
// ceiling and the scrypt-alone measurement run on CPU 0 and the load generators (and this script)
// on CPU 1.
//
// Ratios are only as good as the two numbers in them, and other work may share the machine. So
// the numbers that are compared are measured interleaved: the ceiling and the verify variants run
// in many short rounds against services that are all up at once (each round in the opposite order
// to the one before, so neither side is always first), and a ratio between interleaved rows is the
// median of the per-round ratios: a burst of outside load spoils a round or two, not the figure.
// The scrypt-alone measurement is split around the login run, and the verify-alone baseline for
// the login storm is measured just before and after the storm. A scenario's req/s is its total
// requests over its total measured time; p50/p99 come from merging each segment's 1000-point
// latency quantile grid, weighted by requests.
//
// CPU per request: around every measured segment the script reads utime + stime of the server's
// process (every thread, kernel time included) from /proc/PID/stat; the pid is node itself
// (taskset execs it; checked through /proc/PID/comm). The ticks are 10 ms (CLK_TCK 100), so a
// segment of 1 s at tens of thousands of requests reads to about 1%. The CPU targets compare a
// row with the bare server, round by round: bare µs / row µs, median over the rounds. CPU time
// per request moves far less than req/s when other work shares the core (the server waits less,
// not more, per request), though a loaded core still makes every request dearer (caches).
//
// Users: the 10- and 10,000-user data directories get a users.json written before the service
// starts (mode 0600 in a 0700 directory); every user has the same password hash, computed once
// here with the service's own scrypt cost and format. No user is registered one by one.
//
// The service runs with the login throttle raised (GATEHOUSE_THROTTLE_USER/ADDRESS=1000000):
// the wrong-password scenario would otherwise measure cheap 429s after 50 failures per address.
//
// Every child is tracked; they are stopped in a finally block, and killed from
// process.on('exit') and on SIGINT/SIGTERM/SIGHUP if the run is interrupted.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, scrypt } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CLOCK_TICKS_PER_SECOND, commandOf, cpuMicrosPerRequest, cpuTicksOf } from './bench/cpu-time.mjs';
import { BENCH_ISSUER, runSignCost, setUpOidc } from './bench/oidc.mjs';

const SELF = fileURLToPath(import.meta.url);
const ROOT = join(dirname(SELF), '..');
const BUILT_CLI = join(ROOT, 'dist', 'cli.js');
// The service runs from a snapshot of dist/ taken at the start of the run, so a rebuild
// elsewhere during the run cannot change what is measured halfway through.
let CLI = BUILT_CLI;
const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' };
const ADMIN = 'admin';
const PASSWORD = 'bench-password-1';
const THROTTLE_OFF = '1000000';
const QUANTILES = 1000; // latency grid points per segment: q = i / 1000, i = 1..1000 (the last is the max)
// Settings a caller may pass through to the service (to bench another cost); all other GATEHOUSE_* are dropped.
const PASS_THROUGH = new Set(['GATEHOUSE_SCRYPT', 'GATEHOUSE_HASH_CONCURRENCY', 'GATEHOUSE_HASH_QUEUE']);

const HELP = `Usage: node scripts/bench.mjs [options]      (npm run bench builds first)

  --quick               smoke run: two rounds, 1 s warm-up + 2 s per scenario
  --duration S          measured seconds per scenario that is not interleaved (default 4; the
                        correct-password login runs twice that, rows only the status check
                        reads at most 3 s)
  --rounds N            rounds for interleaved scenarios (default 9; --quick 2)
  --segment S           seconds per scenario per round (default 1; whole seconds with wrk)
  --warmup S            warm-up seconds before a scenario's first segment (default 1)
  --loadgen wrk|node    load generator (default: wrk when installed, else node:http)
  --users N             users in the large data set (default 10000)
  --server-cpus LIST    taskset CPU list for services, ceiling and scrypt-alone (default 0)
  --loadgen-cpus LIST   taskset CPU list for load generators and this script (default 1)
  --strict              exit 1 when a target fails
  --oidc                only the OpenID Connect rows: userinfo and the token endpoint (code
                        exchange, RS256 and ES256), interleaved with the bare server, and the
                        signing cost of one id_token alone
  --profile             instead of the benchmark: run the bare node:http server and the
                        10,000-user service under --cpu-prof, each under wrk load (verify with a
                        cookie for the service, 16 connections), and summarise both profiles over
                        the measured window only, in µs per request, with the difference by group
  --profile-dir DIR     where --profile writes the .cpuprofile (default /tmp/prof)
  --profile-log-level L log level for --profile (default info)
  --profile-request R   what --profile loads the service with: verify (default), verify-token,
                        forward, forward-token, 401, 403 or 404 (the rows of the same names)
  --help
`;

const { values: opts } = parseArgs({
  options: {
    role: { type: 'string' },
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    segment: { type: 'string' },
    warmup: { type: 'string' },
    loadgen: { type: 'string' },
    users: { type: 'string', default: '10000' },
    'server-cpus': { type: 'string', default: '0' },
    'loadgen-cpus': { type: 'string', default: '1' },
    strict: { type: 'boolean', default: false },
    oidc: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'profile-dir': { type: 'string', default: '/tmp/prof' },
    'profile-log-level': { type: 'string', default: 'info' },
    'profile-request': { type: 'string', default: 'verify' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

// ---------------------------------------------------------------------------------------------
// Child roles: this file also runs as the ceiling server, the node:http load generator and the
// scrypt-alone measurement, so that the benchmark is one file.
// ---------------------------------------------------------------------------------------------

/**
 * The same-bytes server: one pre-built JSON body of BENCH_BODY_BYTES bytes, the service's common
 * headers, sent as a string as the service sends its answers.
 */
function runCeiling() {
  const size = Number(process.env.BENCH_BODY_BYTES);
  const body = JSON.stringify({ pad: 'x'.repeat(Math.max(0, size - 10)) });
  const bytes = Buffer.byteLength(body);
  const server = http.createServer((req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'content-length': bytes,
    });
    res.end(body);
  });
  server.keepAliveTimeout = 5000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, bytes })}\n`));
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}

function quantileGrid(sorted) {
  const grid = [];
  for (let i = 1; i <= QUANTILES; i++) grid.push(sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((i / QUANTILES) * sorted.length) - 1)]);
  return grid;
}

/**
 * node:http load generator. Spec in BENCH_SPEC: url, conns, warmupMs, durationMs, method, headers,
 * body (may contain {seq}), seqMod, timeoutMs. Each connection runs requests back to back over a
 * keep-alive agent. Completions that finish inside the measured window are counted; their latency
 * (request start to response end) is recorded. Prints one BENCH_RESULT JSON line and exits without
 * waiting for requests still in flight.
 */
async function runLoadgen() {
  const spec = JSON.parse(process.env.BENCH_SPEC ?? '{}');
  const url = new URL(spec.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.conns, maxFreeSockets: spec.conns, scheduling: 'fifo' });
  // A file of request bodies, one per line, each sent once in turn (the token rows' single-use codes).
  const bodies = typeof spec.bodiesFile === 'string' ? readFileSync(spec.bodiesFile, 'utf8').split('\n').filter((line) => line !== '') : undefined;
  const dynamic = bodies !== undefined || (typeof spec.body === 'string' && spec.body.includes('{seq}'));
  const staticBody = typeof spec.body === 'string' && !dynamic ? Buffer.from(spec.body) : undefined;
  const baseHeaders = { ...spec.headers };
  if ((spec.body !== undefined || bodies !== undefined) && !Object.keys(baseHeaders).some((name) => name.toLowerCase() === 'content-type')) {
    baseHeaders['content-type'] = 'application/json';
  }
  if (staticBody !== undefined) baseHeaders['content-length'] = String(staticBody.length);
  const path = `${url.pathname}${url.search}`;
  let seq = 0;
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  const startedAt = performance.now();
  const measureFrom = startedAt + spec.warmupMs;
  const measureTo = measureFrom + spec.durationMs;

  const once = () =>
    new Promise((resolve) => {
      let body = staticBody;
      let headers = baseHeaders;
      if (dynamic) {
        seq++;
        const n = spec.seqMod > 0 ? ((seq - 1) % spec.seqMod) + 1 : seq;
        body = Buffer.from(bodies === undefined ? spec.body.replaceAll('{seq}', String(n)) : bodies[(seq - 1) % bodies.length]);
        headers = { ...baseHeaders, 'content-length': String(body.length) };
      }
      const req = http.request({ agent, host: url.hostname, port: url.port, method: spec.method, path, headers, timeout: spec.timeoutMs }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode));
        res.on('error', () => resolve(-1));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(-1));
      req.end(body);
    });

  const lane = async () => {
    while (performance.now() < measureTo) {
      const t0 = performance.now();
      const status = await once();
      const t1 = performance.now();
      if (t0 >= measureFrom && t1 <= measureTo) {
        if (status < 0) errors++;
        else {
          latencies.push(t1 - t0);
          if (status > 399) non2xx++;
        }
      }
    }
  };
  const lanes = Array.from({ length: spec.conns }, lane);
  // Report at the end of the window; do not wait for slow requests (logins) still queued.
  await Promise.race([Promise.all(lanes), new Promise((resolve) => setTimeout(resolve, measureTo - performance.now() + 5))]);
  const sorted = Float64Array.from(latencies).sort();
  process.stdout.write(
    `BENCH_RESULT ${JSON.stringify({ requests: sorted.length, seconds: spec.durationMs / 1000, quantilesMs: quantileGrid(sorted), non2xx, errors })}\n`,
    () => process.exit(0),
  );
}

/** crypto.scrypt alone at the service's cost and maxmem, `concurrency` lanes, for durationMs. */
async function runScryptAlone() {
  const spec = JSON.parse(process.env.BENCH_SPEC ?? '{}');
  const options = { N: spec.N, r: spec.r, p: spec.p, maxmem: spec.maxmem };
  const salt = randomBytes(16);
  const hash = () => new Promise((resolve, reject) => scrypt('correct horse battery staple', salt, 32, options, (e, k) => (e ? reject(e) : resolve(k))));
  await hash(); // warm-up, not counted
  let count = 0;
  const start = performance.now();
  const end = start + spec.durationMs;
  const lane = async () => {
    while (performance.now() < end) {
      await hash();
      count++;
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, lane));
  const seconds = (performance.now() - start) / 1000;
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ hashes: count, seconds })}\n`);
}

// ---------------------------------------------------------------------------------------------
// Orchestrator: processes
// ---------------------------------------------------------------------------------------------

/** Every child process we started and has not exited yet. */
const children = new Set();
let tempRoot;

function killEverything() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  if (tempRoot !== undefined) {
    try {
      rmSync(tempRoot, { recursive: true, force: true });
    } catch {
      // best effort
    }
    tempRoot = undefined;
  }
}

function installCleanup() {
  process.on('exit', killEverything);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping every child process\n`);
      killEverything();
      process.exit(130);
    });
  }
}

let pinning = { enabled: false, server: '0', loadgen: '1' };

function spawnTracked(cpus, command, args, options) {
  const [file, argv] = pinning.enabled && cpus !== undefined ? ['taskset', ['-c', cpus, command, ...args]] : [command, args];
  const child = spawn(file, argv, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', () => children.delete(child));
  return child;
}

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, then SIGKILL after graceMs; resolves to true when SIGKILL was needed. */
async function stopChild(child, graceMs = 4000) {
  if (child.exitCode !== null || child.signalCode !== null) return false;
  child.kill('SIGTERM');
  const timer = new Promise((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
  if ((await Promise.race([exited(child).then(() => 'exited'), timer])) === 'timeout') {
    child.kill('SIGKILL');
    await exited(child);
    return true;
  }
  return false;
}

/** Runs a child to completion, collecting stdout; rejects on a non-zero exit. */
function runChild(cpus, command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(cpus, command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code ?? signal}: ${err.slice(-2000)}`))));
  });
}

function resultLine(out, prefix) {
  const line = out.split('\n').find((l) => l.startsWith(`${prefix} `));
  if (line === undefined) throw new Error(`no ${prefix} line in:\n${out.slice(-2000)}`);
  return JSON.parse(line.slice(prefix.length + 1));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** One HTTP request on a fresh connection. */
function fetchOnce(url, { method = 'GET', headers = {}, body, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request(url, {
      method,
      agent: false,
      timeout: timeoutMs,
      headers: payload === undefined ? headers : { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
    });
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout ${method} ${url}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** VmHWM (peak resident set) and VmRSS from /proc/PID/status, in MiB; undefined off Linux. */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return { hwmMiB: kib('VmHWM') / 1024, rssMiB: kib('VmRSS') / 1024 };
  } catch {
    return undefined;
  }
}

function scryptMaxmem({ N, r, p }) {
  return 128 * r * (N + 2) + 128 * r * p + 1024 * 1024; // as src/auth/password.ts deriveKey
}

/** The same $scrypt$ln=..,r=..,p=..$salt$key format as src/auth/password.ts hashPassword. */
async function hashLikeService(password, cost) {
  const salt = randomBytes(16);
  const key = await new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, 32, { N: cost.N, r: cost.r, p: cost.p, maxmem: scryptMaxmem(cost) }, (e, k) => (e ? reject(e) : resolve(k))),
  );
  return `$scrypt$ln=${Math.log2(cost.N)},r=${cost.r},p=${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** A 0700 data directory; with users, a users.json (0600): "admin" (level 10) and u1..u(n-1) (level 5). */
function makeDataDir(path, userCount, passwordHash) {
  mkdirSync(path, { mode: 0o700 });
  chmodSync(path, 0o700);
  if (userCount === 0) return;
  const lines = [];
  const client = JSON.stringify(CLIENT);
  for (let i = 0; i < userCount; i++) {
    const username = i === 0 ? ADMIN : `u${i}`;
    lines.push(`{"username":${JSON.stringify(username)},"level":${i === 0 ? 10 : 5},"passwordHash":${JSON.stringify(passwordHash)},"client":${client},"credentialsChangedAt":0,"sessionKey":"${randomBytes(16).toString('base64url')}"}`);
  }
  writeFileSync(join(path, 'users.json'), `{"format":1,"users":[\n${lines.join(',\n')}\n]}\n`, { mode: 0o600 });
}

function serviceEnv(extra) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GATEHOUSE_') || PASS_THROUGH.has(name)) env[name] = value;
  return {
    ...env,
    GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_THROTTLE_USER: THROTTLE_OFF,
    GATEHOUSE_THROTTLE_ADDRESS: THROTTLE_OFF,
    // Every load generator connection is one address: lift the fair hash queue's per-address caps too.
    GATEHOUSE_HASH_QUEUE_PER_CLIENT: THROTTLE_OFF,
    GATEHOUSE_HASH_QUEUE_PER_NETWORK: THROTTLE_OFF,
    GATEHOUSE_SHUTDOWN_TIMEOUT: '2000',
    GATEHOUSE_LOG_LEVEL: 'info',
    // OpenID Connect on, for its rows (the issuer is never fetched).
    GATEHOUSE_PUBLIC_URL: BENCH_ISSUER,
    ...extra,
  };
}

/** Starts `gatehouse serve` (stdout to /dev/null) and waits for /healthz; logs in as admin. */
async function startService(name, dataDir, { secret, logLevel = 'info', nodeArgs = [], login: doLogin = true }) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawnTracked(pinning.server, process.execPath, [...nodeArgs, CLI, 'serve'], {
      cwd: ROOT,
      // Its own origin is where the bench asks it: the account and OpenID Connect rows answer only there.
      env: serviceEnv({
        GATEHOUSE_SECRET: secret, GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_PORT: String(port), GATEHOUSE_LOG_LEVEL: logLevel,
        GATEHOUSE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-8000)));
    const url = `http://127.0.0.1:${port}`;
    const startedAt = performance.now();
    let ready = false;
    while (!ready && child.exitCode === null && child.signalCode === null && performance.now() - startedAt < 60_000) {
      try {
        ready = (await fetchOnce(`${url}/healthz`, { timeoutMs: 2000 })).status === 200;
      } catch {
        // not listening yet
      }
      if (!ready) await sleep(50);
    }
    if (ready) {
      checkIsNode(child.pid, `service ${name}`);
      const service = { name, url, child, pid: child.pid, startMs: performance.now() - startedAt };
      if (doLogin) {
        service.token = await login(service, ADMIN, PASSWORD);
        service.cookie = { Cookie: `jwt=${service.token}` };
      }
      return service;
    }
    await stopChild(child);
    if (attempt >= 3 || !/EADDRINUSE/.test(stderr)) throw new Error(`service ${name} did not start: ${stderr.slice(-2000)}`);
  }
}

/** The headline reference (scripts/bench/bare-server.mjs): a fixed 75-byte JSON body, content-type and content-length only. */
async function startBare(nodeArgs = []) {
  const child = spawnTracked(pinning.server, process.execPath, [...nodeArgs, join(ROOT, 'scripts', 'bench', 'bare-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    child.once('exit', () => reject(new Error('the bare server exited')));
  });
  checkIsNode(child.pid, 'the bare server');
  return { name: 'bare', url: `http://127.0.0.1:${info.port}`, child, pid: child.pid, bytes: info.bytes };
}

/** CPU time is read from /proc/PID/stat of this pid: it must be node itself, not a wrapper (taskset execs node). */
function checkIsNode(pid, what) {
  const command = commandOf(pid);
  // /proc/PID/comm holds at most 15 characters of the executable's name.
  const node = basename(process.execPath).slice(0, 15);
  if (command !== undefined && command !== node) throw new Error(`${what}: pid ${pid} is ${command}, not ${node}; its CPU time would be the wrong process's`);
}

const slowStops = [];

/** Reads the service's memory, then stops it (the service's shutdown timeout is 2 s; SIGKILL after 4 s). */
async function stopService(service) {
  const memory = memoryOf(service.pid);
  const startedAt = performance.now();
  if (await stopChild(service.child)) slowStops.push(service.name);
  else log(`${service.name} stopped on SIGTERM in ${(performance.now() - startedAt).toFixed(0)} ms`);
  return memory;
}

async function login(service, username, password) {
  const res = await fetchOnce(`${service.url}/api/auth/authenticate`, { method: 'POST', body: JSON.stringify({ username, password }) });
  if (res.status !== 200) throw new Error(`login ${username} on ${service.name}: ${res.status} ${res.body}`);
  const cookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('jwt='));
  const token = cookie?.slice(4, cookie.indexOf(';'));
  if (token === undefined || token === '') throw new Error('no jwt cookie in the login response');
  return token;
}

// ---------------------------------------------------------------------------------------------
// Orchestrator: load generation
// ---------------------------------------------------------------------------------------------

const WRK_LUA = `-- written by scripts/bench.mjs; configured through environment variables
local body = os.getenv("BENCH_BODY") or ""
local bodiesfile = os.getenv("BENCH_BODIES") or ""
local seqmod = tonumber(os.getenv("BENCH_SEQ_MOD") or "0") or 0
wrk.method = os.getenv("BENCH_METHOD") or "GET"
if bodiesfile ~= "" then
  -- One body per line, each sent once in turn (single-use codes); the Content-Type comes from -H.
  local bodies = {}
  for line in io.lines(bodiesfile) do if line ~= "" then bodies[#bodies + 1] = line end end
  local counter = 0
  request = function()
    counter = counter + 1
    return wrk.format(nil, nil, nil, bodies[((counter - 1) % #bodies) + 1])
  end
elseif body ~= "" then
  if wrk.headers["Content-Type"] == nil then wrk.headers["Content-Type"] = "application/json" end
  if string.find(body, "{seq}", 1, true) then
    local counter = 0
    request = function()
      counter = counter + 1
      local n = counter
      if seqmod > 0 then n = ((counter - 1) % seqmod) + 1 end
      local b = string.gsub(body, "{seq}", tostring(n))
      return wrk.format(nil, nil, nil, b)
    end
  else
    wrk.body = body
  end
end
done = function(summary, latency, requests)
  local e = summary.errors
  local q = {}
  for i = 1, ${QUANTILES - 1} do q[i] = string.format("%d", latency:percentile(i * 100 / ${QUANTILES})) end
  q[${QUANTILES}] = string.format("%d", latency.max)
  io.write(string.format('BENCH_WRK {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"quantiles_us":[%s]}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, table.concat(q, ",")))
end
`;

let loadgenKind = 'node';
let wrkLuaPath;
let nonce = 0;

/** One segment: { requests, seconds, quantilesMs[1000], non2xx, socketErrors }. */
async function wrkSegment({ url, conns, seconds, method, headers, body, bodiesFile, seqMod, timeoutS }) {
  const args = ['-t1', `-c${conns}`, `-d${Math.max(1, Math.round(seconds))}s`, '--timeout', `${timeoutS}s`, '-s', wrkLuaPath];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  const out = await runChild(pinning.loadgen, 'wrk', args, {
    env: { ...process.env, BENCH_METHOD: method, BENCH_BODY: body ?? '', BENCH_BODIES: bodiesFile ?? '', BENCH_SEQ_MOD: String(seqMod ?? 0) },
  });
  const r = resultLine(out, 'BENCH_WRK');
  // wrk counts a request slower than --timeout as a timeout and does not record its latency.
  return {
    requests: r.requests,
    seconds: r.duration_us / 1e6,
    quantilesMs: r.quantiles_us.map((us) => us / 1000),
    non2xx: r.status,
    socketErrors: r.connect + r.read + r.write + r.timeout,
  };
}

async function nodeSegment({ url, conns, seconds, warmupS, method, headers, body, bodiesFile, seqMod, timeoutS }) {
  const spec = { url, conns, warmupMs: warmupS * 1000, durationMs: seconds * 1000, method, headers, body, bodiesFile, seqMod, timeoutMs: timeoutS * 1000 };
  const out = await runChild(pinning.loadgen, process.execPath, [SELF, '--role', 'loadgen'], { env: { ...process.env, BENCH_SPEC: JSON.stringify(spec) } });
  const r = resultLine(out, 'BENCH_RESULT');
  return { requests: r.requests, seconds: r.seconds, quantilesMs: r.quantilesMs, non2xx: r.non2xx, socketErrors: r.errors };
}

/**
 * One measured segment after an optional warm-up. A warm-up of 0 is used for scrypt-bound
 * requests: a separate warm-up run would leave its queued logins hashing into the measurement.
 */
async function segment(spec, { seconds, warmupS }) {
  const full = { method: 'GET', headers: {}, timeoutS: 10, ...spec, seconds };
  full.body = full.body?.replaceAll('{nonce}', `${process.pid}-${++nonce}`);
  const run = loadgenKind === 'wrk' ? wrkSegment : nodeSegment;
  if (warmupS > 0) await run({ ...full, seconds: warmupS, warmupS: 0, body: full.body?.replaceAll('{phase}', 'w') });
  // The server's CPU time (utime + stime, every thread) over the measured segment alone.
  const ticksBefore = spec.pid === undefined ? undefined : cpuTicksOf(spec.pid);
  const result = await run({ ...full, warmupS: 0, body: full.body?.replaceAll('{phase}', 'm') });
  const ticksAfter = spec.pid === undefined ? undefined : cpuTicksOf(spec.pid);
  return { ...result, cpuTicks: ticksBefore === undefined || ticksAfter === undefined ? undefined : ticksAfter - ticksBefore };
}

/** CPU µs per request of one segment (or of several: total ticks over total requests). */
function cpuMicrosOf(segments) {
  if (segments.some((s) => s.cpuTicks === undefined)) return undefined;
  return cpuMicrosPerRequest(0, segments.reduce((sum, s) => sum + s.cpuTicks, 0), segments.reduce((sum, s) => sum + s.requests, 0));
}

/** Merges segments: req/s over the total time; p50/p99 from the request-weighted quantile grids. */
function combine(segments) {
  const requests = segments.reduce((sum, s) => sum + s.requests, 0);
  const seconds = segments.reduce((sum, s) => sum + s.seconds, 0);
  const points = [];
  for (const s of segments) if (s.requests > 0) for (const value of s.quantilesMs) if (Number.isFinite(value)) points.push([value, s.requests / s.quantilesMs.length]);
  points.sort((a, b) => a[0] - b[0]);
  const total = points.reduce((sum, p) => sum + p[1], 0);
  const quantile = (q) => {
    let seen = 0;
    for (const [value, weight] of points) {
      seen += weight;
      if (seen >= q * total - 1e-9) return value;
    }
    return NaN;
  };
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50: quantile(0.5),
    p99: quantile(0.99),
    non2xx: segments.reduce((sum, s) => sum + s.non2xx, 0),
    socketErrors: segments.reduce((sum, s) => sum + s.socketErrors, 0),
    segments: segments.map((s) => s.requests / s.seconds),
    // CPU µs per request: per segment (round), and over all segments together.
    cpuSegments: segments.map((s) => cpuMicrosOf([s])),
    cpuMicros: cpuMicrosOf(segments),
    parts: segments,
  };
}

// ---------------------------------------------------------------------------------------------
// Orchestrator: the run
// ---------------------------------------------------------------------------------------------

const settings = { durationS: 4, warmupS: 1, rounds: 9, segmentS: 1 };
const t0 = performance.now();

function log(message) {
  process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);
}

function setUpPinning() {
  const cpus = os.availableParallelism();
  const hasTaskset = spawnSync('taskset', ['-c', opts['server-cpus'], process.execPath, '-e', '0']).status === 0 &&
    spawnSync('taskset', ['-c', opts['loadgen-cpus'], process.execPath, '-e', '0']).status === 0;
  pinning = { enabled: hasTaskset && cpus >= 2, server: opts['server-cpus'], loadgen: opts['loadgen-cpus'] };
  // This script (and so the node:http load generator it spawns) joins the load generator's CPUs.
  if (pinning.enabled) spawnSync('taskset', ['-a', '-p', '-c', pinning.loadgen, String(process.pid)], { stdio: 'ignore' });
  return { cpus, hasTaskset };
}

function readServiceConfig(secret) {
  const args = [CLI, 'serve', '--print-config'];
  const [file, argv] = pinning.enabled ? ['taskset', ['-c', pinning.server, process.execPath, ...args]] : [process.execPath, args];
  const result = spawnSync(file, argv, { env: serviceEnv({ GATEHOUSE_SECRET: secret, GATEHOUSE_DATA_DIR: '/nonexistent' }), encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`gatehouse serve --print-config failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

async function prepare() {
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run npm run build (npm run bench does)`);
  const { cpus, hasTaskset } = setUpPinning();
  const wrkAvailable = spawnSync('wrk', ['-v']).error === undefined;
  loadgenKind = opts.loadgen ?? (wrkAvailable ? 'wrk' : 'node');
  if (loadgenKind !== 'wrk' && loadgenKind !== 'node') throw new Error('--loadgen must be wrk or node');
  if (loadgenKind === 'wrk' && !wrkAvailable) throw new Error('--loadgen wrk: wrk is not installed');
  const secret = randomBytes(32).toString('hex');
  tempRoot = mkdtempSync(join(os.tmpdir(), 'gatehouse-bench-'));
  chmodSync(tempRoot, 0o700);
  mkdirSync(join(tempRoot, 'app'));
  cpSync(join(ROOT, 'dist'), join(tempRoot, 'app', 'dist'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(tempRoot, 'app', 'package.json'));
  CLI = join(tempRoot, 'app', 'dist', 'cli.js');
  const config = readServiceConfig(secret);
  wrkLuaPath = join(tempRoot, 'bench.lua');
  writeFileSync(wrkLuaPath, WRK_LUA);
  const wrkVersion = wrkAvailable ? (spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? 'wrk').split(' [')[0] : '';
  return { cpus, hasTaskset, secret, config, wrkVersion };
}

async function main() {
  installCleanup();
  if (opts.quick) Object.assign(settings, { durationS: 2, warmupS: 1, rounds: 2 });
  if (opts.duration !== undefined) settings.durationS = Number(opts.duration);
  if (opts.warmup !== undefined) settings.warmupS = Number(opts.warmup);
  if (opts.rounds !== undefined) settings.rounds = Number(opts.rounds);
  if (opts.segment !== undefined) settings.segmentS = Number(opts.segment);
  if (!(settings.durationS > 0) || !(settings.warmupS >= 0) || !(settings.segmentS > 0) || !(Number.isInteger(settings.rounds) && settings.rounds >= 1)) {
    throw new Error('--duration and --segment must be > 0, --warmup >= 0, --rounds a positive integer');
  }
  try {
    if (opts.profile) await profileRun();
    else if (opts.oidc) await oidcRun();
    else await benchRun();
  } finally {
    killEverything();
  }
}

async function benchRun() {
  const env = await prepare();
  const { secret, config } = env;
  const cost = config.scryptCost;
  const hashConcurrency = config.hashConcurrency;
  const userCount = Number(opts.users);
  const { durationS, warmupS, rounds } = settings;
  const segmentS = loadgenKind === 'wrk' ? Math.max(1, Math.round(settings.segmentS)) : settings.segmentS;
  log(`loadgen ${loadgenKind}; pinning ${pinning.enabled ? `services CPU ${pinning.server}, loadgen CPU ${pinning.loadgen}` : 'off'}; scrypt N=${cost.N},r=${cost.r},p=${cost.p}, hash concurrency ${hashConcurrency}`);

  const hashStarted = performance.now();
  const passwordHash = await hashLikeService(PASSWORD, cost);
  const dirs = {
    empty: join(tempRoot, 'empty'),
    small: join(tempRoot, 'small'),
    large: join(tempRoot, 'large'),
    smallTwin: join(tempRoot, 'small-twin'),
    largeTwin: join(tempRoot, 'large-twin'),
  };
  makeDataDir(dirs.empty, 0, passwordHash);
  for (const dir of [dirs.small, dirs.smallTwin]) makeDataDir(dir, 10, passwordHash);
  for (const dir of [dirs.large, dirs.largeTwin]) makeDataDir(dir, userCount, passwordHash);
  log(`data sets written (one hash, ${(performance.now() - hashStarted).toFixed(0)} ms; users.json for 10 and ${userCount} users)`);

  // Every service is up for the whole run, idle unless it is being measured.
  const small = await startService('small', dirs.small, { secret });
  const large = await startService('large', dirs.large, { secret });
  // Twins: two processes with the same code and data differ by a quarter or more per round on
  // this kind of machine, so the hot-path targets read two processes of the large kind, and 10
  // vs many users compares two processes of each. In six runs the process started earlier was
  // the faster twin eleven times in twelve, so the kinds start small, large, large, small.
  const largeTwin = await startService('large-twin', dirs.largeTwin, { secret });
  const smallTwin = await startService('small-twin', dirs.smallTwin, { secret });
  const empty = await startService('empty', dirs.empty, { secret, login: false });
  log(`services up; the ${userCount}-user one was ready in ${large.startMs.toFixed(0)} ms`);

  const probe = async (service, path, headers, expected) => {
    const res = await fetchOnce(`${service.url}${path}`, { headers });
    if (res.status !== expected) throw new Error(`probe ${path} on ${service.name}: expected ${expected}, got ${res.status} ${res.body}`);
    return res;
  };
  const verifyBody = (await probe(large, '/api/auth/verify', large.cookie, 200)).body;
  await probe(small, '/api/auth/verify', small.cookie, 200);
  await probe(smallTwin, '/api/auth/verify', smallTwin.cookie, 200);
  await probe(largeTwin, '/api/auth/verify', largeTwin.cookie, 200);
  await probe(empty, '/api/auth/verify', {}, 200);
  await probe(large, `/api/auth/verify?token=${large.token}`, {}, 200);
  await probe(large, '/api/auth/verify', {}, 401);
  await probe(large, '/api/auth/users', large.cookie, 200);
  await probe(small, '/api/auth/users', small.cookie, 200);
  // The error answers of the CPU targets: 401 (no credentials), 403 (a USER), 404 (no such path).
  const userToken = await login(large, 'u1', PASSWORD);
  const userCookie = { Cookie: `jwt=${userToken}` };
  await probe(large, '/api/auth/users', {}, 401);
  await probe(large, '/api/auth/users', userCookie, 403);
  await probe(large, '/api/auth/no-such-path', large.cookie, 404);
  // The gate's forward endpoint, when this build has it: a 404 means a build without the route,
  // and its rows say so instead of showing a figure.
  const forwardStatus = (await fetchOnce(`${large.url}/api/auth/forward`, { headers: large.cookie })).status;
  if (forwardStatus !== 200 && forwardStatus !== 404) throw new Error(`probe /api/auth/forward on ${large.name}: expected 200 (or 404 without the route), got ${forwardStatus}`);
  const hasForward = forwardStatus === 200;
  // nginx passes the original request's path and query in X-Original-URI: ?token= rides there.
  const forwardTokenHeaders = { 'X-Original-URI': `/flood/api/download?hash=0123456789abcdef&token=${large.token}` };
  if (hasForward) {
    await probe(large, '/api/auth/forward', forwardTokenHeaders, 200);
    await probe(large, '/api/auth/forward', {}, 401);
  }

  const ceilingChild = spawnTracked(pinning.server, process.execPath, [SELF, '--role', 'ceiling'], {
    env: { ...process.env, BENCH_BODY_BYTES: String(Buffer.byteLength(verifyBody)) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ceilingInfo = await new Promise((resolve, reject) => {
    let out = '';
    ceilingChild.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    ceilingChild.once('exit', () => reject(new Error('the ceiling server exited')));
  });
  checkIsNode(ceilingChild.pid, 'the ceiling');
  const ceilingUrl = `http://127.0.0.1:${ceilingInfo.port}/`;
  // The ceiling and the bare server get the very request verify gets (its session cookie
  // included): they then differ only in what is done with it, not in how many bytes arrive.
  const ceilingSpec = { url: ceilingUrl, headers: large.cookie, pid: ceilingChild.pid };
  const bare = await startBare();
  const bareSpec = { url: `${bare.url}/`, headers: large.cookie, pid: bare.pid };

  const rows = new Map();
  const memory = {};
  let groups = 0;
  /** `group` names the interleaved group a row was measured in: only rows of one group are paired round by round. */
  const addRow = (key, label, conns, result, expected = 200, notes = [], group = undefined) => {
    if (expected !== 200) notes.push(result.non2xx === result.requests ? `all >399 (expected ${expected})` : `UNEXPECTED: ${result.requests - result.non2xx} not ${expected}`);
    else if (result.non2xx > 0) notes.push(`UNEXPECTED: ${result.non2xx} responses >399`);
    if (result.socketErrors > 0) notes.push(`${result.socketErrors} socket errors/timeouts`);
    if (group !== undefined) notes.push(`${result.segments.length} rounds, ${fmtInt(Math.min(...result.segments))}–${fmtInt(Math.max(...result.segments))} req/s`);
    rows.set(key, { key, label, conns, result, notes, group });
    log(`${label} @${conns}: ${fmtInt(result.rps)} req/s, p50 ${fmtMs(result.p50)} ms, p99 ${fmtMs(result.p99)} ms${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
  };
  /**
   * Interleaved group: every round measures every scenario once, in the opposite order to the
   * round before; the first round warms each one up. segments[k] of a row is its round k.
   */
  const interleaved = async (scenarios) => {
    const segs = scenarios.map(() => []);
    for (let round = 0; round < rounds; round++) {
      const indexes = scenarios.map((_, i) => i);
      if (round % 2 === 1) indexes.reverse();
      for (const i of indexes) {
        const s = scenarios[i];
        // Rows the pre-warm pass already ran with this very request need no second warm-up.
        // A spec may be made per round (the token rows mint fresh single-use codes for each).
        const spec = typeof s.spec === 'function' ? await s.spec(round) : s.spec;
        segs[i][round] = await segment({ conns: s.conns, ...spec }, { seconds: segmentS, warmupS: round === 0 && s.prewarmed !== true ? warmupS : 0 });
      }
    }
    const group = ++groups;
    for (const [i, s] of scenarios.entries()) {
      addRow(s.key, s.label, s.conns, combine(segs[i]), s.expected, [], group);
      // The bare row of the same rounds the row's CPU is compared with, when not bare16/bare64.
      if (s.bareKey !== undefined) rows.get(s.key).bareKey = s.bareKey;
    }
  };
  const single = async (key, label, conns, spec, expected = 200, { warm = true, seconds = durationS } = {}) => {
    const result = combine([await segment({ conns, ...spec }, { seconds, warmupS: warm ? warmupS : 0 })]);
    addRow(key, label, conns, result, expected);
    return result;
  };
  // One login queues behind everything the hasher still has: when it returns, abandoned logins are done.
  const drain = async (service) => {
    const started = performance.now();
    await login(service, ADMIN, PASSWORD);
    log(`hash queue drained on ${service.name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  };
  const scryptAloneSegment = async (seconds) => {
    const spec = { N: cost.N, r: cost.r, p: cost.p, maxmem: scryptMaxmem(cost), concurrency: hashConcurrency, durationMs: seconds * 1000 };
    const out = await runChild(pinning.server, process.execPath, [SELF, '--role', 'scrypt'], { env: { ...process.env, BENCH_SPEC: JSON.stringify(spec) } });
    return resultLine(out, 'BENCH_RESULT');
  };

  const ceilingLabel = `same bytes: node:http, ${ceilingInfo.bytes} B JSON, our headers`;
  const bareLabel = `bare node:http, ${bare.bytes} B JSON, 2 headers`;
  const verify = (service) => ({ url: `${service.url}/api/auth/verify`, headers: service.cookie, pid: service.pid });
  const U = fmtInt(userCount);

  // 0. Pre-warm every process on its hot path (JIT, heap sizing) before anything is measured.
  for (const spec of [bareSpec, ceilingSpec, verify(large), verify(small), verify(largeTwin), verify(smallTwin), { url: `${empty.url}/api/auth/verify` }]) {
    await segment({ conns: 16, ...spec }, { seconds: Math.max(1, warmupS), warmupS: 0 });
  }
  log('pre-warm done');

  // 1. Hot path at 16 and 64 connections, interleaved with the bare server and the ceiling; the
  //    rows of the CPU targets (forward, ?token=, error answers) in the same rounds at 16.
  // Machine tokens (when this build has them): the administrator's, made once over the API, sent
  // as Bearer and as Basic; the same run and rounds as the cookie row, so they compare directly.
  const machineTokenRes = hasForward
    ? await fetchOnce(`${large.url}/api/auth/account/tokens`, { method: 'POST', headers: large.cookie, body: JSON.stringify({ name: 'bench', password: PASSWORD }) })
    : undefined;
  const machineToken = machineTokenRes?.status === 200 ? JSON.parse(machineTokenRes.body).token : undefined;
  if (machineTokenRes !== undefined && machineToken === undefined) {
    log(`machine token rows not measured: making the token answered ${machineTokenRes.status} ${machineTokenRes.body.slice(0, 200)}`);
  }
  const bearerHeaders = { Authorization: `Bearer ${machineToken}` };
  const basicHeaders = { Authorization: `Basic ${Buffer.from(`${ADMIN}:${machineToken}`).toString('base64')}` };
  if (machineToken !== undefined) {
    await probe(large, '/api/auth/forward', bearerHeaders, 200);
    await probe(large, '/api/auth/forward', basicHeaders, 200);
  }
  // OpenID Connect: an RS256 and an ES256 client, an access token for userinfo (each checked once).
  const oidc = await setUpOidc(large);
  const userinfoSpec = { url: oidc.userinfoUrl, headers: { Authorization: `Bearer ${oidc.accessToken}` }, pid: large.pid };
  const forwardRows = hasForward
    ? [
        { key: 'forwardCookie16', label: 'forward, valid cookie', conns: 16, spec: { url: `${large.url}/api/auth/forward`, headers: large.cookie, pid: large.pid } },
        { key: 'forwardToken16', label: 'forward, ?token= in X-Original-URI', conns: 16, spec: { url: `${large.url}/api/auth/forward`, headers: forwardTokenHeaders, pid: large.pid } },
        ...(machineToken === undefined
          ? []
          : [
              { key: 'forwardBearer16', label: 'forward, machine token (Bearer)', conns: 16, spec: { url: `${large.url}/api/auth/forward`, headers: bearerHeaders, pid: large.pid } },
              { key: 'forwardBasic16', label: 'forward, machine token (Basic)', conns: 16, spec: { url: `${large.url}/api/auth/forward`, headers: basicHeaders, pid: large.pid } },
            ]),
      ]
    : [];
  await interleaved([
    { key: 'bare16', label: bareLabel, conns: 16, spec: bareSpec, prewarmed: true },
    { key: 'ceiling16', label: ceilingLabel, conns: 16, spec: ceilingSpec, prewarmed: true },
    { key: 'largeVerify16', label: `verify, valid cookie, ${U} users`, conns: 16, spec: verify(large), prewarmed: true },
    { key: 'smallVerify16', label: 'verify, valid cookie, 10 users', conns: 16, spec: verify(small), prewarmed: true },
    // In this order, run forwards and backwards, a 10-user process runs right after a
    // 10,000-user one half the time (three times in four with the twins swapped), and a
    // 10,000-user one never does: what a process leaves running on the core after its turn
    // (a heap of 10,000 users to collect) falls less on one kind.
    { key: 'smallTwinVerify16', label: 'verify, valid cookie, 10 users, twin process', conns: 16, spec: verify(smallTwin), prewarmed: true },
    { key: 'largeTwinVerify16', label: `verify, valid cookie, ${U} users, twin process`, conns: 16, spec: verify(largeTwin), prewarmed: true },
    ...forwardRows,
    { key: 'largeVerifyQuery16', label: 'verify, ?token=', conns: 16, spec: { url: `${large.url}/api/auth/verify?token=${large.token}`, pid: large.pid } },
    { key: 'error401', label: '401: GET /users, no credentials', conns: 16, spec: { url: `${large.url}/api/auth/users`, pid: large.pid }, expected: 401 },
    { key: 'error403', label: '403: GET /users as a USER', conns: 16, spec: { url: `${large.url}/api/auth/users`, headers: userCookie, pid: large.pid }, expected: 403 },
    { key: 'error404', label: '404: unknown path', conns: 16, spec: { url: `${large.url}/api/auth/no-such-path`, headers: large.cookie, pid: large.pid }, expected: 404 },
    { key: 'userinfo16', label: 'OpenID Connect userinfo, Bearer access token', conns: 16, spec: userinfoSpec },
  ]);
  await stopService(smallTwin);
  await interleaved([
    { key: 'bare64', label: bareLabel, conns: 64, spec: bareSpec },
    { key: 'ceiling64', label: ceilingLabel, conns: 64, spec: ceilingSpec },
    { key: 'largeVerify64', label: `verify, valid cookie, ${U} users`, conns: 64, spec: verify(large) },
    { key: 'largeTwinVerify64', label: `verify, valid cookie, ${U} users, twin process`, conns: 64, spec: verify(largeTwin) },
  ]);
  memory.twin = await stopService(largeTwin);
  // The token rows get a process of their own (the twin's data): the access tokens and spent codes
  // their thousands of exchanges leave in memory (bounded, src/oidc/limits.ts) would otherwise count
  // in the peak RSS of the 10,000-user service, whose target is about accounts and the login storm.
  const tokenService = await startService('token', dirs.largeTwin, { secret });
  await tokenGroup({ oidc: await setUpOidc(tokenService), service: tokenService, bareSpec, bareLabel, interleaved, segment, warmupS });
  memory.token = await stopService(tokenService);
  // Rows only the status check reads run shorter, to keep the whole run under three minutes.
  const brief = { seconds: Math.min(3, durationS) };
  await single('emptyVerify16', 'verify, no users (initialUser)', 16, { url: `${empty.url}/api/auth/verify`, pid: empty.pid }, 200, brief);
  memory.empty = await stopService(empty);
  await single('largeVerify401', 'verify, unauthenticated (401)', 16, { url: `${large.url}/api/auth/verify`, pid: large.pid }, 401, brief);
  await single('smallList16', 'list users, 10 users', 16, { url: `${small.url}/api/auth/users`, headers: small.cookie, pid: small.pid }, 200, brief);
  memory.small = await stopService(small);
  await single('largeList16', `list users, ${U} users`, 16, { url: `${large.url}/api/auth/users`, headers: large.cookie, pid: large.pid });

  // 2. Logins. scrypt alone (same CPU, cost, maxmem, concurrency) is measured half before, half after.
  const loginBody = (pw) => JSON.stringify({ username: 'u{seq}', password: pw });
  const loginSpec = { url: `${large.url}/api/auth/authenticate`, method: 'POST', seqMod: Math.max(1, userCount - 1), timeoutS: 120, pid: large.pid };
  const scryptParts = [await scryptAloneSegment(durationS / 2)];
  // Twice as long as other rows: a few hashes a second, and the window loses up to one at each end.
  await single('loginOk', 'authenticate, correct password', 16, { ...loginSpec, body: loginBody(PASSWORD) }, 200, { warm: false, seconds: 2 * durationS });
  await drain(large);
  scryptParts.push(await scryptAloneSegment(durationS / 2));
  const scryptAlone = { hashes: scryptParts.reduce((s, p) => s + p.hashes, 0), seconds: scryptParts.reduce((s, p) => s + p.seconds, 0), parts: scryptParts.map((p) => p.hashes / p.seconds) };
  scryptAlone.perSecond = scryptAlone.hashes / scryptAlone.seconds;
  log(`scrypt alone: ${scryptAlone.perSecond.toFixed(2)} hashes/s (${scryptAlone.hashes} in ${scryptAlone.seconds.toFixed(2)} s; before/after ${scryptAlone.parts.map((p) => p.toFixed(2)).join(' / ')})`);
  await single('loginBad', 'authenticate, wrong password', 16, { ...loginSpec, body: loginBody('wrong-password') }, 401, { warm: false });
  await drain(large);

  // 3. Verify while 16 clients log in continuously; the baseline is measured just before and just after.
  const baselineBefore = await segment({ conns: 16, ...verify(large) }, { seconds: durationS, warmupS });
  const stormSeconds = warmupS + durationS + 2;
  // The storm and the verify beside it share one process: neither row gets a CPU figure.
  const storm = segment({ ...loginSpec, pid: undefined, conns: 16, body: loginBody(PASSWORD) }, { seconds: stormSeconds, warmupS: 0 });
  storm.catch(() => undefined);
  await sleep(1000);
  await single('stormVerify16', 'verify during a 16-client login storm', 16, { ...verify(large), pid: undefined });
  const stormLogins = combine([await storm]);
  addRow('stormLogins', '  the storm\'s logins (same time)', 16, stormLogins, 200, [`${stormSeconds} s run`]);
  memory.largeAfterStorm = memoryOf(large.pid);
  await drain(large);
  const baselineAfter = await segment({ conns: 16, ...verify(large) }, { seconds: durationS, warmupS: 0 });
  addRow('stormBaseline16', `verify, valid cookie, ${U} users (storm baseline)`, 16, combine([baselineBefore, baselineAfter]), 200, ['before / after the storm']);

  // 4. Register as administrator (each is a scrypt hash and a users.json rewrite).
  const registerBody = JSON.stringify({ username: 'reg-{nonce}-{phase}-{seq}', password: 'bench-password-2', client: CLIENT, level: 5 });
  await single('register', 'register as administrator', 16, { url: `${large.url}/api/auth/register`, method: 'POST', headers: large.cookie, body: registerBody, timeoutS: 120, pid: large.pid }, 200, { warm: false });
  await drain(large);
  memory.large = await stopService(large);
  await stopChild(ceilingChild);
  await stopChild(bare.child);

  const signCost = await signCostAlone();
  report({ env, rows, memory, scryptAlone, userCount, hashConcurrency, cost, segmentS, hasForward, signCost });
}

/**
 * The token endpoint rows: a code exchange (client authentication, the code spent, an access token
 * made, the id_token signed) with RS256 and ES256, interleaved with the bare server. A code is good
 * once, so every segment gets fresh ones (minted through authorize before the segment, outside its
 * CPU reading); the rows are warmed up on codes of their own first.
 */
async function tokenGroup({ oidc, service, bareSpec, bareLabel, interleaved, segment, warmupS }) {
  // More codes than a segment can use on this kind of machine (a row that ran out would show 400s),
  // and fewer than the provider keeps waiting at once (MAX_PENDING_CODES, 10,000: past it the oldest
  // go), less the few more that mintBodies' parallel lanes may make than they return.
  const budget = { RS256: 3000, ES256: 9_900 };
  const codesFile = (alg, round) => join(tempRoot, `codes-${alg}-${round}.txt`);
  const tokenSpec = (alg) => async (round) => ({
    url: oidc.tokenUrl, method: 'POST', headers: oidc.tokenHeaders(alg), pid: service.pid,
    bodiesFile: await oidc.mintBodiesFile(alg, budget[alg], codesFile(alg, round)),
  });
  for (const alg of ['RS256', 'ES256']) {
    const warm = { url: oidc.tokenUrl, method: 'POST', headers: oidc.tokenHeaders(alg), bodiesFile: await oidc.mintBodiesFile(alg, budget[alg], codesFile(alg, 'warm')) };
    await segment({ conns: 16, ...warm }, { seconds: Math.max(1, warmupS), warmupS: 0 });
  }
  await interleaved([
    { key: 'bareToken16', label: bareLabel, conns: 16, spec: bareSpec, prewarmed: true },
    { key: 'tokenRs16', label: 'OpenID Connect token: code exchange, RS256 id_token', conns: 16, spec: tokenSpec('RS256'), prewarmed: true, bareKey: 'bareToken16' },
    { key: 'tokenEs16', label: 'OpenID Connect token: code exchange, ES256 id_token', conns: 16, spec: tokenSpec('ES256'), prewarmed: true, bareKey: 'bareToken16' },
  ]);
}

/** Signing one id_token alone (the service's own code, on the service's CPU): µs of CPU per signature, and per verification. */
async function signCostAlone() {
  const out = await runChild(pinning.server, process.execPath, [SELF, '--role', 'sign'], { env: { ...process.env, BENCH_DIST: dirname(CLI) } });
  return resultLine(out, 'BENCH_RESULT');
}

/** The signing cost's line of the report. */
function signCostLine(signCost) {
  const one = (alg) => {
    const x = signCost.results[alg];
    return `${alg} ${fmtMicros(x.sign.cpuMicros)} µs to sign, ${fmtMicros(x.verify.cpuMicros)} µs to verify (${x.bytes} B)`;
  };
  return `id_token signing alone (dist/oidc/jws.js, a fresh key, ${signCost.count} times each, CPU time): ${one('RS256')}; ${one('ES256')}`;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function fmtInt(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}
function fmtMs(n) {
  if (!Number.isFinite(n)) return 'n/a';
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}
function fmtSigned(n) {
  return Number.isFinite(n) ? `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(1)}` : 'n/a';
}
function fmtMicros(n) {
  return Number.isFinite(n) ? n.toFixed(1) : 'n/a';
}
function fmtMiB(m) {
  return m === undefined || !Number.isFinite(m.hwmMiB) ? 'n/a' : `${m.hwmMiB.toFixed(1)} MiB`;
}

function report({ env, rows, memory, scryptAlone, userCount, hashConcurrency, cost, segmentS, hasForward, signCost }) {
  const row = (key) => rows.get(key);
  const r = (key) => rows.get(key).result;
  const ceilingRps = { 16: r('ceiling16').rps, 64: r('ceiling64').rps };
  // Rows measured in the same rounds as their ceiling are compared round by round (median);
  // the others against the ceiling's total.
  const ratioOf = (x) => {
    const ceilingKey = `ceiling${x.conns}`;
    return x.key !== ceilingKey && isPaired(x.key, ceilingKey) ? pairedRatio(x.key, ceilingKey).median : x.result.rps / ceilingRps[x.conns];
  };
  const isPaired = (key, baseKey) => row(key).group !== undefined && row(key).group === row(baseKey).group;
  /** Per-round ratios of two interleaved rows, their median and range. */
  const pairedRatio = (key, baseKey) => {
    const ratios = r(key).segments.map((rps, round) => rps / r(baseKey).segments[round]);
    return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
  };
  /** Per-round ratios of the summed req/s of two groups of interleaved rows. */
  const pairedSumRatio = (keys, baseKeys) => {
    const sum = (ks, round) => ks.reduce((total, k) => total + r(k).segments[round], 0);
    const ratios = r(keys[0]).segments.map((_, round) => sum(keys, round) / sum(baseKeys, round));
    return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
  };
  const fmtPaired = (p) => `median ${p.median.toFixed(3)} (rounds ${p.min.toFixed(2)}–${p.max.toFixed(2)})`;
  const U = fmtInt(userCount);
  const out = [];
  const cpuModel = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  out.push('');
  out.push(`Gatehouse benchmark — measured on this machine: ${cpuModel}, ${env.cpus} CPUs, node ${process.version}, ${new Date().toISOString()}`);
  out.push(`load generator: ${loadgenKind === 'wrk' ? `${env.wrkVersion}, 1 thread, Lua script` : 'node:http (built in; slower than wrk, so hot-path ratios are compressed toward 1)'}; keep-alive connections`);
  out.push(`CPU pinning: ${pinning.enabled ? `services, ceiling and scrypt-alone on CPU ${pinning.server}; load generators and this script on CPU ${pinning.loadgen} (taskset)` : `off (${env.hasTaskset ? `only ${env.cpus} CPU` : 'taskset not available'})`}`);
  out.push(`service: scrypt N=${cost.N},r=${cost.r},p=${cost.p}; hash concurrency ${hashConcurrency}, queue ${env.config.hashQueueLength}; log level info with stdout -> /dev/null; login throttle raised to ${THROTTLE_OFF}`);
  out.push(`timing: interleaved rows (those with "rounds") ran in ${settings.rounds} rounds of ${segmentS} s, each round in the opposite order to the last, after ${settings.warmupS} s of warm-up (none for the rows the pre-warm pass ran with the same request); other rows: ${settings.warmupS} s warm-up, then ${settings.durationS} s (logins with the correct password ${2 * settings.durationS} s; no users, verify 401 and list 10 users ${Math.min(3, settings.durationS)} s); logins and register have no separate warm-up and the hash queue is drained after them`);
  out.push('users: users.json written before start (one scrypt hash shared by every user), not registered one by one');
  out.push('');
  // CPU per request: for interleaved rows the median over rounds, otherwise over the whole row.
  const cpuOf = (x) => (x.group !== undefined ? median(x.result.cpuSegments) : x.result.cpuMicros);
  const bareCpu = { 16: cpuOf(row('bare16')), 64: cpuOf(row('bare64')) };
  /** bare µs / row µs: per round (median) for rows measured in the bare server's rounds, else against its median. */
  const cpuRatioOf = (x) => {
    const bareKey = x.bareKey ?? `bare${x.conns}`;
    if (isPaired(x.key, bareKey)) return median(x.result.cpuSegments.map((us, round) => r(bareKey).cpuSegments[round] / us));
    return bareCpu[x.conns] / cpuOf(x);
  };
  const order = ['bare16', 'ceiling16', 'largeVerify16', 'smallVerify16', 'smallTwinVerify16', 'largeTwinVerify16', 'forwardCookie16', 'forwardToken16', 'forwardBearer16', 'forwardBasic16', 'largeVerifyQuery16', 'error401', 'error403', 'error404', 'userinfo16',
    'bareToken16', 'tokenRs16', 'tokenEs16',
    'bare64', 'ceiling64', 'largeVerify64', 'largeTwinVerify64', 'emptyVerify16', 'largeVerify401',
    'smallList16', 'largeList16', 'loginOk', 'loginBad', 'stormBaseline16', 'stormVerify16', 'stormLogins', 'register'];
  const header = ['scenario', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'CPU µs/req', 'bare/CPU', 'notes'];
  const fmtRatio = (n) => (!Number.isFinite(n) ? 'n/a' : n < 0.01 ? n.toFixed(5) : n.toFixed(2));
  const missingForward = { forwardCookie16: 'forward, valid cookie', forwardToken16: 'forward, ?token= in X-Original-URI', forwardBearer16: 'forward, machine token (Bearer)', forwardBasic16: 'forward, machine token (Basic)' };
  const table = order.map((key) => {
    const x = row(key);
    if (x === undefined) return [missingForward[key] ?? key, '16', 'n/a', '', '', '', '', '', hasForward ? 'not measured' : 'n/a: route missing (this build answers /api/auth/forward 404)'];
    const cpu = cpuOf(x);
    const fmtCpu = cpu === undefined ? '-' : cpu >= 1000 ? fmtInt(cpu) : fmtMicros(cpu);
    return [x.label, String(x.conns), x.result.rps < 100 ? x.result.rps.toFixed(2) : fmtInt(x.result.rps), fmtMs(x.result.p50), fmtMs(x.result.p99), fmtRatio(ratioOf(x)), fmtCpu, cpu === undefined ? '-' : fmtRatio(cpuRatioOf(x)), x.notes.join('; ')];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const fmtRow = (t) => t.map((cell, i) => (i === 0 || i === t.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd();
  out.push(fmtRow(header));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const t of table) out.push(fmtRow(t));
  out.push('');
  out.push('ratio = req/s of the row / req/s of the same-bytes server at the same connection count, from this run: for rows with "rounds",');
  out.push(`        the median of the per-round ratios; for the others, against its total (@16 ${fmtInt(ceilingRps[16])}, @64 ${fmtInt(ceilingRps[64])} req/s).`);
  out.push('        For logins, register and list users it only shows how far they are from a cheap JSON answer.');
  out.push(`CPU µs/req = utime + stime of the server process (all threads, kernel included; /proc/PID/stat, ${CLOCK_TICKS_PER_SECOND} ticks/s) over the measured`);
  out.push('        segment / requests answered in it; for rows with "rounds" the median over rounds. Logins and register include their scrypt');
  out.push('        threads; the storm rows share one process with the storm, so they have none.');
  out.push('bare/CPU = CPU µs/req of the bare node:http server / CPU µs/req of the row (1.00 = as cheap as the bare server): for rows with');
  out.push(`        "rounds", the median of the per-round ratios; for the others, against the bare server's median (@16 ${fmtMicros(bareCpu[16])}, @64 ${fmtMicros(bareCpu[64])} µs).`);
  out.push('bare = the first thing anyone would write (75 B fixed JSON body, content-type and content-length only); same bytes = node:http');
  out.push('        answering the exact bytes verify sends (its body size and security headers). Both get verify\'s request, cookie included.');
  const pooledCpu = (keys, round) => keys.reduce((sum, k) => sum + (r(k).parts[round].cpuTicks ?? NaN), 0) / CLOCK_TICKS_PER_SECOND * 1e6 / keys.reduce((sum, k) => sum + r(k).parts[round].requests, 0);
  /** Per round: bare µs / µs per request of the rows' processes pooled; the median over rounds. */
  const cpuTarget = (keys, conns = 16) => median(r(`bare${conns}`).cpuSegments.map((bareUs, round) => bareUs / pooledCpu(keys, round)));
  const verifyKeys16 = ['largeVerify16', 'largeTwinVerify16'];
  const sameBytesUs = cpuOf(row('ceiling16'));
  const verifyUs = median(r('bare16').cpuSegments.map((_, round) => pooledCpu(verifyKeys16, round)));
  out.push(`CPU per request @16, medians over rounds: bare ${fmtMicros(bareCpu[16])} µs; same bytes ${fmtMicros(sameBytesUs)} µs (our extra bytes: ${fmtSigned(sameBytesUs - bareCpu[16])}); verify with a cookie, two ${U}-user processes pooled, ${fmtMicros(verifyUs)} µs (our processing: ${fmtSigned(verifyUs - sameBytesUs)})`);
  // The hot-path targets read both processes of the large kind: per round, their mean req/s over the ceiling's.
  const hotPath = (conns) => pairedSumRatio([`largeVerify${conns}`, `largeTwinVerify${conns}`], [`ceiling${conns}`, `ceiling${conns}`]);
  // Latency of every verify request the two processes answered, pooled.
  const hotPathP99 = (conns) => combine([...r(`largeVerify${conns}`).parts, ...r(`largeTwinVerify${conns}`).parts]).p99;
  for (const conns of [16, 64]) {
    out.push(`verify, valid cookie @${conns} vs the ceiling, per round, mean of the two ${U}-user processes: ${fmtPaired(hotPath(conns))}; each alone ${fmtPaired(pairedRatio(`largeVerify${conns}`, `ceiling${conns}`))} and ${fmtPaired(pairedRatio(`largeTwinVerify${conns}`, `ceiling${conns}`))}`);
  }
  const spread = (key) => {
    const s = r(key).segments;
    return s.length > 1 ? Math.max(...s) / Math.min(...s) - 1 : 0;
  };
  if (['ceiling16', 'ceiling64'].some((k) => spread(k) > 0.3)) out.push('NOTE: the ceiling itself varied by more than 30% between rounds: other work shares these CPUs (the per-round medians are what the targets use)');
  out.push('');

  const login = r('loginOk');
  const loginRatio = login.rps / scryptAlone.perSecond;
  out.push(`scrypt alone: crypto.scrypt N=${cost.N},r=${cost.r},p=${cost.p}, maxmem ${scryptMaxmem(cost)}, ${hashConcurrency} at a time, on the service's CPU: ${scryptAlone.perSecond.toFixed(2)} hashes/s (${(1000 / scryptAlone.perSecond).toFixed(0)} ms each; ${scryptAlone.hashes} in ${scryptAlone.seconds.toFixed(1)} s; before/after the login run ${scryptAlone.parts.map((p) => p.toFixed(2)).join(' / ')})`);
  out.push(`login: authenticate with the correct password, 16 clients: ${login.rps.toFixed(2)} req/s = ${loginRatio.toFixed(3)} of scrypt alone; wrong password ${r('loginBad').rps.toFixed(2)} req/s; register ${r('register').rps.toFixed(2)} req/s`);
  const largeKeys = ['largeVerify16', 'largeTwinVerify16'];
  const smallKeys = ['smallVerify16', 'smallTwinVerify16'];
  const users = pairedSumRatio(largeKeys, smallKeys);
  const usersRatio = users.median;
  const inAll = (keys) => fmtInt(keys.reduce((total, k) => total + r(k).rps, 0) / keys.length);
  out.push(`verify @16, ${U} users vs 10 users (two processes of each, summed per round): ${inAll(largeKeys)} vs ${inAll(smallKeys)} req/s per process in all; per round ${fmtPaired(users)} (difference ${(Math.abs(1 - usersRatio) * 100).toFixed(1)}%)`);
  out.push(`  twins (same code and data), per round: ${U} users ${fmtPaired(pairedRatio('largeVerify16', 'largeTwinVerify16'))}; 10 users ${fmtPaired(pairedRatio('smallVerify16', 'smallTwinVerify16'))}`);
  const stormRatio = r('stormVerify16').rps / r('stormBaseline16').rps;
  out.push(`verify @16 during a 16-client login storm: ${fmtInt(r('stormVerify16').rps)} vs ${fmtInt(r('stormBaseline16').rps)} req/s without it (measured before and after) -> ${stormRatio.toFixed(3)}; p99 ${fmtMs(r('stormVerify16').p99)} ms (without ${fmtMs(r('stormBaseline16').p99)} ms); the storm completed ${r('stormLogins').rps.toFixed(2)} logins/s`);
  out.push(signCostLine(signCost));
  out.push(`peak RSS (VmHWM) of the service: ${U} users after the login storm ${fmtMiB(memory.largeAfterStorm)}, at exit ${fmtMiB(memory.large)} (after list users and register too); ${U} users, twin, verify only ${fmtMiB(memory.twin)}; 10 users ${fmtMiB(memory.small)}; no users ${fmtMiB(memory.empty)}; the token rows' own ${U}-user process after its code exchanges ${fmtMiB(memory.token)}`);
  out.push('');

  const targets = [];
  const target = (ok, text) => targets.push({ ok, text });
  const cpuRatioText = (ratio) => (Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a');
  const verifyCpuRatio = cpuTarget(verifyKeys16);
  target(verifyCpuRatio >= 0.7, `CPU: verify with a valid cookie @16 (log info, two ${U}-user processes) >= 0.7 of bare node:http: ${cpuRatioText(verifyCpuRatio)}`);
  const forwardTarget = (key, min, text) => {
    if (!hasForward) targets.push({ ok: undefined, text: `CPU: ${text} >= ${min} of bare node:http: n/a: route missing` });
    else target(cpuTarget([key]) >= min, `CPU: ${text} >= ${min} of bare node:http: ${cpuRatioText(cpuTarget([key]))}`);
  };
  forwardTarget('forwardCookie16', 0.7, 'forward with a valid cookie @16 (log info)');
  target(cpuTarget(['largeVerifyQuery16']) >= 0.6, `CPU: verify with ?token= @16 >= 0.6 of bare node:http: ${cpuRatioText(cpuTarget(['largeVerifyQuery16']))}`);
  forwardTarget('forwardToken16', 0.6, 'forward with ?token= in X-Original-URI @16');
  for (const [key, text] of [['error401', '401 (GET /users, no credentials)'], ['error403', '403 (GET /users as a USER)'], ['error404', '404 (unknown path)']]) {
    target(cpuTarget([key]) >= 0.6, `CPU: ${text} on kept-alive connections @16 >= 0.6 of bare node:http: ${cpuRatioText(cpuTarget([key]))}`);
  }
  target(cpuTarget(['userinfo16']) >= 0.6, `CPU: OpenID Connect userinfo with a Bearer access token @16 >= 0.6 of bare node:http: ${cpuRatioText(cpuTarget(['userinfo16']))}`);
  for (const conns of [16, 64]) {
    const ratio = hotPath(conns).median;
    target(ratio >= 0.6, `verify with a valid cookie @${conns} (${U} users, log info, two processes) >= 0.6 of the ceiling: ${ratio.toFixed(2)}`);
  }
  target(hotPathP99(64) < 10, `verify with a valid cookie @64 p99 < 10 ms (two processes, pooled): ${fmtMs(hotPathP99(64))} ms`);
  target(Math.abs(1 - usersRatio) <= 0.1, `verify with 10 vs ${U} users within 10% (two processes of each): ${(Math.abs(1 - usersRatio) * 100).toFixed(1)}%`);
  target(stormRatio >= 0.5, `verify during a 16-client login storm keeps >= 0.5 of its throughput: ${stormRatio.toFixed(2)}`);
  target(r('stormVerify16').p99 < 20, `verify during a 16-client login storm p99 < 20 ms: ${fmtMs(r('stormVerify16').p99)} ms`);
  target(loginRatio >= 0.9, `login throughput >= 0.9 of scrypt alone (${hashConcurrency} at a time): ${loginRatio.toFixed(3)} (${login.rps.toFixed(2)} vs ${scryptAlone.perSecond.toFixed(2)}/s)`);
  target(r('largeList16').p99 < 50, `list users with ${U} users p99 < 50 ms: ${fmtMs(r('largeList16').p99)} ms`);
  const hwm = memory.largeAfterStorm?.hwmMiB;
  target(hwm !== undefined && hwm < 200, `peak RSS with ${U} users under a login storm < 200 MiB: ${fmtMiB(memory.largeAfterStorm)}`);
  const unexpected = [...rows.values()].filter((x) => x.notes.some((n) => n.startsWith('UNEXPECTED')));
  target(unexpected.length === 0, `every scenario answered with the expected status${unexpected.length > 0 ? `: not ${unexpected.map((x) => x.label).join(', ')}` : ''}`);
  out.push(`targets (measured on this machine, one run, ${loadgenKind} load generator${opts.quick ? '; --quick: indicative only' : ''}):`);
  for (const t of targets) out.push(`  ${t.ok === undefined ? 'n/a ' : t.ok ? 'PASS' : 'FAIL'}  ${t.text}`);
  if (loadgenKind === 'node') {
    out.push('  note: the node:http load generator tops out near the ceiling\'s rate on its one core, so hot-path ratios near 1');
    out.push('        show the load generator\'s limit, not the service\'s; install wrk for meaningful hot-path ratios');
  }
  out.push('');
  if (slowStops.length > 0) out.push(`WARNING: did not exit within 4 s of SIGTERM and were killed: ${slowStops.join(', ')}`);
  out.push(`bench wall time ${((performance.now() - t0) / 1000).toFixed(1)} s (build not included)`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (opts.strict && targets.some((t) => t.ok === false)) process.exitCode = 1;
}

// ----- --oidc -----

/**
 * Only the OpenID Connect rows, on one 10,000-user service: userinfo and the code exchange (RS256
 * and ES256), each interleaved with the bare server as the full run measures them, and the
 * signing cost alone. For checking these rows without the whole benchmark.
 */
async function oidcRun() {
  const env = await prepare();
  const { secret, config } = env;
  const userCount = Number(opts.users);
  const { warmupS, rounds } = settings;
  const segmentS = loadgenKind === 'wrk' ? Math.max(1, Math.round(settings.segmentS)) : settings.segmentS;
  const dir = join(tempRoot, 'oidc');
  makeDataDir(dir, userCount, await hashLikeService(PASSWORD, config.scryptCost));
  const service = await startService('oidc', dir, { secret });
  const bare = await startBare();
  const oidc = await setUpOidc(service);
  const bareSpec = { url: `${bare.url}/`, headers: service.cookie, pid: bare.pid };
  const rows = new Map();
  const interleaved = async (scenarios) => {
    const segs = scenarios.map(() => []);
    for (let round = 0; round < rounds; round++) {
      const indexes = scenarios.map((_, i) => i);
      if (round % 2 === 1) indexes.reverse();
      for (const i of indexes) {
        const s = scenarios[i];
        const spec = typeof s.spec === 'function' ? await s.spec(round) : s.spec;
        segs[i][round] = await segment({ conns: s.conns, ...spec }, { seconds: segmentS, warmupS: round === 0 && s.prewarmed !== true ? warmupS : 0 });
      }
    }
    for (const [i, s] of scenarios.entries()) rows.set(s.key, { ...s, result: combine(segs[i]) });
  };
  log(`loadgen ${loadgenKind}; pinning ${pinning.enabled ? `service CPU ${pinning.server}, loadgen CPU ${pinning.loadgen}` : 'off'}`);
  await interleaved([
    { key: 'bare16', label: 'bare node:http', conns: 16, spec: bareSpec },
    { key: 'userinfo16', label: 'userinfo, Bearer access token', conns: 16, spec: { url: oidc.userinfoUrl, headers: { Authorization: `Bearer ${oidc.accessToken}` }, pid: service.pid } },
  ]);
  await tokenGroup({ oidc, service, bareSpec, bareLabel: 'bare node:http', warmupS, segment, interleaved });
  const signCost = await signCostAlone();
  await stopService(service);
  await stopChild(bare.child);
  const perRound = (key, bareKey) => median(rows.get(key).result.cpuSegments.map((us, round) => rows.get(bareKey).result.cpuSegments[round] / us));
  const out = ['', `Gatehouse OpenID Connect rows — ${os.cpus()[0]?.model?.trim() ?? 'CPU'}, ${env.cpus} CPUs, node ${process.version}, ${new Date().toISOString()}, ${loadgenKind}, ${rounds} rounds of ${segmentS} s, ${fmtInt(userCount)} users`];
  out.push(`${'row'.padEnd(52)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs/req'.padStart(10)} ${'bare/CPU'.padStart(8)}  notes`);
  for (const [key, bareKey] of [['bare16', 'bare16'], ['userinfo16', 'bare16'], ['bareToken16', 'bareToken16'], ['tokenRs16', 'bareToken16'], ['tokenEs16', 'bareToken16']]) {
    const x = rows.get(key);
    const notes = x.result.non2xx > 0 ? `UNEXPECTED: ${x.result.non2xx} responses >399` : '';
    out.push(`${x.label.padEnd(52)} ${fmtInt(x.result.rps).padStart(8)} ${fmtMs(x.result.p50).padStart(7)} ${fmtMs(x.result.p99).padStart(7)} ${fmtMicros(median(x.result.cpuSegments)).padStart(10)} ${perRound(key, bareKey).toFixed(2).padStart(8)}  ${notes}`);
  }
  out.push(signCostLine(signCost));
  const userinfoRatio = perRound('userinfo16', 'bare16');
  out.push(`target: CPU: userinfo @16 >= 0.6 of bare node:http: ${userinfoRatio.toFixed(2)} ${userinfoRatio >= 0.6 ? 'PASS' : 'FAIL'}`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (opts.strict && userinfoRatio < 0.6) process.exitCode = 1;
}

// ----- --profile -----

async function profileRun() {
  const env = await prepare();
  const { secret, config } = env;
  const userCount = Number(opts.users);
  const profileDir = opts['profile-dir'];
  mkdirSync(profileDir, { recursive: true });
  const before = new Set(readdirSync(profileDir));
  const dir = join(tempRoot, 'profile');
  makeDataDir(dir, userCount, await hashLikeService(PASSWORD, config.scryptCost));
  const profileArgs = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const service = await startService('profile', dir, { secret, logLevel: opts['profile-log-level'], nodeArgs: profileArgs });
  const bare = await startBare(profileArgs);
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  const userCookie = { Cookie: `jwt=${await login(service, 'u1', PASSWORD)}` };
  const requests = {
    verify: { name: 'verify, valid cookie', path: '/api/auth/verify', headers: service.cookie },
    'verify-token': { name: 'verify, ?token=', path: `/api/auth/verify?token=${service.token}`, headers: {} },
    forward: { name: 'forward, valid cookie', path: '/api/auth/forward', headers: service.cookie },
    'forward-token': { name: 'forward, ?token= in X-Original-URI', path: '/api/auth/forward', headers: { 'X-Original-URI': `/flood/api/download?token=${service.token}` } },
    401: { name: '401: GET /users, no credentials', path: '/api/auth/users', headers: {} },
    403: { name: '403: GET /users as a USER', path: '/api/auth/users', headers: userCookie },
    404: { name: '404: unknown path', path: '/api/auth/no-such-path', headers: service.cookie },
  };
  const chosen = requests[opts['profile-request']];
  if (chosen === undefined) throw new Error(`--profile-request must be one of ${Object.keys(requests).join(', ')}`);
  // The bare server gets the very request verify gets (the session cookie included).
  const targets = [
    { name: 'bare node:http', server: bare, spec: { url: `${bare.url}/`, headers: service.cookie } },
    { name: chosen.name, server: service, spec: { url: `${service.url}${chosen.path}`, headers: chosen.headers } },
  ];
  for (const t of targets) await segment({ conns: 16, ...t.spec }, { seconds: Math.max(1, settings.warmupS), warmupS: 0 });
  // Windows: the profile keeps only samples taken while wrk measured (V8's profile clock and
  // process.hrtime are both CLOCK_MONOTONIC on Linux), and /proc gives the CPU time of the same window.
  for (const t of targets) {
    const ticks = cpuTicksOf(t.server.pid);
    t.fromUs = nowUs();
    t.result = await segment({ conns: 16, ...t.spec }, { seconds: settings.durationS, warmupS: 0 });
    t.toUs = nowUs();
    t.cpuMicros = cpuMicrosPerRequest(ticks, cpuTicksOf(t.server.pid), t.result.requests);
    log(`${t.name} @16 under --cpu-prof: ${fmtInt(t.result.requests / t.result.seconds)} req/s, ${fmtMicros(t.cpuMicros)} µs CPU per request${t.result.non2xx ? ` (${t.result.non2xx} >399!)` : ''}`);
  }
  for (const t of targets) {
    t.server.child.kill('SIGTERM');
    await exited(t.server.child);
  }
  const { summarizeCpuProfile, formatSummary } = await import('./bench/cpuprofile-summary.mjs');
  const written = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  const summaries = [];
  for (const t of targets) {
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread (the others are scrypt workers).
    const file = written.find((f) => f.split('.')[3] === String(t.server.pid) && f.split('.')[4] === '0');
    if (file === undefined) throw new Error(`no main-thread .cpuprofile of pid ${t.server.pid} in ${profileDir}`);
    const path = join(profileDir, file);
    const summary = summarizeCpuProfile(JSON.parse(readFileSync(path, 'utf8')), { fromUs: t.fromUs, toUs: t.toUs });
    summaries.push(summary);
    process.stdout.write(`\nprofile ${path}: ${t.name}, 16 connections, ${loadgenKind}, samples of the measured ${settings.durationS} s only; ${t.result.requests} requests; /proc: ${fmtMicros(t.cpuMicros)} µs CPU per request (all threads, kernel included)\n`);
    process.stdout.write(`${formatSummary(summary, { top: 30, requests: t.result.requests })}\n`);
  }
  // Where the difference goes: the main thread's samples, natives charged to their caller, grouped.
  const groupOf = (file) => {
    if (file.startsWith('(')) return file;
    if (file.startsWith('dist/log/')) return 'ours: request log (dist/log)';
    if (file.startsWith('dist/auth/')) return `ours: ${file}`;
    if (file.startsWith('dist/')) return `ours: ${file}`;
    if (/^node:(_http_|internal\/http)/.test(file)) return 'node: http (node:_http_*)';
    if (/^node:(net|stream|internal\/stream|internal\/streams|internal\/stream_base_commons)/.test(file)) return 'node: net and streams';
    if (file.startsWith('node:internal/crypto')) return 'node: crypto (HMAC)';
    if (file.startsWith('node:')) return 'node: other (events, timers, buffer, ...)';
    return file;
  };
  const grouped = summaries.map((summary, i) => {
    const map = new Map();
    for (const { file, selfMs } of summary.callers) if (file !== '(idle)') map.set(groupOf(file), (map.get(groupOf(file)) ?? 0) + (selfMs * 1000) / targets[i].result.requests);
    return map;
  });
  const names = [...new Set([...grouped[0].keys(), ...grouped[1].keys()])].sort((a, b) => (grouped[1].get(b) ?? 0) - (grouped[0].get(b) ?? 0) - ((grouped[1].get(a) ?? 0) - (grouped[0].get(a) ?? 0)));
  process.stdout.write('\nmain-thread profile, µs per request by group (natives charged to their caller; kernel time of a system call is in its caller)\n');
  process.stdout.write(`${'group'.padEnd(44)} ${'bare'.padStart(7)} ${'service'.padStart(7)} ${'diff'.padStart(7)}\n`);
  let sums = [0, 0];
  for (const name of names) {
    const [a, b] = [grouped[0].get(name) ?? 0, grouped[1].get(name) ?? 0];
    sums = [sums[0] + a, sums[1] + b];
    process.stdout.write(`${name.padEnd(44)} ${a.toFixed(2).padStart(7)} ${b.toFixed(2).padStart(7)} ${(b - a).toFixed(2).padStart(7)}\n`);
  }
  process.stdout.write(`${'main thread, sampled'.padEnd(44)} ${sums[0].toFixed(2).padStart(7)} ${sums[1].toFixed(2).padStart(7)} ${(sums[1] - sums[0]).toFixed(2).padStart(7)}\n`);
  process.stdout.write(`${'/proc utime+stime, all threads'.padEnd(44)} ${fmtMicros(targets[0].cpuMicros).padStart(7)} ${fmtMicros(targets[1].cpuMicros).padStart(7)} ${fmtMicros(targets[1].cpuMicros - targets[0].cpuMicros).padStart(7)}\n`);
}

// ----- entry point (last, so every declaration above is initialised) -----

if (opts.role === 'ceiling') runCeiling();
else if (opts.role === 'loadgen') await runLoadgen();
else if (opts.role === 'scrypt') await runScryptAlone();
else if (opts.role === 'sign') await runSignCost(process.env.BENCH_DIST ?? join(ROOT, 'dist'), 2000);
else if (opts.help) process.stdout.write(HELP);
else await main();
// A legitimate login's latency during a 64-address storm (its own script and service).
if (opts.role === undefined && !opts.help && !opts.profile && !opts.oidc) spawnSync(process.execPath, [join(ROOT, 'scripts', 'bench', 'login-fairness.mjs')], { stdio: 'inherit' });
