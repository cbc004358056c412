#!/usr/bin/env node
// Quick A/B of the hot path by CPU time per request: starts one service per build (a copy of a
// dist/ directory each, labelled) and the bare node:http server, and measures each scenario on
// each of them in interleaved rounds under wrk, reading the server's utime+stime from /proc.
// Prints, per scenario and build, the median CPU µs per request, bare µs / build µs, and for two
// builds the per-round ratio B/A. Needs wrk; pins servers to --server-cpus and wrk to --loadgen-cpus.
//
//   cp -r dist /tmp/dist-before; (change, npm run build)
//   node scripts/bench/cpu-ab.mjs --build before=/tmp/dist-before --build after=dist \
//        --scenario verify --scenario 401 [--rounds 9] [--seconds 2] [--conns 16] [--log-level info]
//
// Two processes of one build can differ by a quarter on a shared VM ("process luck"), so start
// each build twice or more under labels NAME:1, NAME:2, ...: the builds of one NAME are then also
// pooled per round (their CPU over their requests) and the pooled groups compared. A placebo (the
// same build under two names) shows the noise floor of the run.
//
// Scenarios: verify, verify-token, forward, forward-token, 401 (GET /users, no credentials),
// 403 (a USER on /users), 404 (unknown path). A forward scenario on a build without the route
// prints "route missing".
//
// --rung NAME (repeatable; answer, request, mac, log, lookup) also measures the rungs of
// scripts/bench/floor-server.mjs, built from the first build's dist/, on verify's request: the
// service's own pieces assembled with nothing else, one more per rung, --rung-processes (2) of
// each. With them, the output ends with a ladder: bare, each rung, then verify on the builds
// named like the first, each pooled per round, and what each step adds to the one before (the
// median of per-round differences): where verify's CPU goes, measured rather than sampled.
//
//   node scripts/bench/cpu-ab.mjs --build service:1=dist --build service:2=dist --scenario verify \
//        --rung answer --rung request --rung mac --rung log --rounds 15 --seconds 1
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { commandOf, cpuMicrosPerRequest, cpuTicksOf } from './cpu-time.mjs';
import { CLIENT, freePort, request, tokenOf } from './http-client.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const { values: opts } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: ['current=dist'] },
    scenario: { type: 'string', multiple: true, default: ['verify'] },
    rung: { type: 'string', multiple: true, default: [] },
    'rung-processes': { type: 'string', default: '2' },
    rounds: { type: 'string', default: '9' },
    seconds: { type: 'string', default: '2' },
    conns: { type: 'string', default: '16' },
    'log-level': { type: 'string', default: 'info' },
    'server-cpus': { type: 'string', default: '0' },
    'loadgen-cpus': { type: 'string', default: '1' },
    help: { type: 'boolean', default: false },
  },
});
if (opts.help) {
  // The comment at the top of this file is the help.
  const help = [];
  for (const text of readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1)) {
    if (!text.startsWith('//')) break;
    help.push(text.replace(/^\/\/ ?/, ''));
  }
  process.stdout.write(`${help.join('\n')}\n`);
  process.exit(0);
}
const rounds = Number(opts.rounds);
const seconds = Number(opts.seconds);
const conns = Number(opts.conns);

const children = new Set();
const temp = mkdtempSync(join(os.tmpdir(), 'gatehouse-cpu-ab-'));
chmodSync(temp, 0o700);
const cleanUp = () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(temp, { recursive: true, force: true });
};
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const pinned = (cpus, command, args) => (spawnSync('taskset', ['-c', cpus, 'true']).status === 0 ? ['taskset', ['-c', cpus, command, ...args]] : [command, args]);
function start(cpus, command, args, options) {
  const [file, argv] = pinned(cpus, command, args);
  const child = spawn(file, argv, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}


async function startBuild(label, distPath) {
  const app = join(temp, label);
  cpSync(resolve(distPath), join(app, 'dist'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  const port = await freePort();
  const env = { ...process.env, GATEHOUSE_DATA_DIR: join(temp, `${label}-data`), GATEHOUSE_PORT: String(port), GATEHOUSE_HOST: '127.0.0.1', GATEHOUSE_SCRYPT: '1024,8,1', GATEHOUSE_LOG_LEVEL: opts['log-level'], GATEHOUSE_SECRET: 'x'.repeat(40), GATEHOUSE_THROTTLE_USER: '1000000', GATEHOUSE_THROTTLE_ADDRESS: '1000000' };
  const child = start(opts['server-cpus'], process.execPath, [join(app, 'dist', 'cli.js'), 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await request(`${url}/healthz`)).status === 200) break;
    } catch {
      if (i > 200) throw new Error(`${label} did not start`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }
  if (commandOf(child.pid) !== basename(process.execPath).slice(0, 15)) throw new Error(`pid ${child.pid} is ${commandOf(child.pid)}, not node`);
  const admin = tokenOf(await request(`${url}/api/auth/register`, { method: 'POST', body: { username: 'admin', password: 'bench-password-1', client: CLIENT, level: 10 } }));
  await request(`${url}/api/auth/register?cookie=false`, { method: 'POST', headers: { cookie: `jwt=${admin}` }, body: { username: 'user', password: 'bench-password-1', client: CLIENT, level: 5 } });
  const user = tokenOf(await request(`${url}/api/auth/authenticate`, { method: 'POST', body: { username: 'user', password: 'bench-password-1' } }));
  for (let i = 0; i < 100; i++) await request(`${url}/api/auth/register?cookie=false`, { method: 'POST', headers: { cookie: `jwt=${admin}` }, body: { username: `u${i}`, password: 'bench-password-1', client: CLIENT, level: 5 } }).catch(() => undefined);
  return { label, url, pid: child.pid, admin, user };
}

const SCENARIOS = {
  verify: (s) => ({ path: '/api/auth/verify', headers: { Cookie: `jwt=${s.admin}` }, status: 200 }),
  'verify-token': (s) => ({ path: `/api/auth/verify?token=${s.admin}`, headers: {}, status: 200 }),
  forward: (s) => ({ path: '/api/auth/forward', headers: { Cookie: `jwt=${s.admin}` }, status: 200 }),
  'forward-token': (s) => ({ path: '/api/auth/forward', headers: { 'X-Original-URI': `/app/download?name=a&token=${s.admin}` }, status: 200 }),
  401: () => ({ path: '/api/auth/users', headers: {}, status: 401 }),
  403: (s) => ({ path: '/api/auth/users', headers: { Cookie: `jwt=${s.user}` }, status: 403 }),
  404: (s) => ({ path: '/api/auth/nothing-here', headers: { Cookie: `jwt=${s.admin}` }, status: 404 }),
};

const lua = join(temp, 'count.lua');
writeFileSync(lua, 'done = function(s) io.write(string.format("AB %d %d %d\\n", s.requests, s.errors.status, s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout)) end\n');

function wrk(url, headers, durationS) {
  return new Promise((ok, fail) => {
    const args = ['-t1', `-c${conns}`, `-d${durationS}s`, '-s', lua];
    for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
    args.push(url);
    const [file, argv] = pinned(opts['loadgen-cpus'], 'wrk', args);
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.once('exit', () => {
      const m = /AB (\d+) (\d+) (\d+)/.exec(out);
      if (m === null) fail(new Error(`wrk: ${out}`));
      else ok({ requests: Number(m[1]), non2xx: Number(m[2]), socketErrors: Number(m[3]) });
    });
  });
}

async function measure(target, spec) {
  const before = cpuTicksOf(target.pid);
  const r = await wrk(`${target.url}${spec.path}`, spec.headers, seconds);
  const after = cpuTicksOf(target.pid);
  return { ...r, micros: cpuMicrosPerRequest(before, after, r.requests) };
}

const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const bareChild = start(opts['server-cpus'], process.execPath, [join(HERE, 'bare-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
const bareInfo = await new Promise((ok) => bareChild.stdout.once('data', (c) => ok(JSON.parse(String(c).split('\n')[0]))));
const bare = { label: 'bare', url: `http://127.0.0.1:${bareInfo.port}`, pid: bareChild.pid };
const builds = [];
for (const entry of opts.build) {
  const [label, path] = entry.includes('=') ? entry.split('=') : [entry, entry];
  builds.push(await startBuild(label, path));
}

// Cells: bare once per round, then each scenario on each build; order reversed every other round.
const cells = [{ key: 'bare', target: bare, spec: { path: '/', headers: builds[0] === undefined ? {} : { Cookie: `jwt=${builds[0].admin}` }, status: 200 } }];
for (const name of opts.scenario) {
  if (SCENARIOS[name] === undefined) throw new Error(`unknown scenario ${name}`);
  for (const build of builds) {
    const spec = SCENARIOS[name](build);
    const probe = await request(`${build.url}${spec.path}`, { headers: spec.headers });
    if (name.startsWith('forward') && probe.status === 404) {
      process.stdout.write(`${name} on ${build.label}: n/a: route missing\n`);
      continue;
    }
    if (probe.status !== spec.status) throw new Error(`${name} on ${build.label}: expected ${spec.status}, got ${probe.status} ${probe.body}`);
    cells.push({ key: `${name} ${build.label}`, name, build, target: build, spec });
  }
}
// The floor rungs, on verify's request, each with the cookie its server signed; --rung-processes
// of each, pooled per round as the builds NAME:N are.
const rungCells = [];
for (const rung of opts.rung) {
  const distPath = resolve(opts.build[0].includes('=') ? opts.build[0].split('=')[1] : opts.build[0]);
  for (let copy = 1; copy <= Number(opts['rung-processes']); copy++) {
    const child = start(opts['server-cpus'], process.execPath, [join(HERE, 'floor-server.mjs'), distPath, rung], { stdio: ['ignore', 'pipe', 'inherit'] });
    const info = await new Promise((ok, fail) => {
      child.stdout.once('data', (c) => ok(JSON.parse(String(c).split('\n')[0])));
      child.once('exit', (code) => fail(new Error(`floor-server ${rung} exited with ${code}`)));
    });
    const target = { label: `rung ${rung}:${copy}`, url: `http://127.0.0.1:${info.port}`, pid: child.pid };
    const spec = { path: '/api/auth/verify', headers: { Cookie: info.cookie }, status: 200 };
    const probe = await request(`${target.url}${spec.path}`, { headers: spec.headers });
    if (probe.status !== 200) throw new Error(`rung ${rung}: expected 200, got ${probe.status}`);
    rungCells.push({ key: target.label, rung, target, spec });
  }
}
cells.splice(1, 0, ...rungCells);
for (const cell of cells) await wrk(`${cell.target.url}${cell.spec.path}`, cell.spec.headers, 1); // warm-up
const results = new Map(cells.map((c) => [c.key, []]));
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? cells : [...cells].reverse();
  for (const cell of order) results.get(cell.key)[round] = await measure(cell.target, cell.spec);
}

const bareMicros = results.get('bare').map((r) => r.micros);
const line = (cols) => process.stdout.write(`${cols.join('  ')}\n`);
line([`bare node:http: median ${median(bareMicros).toFixed(2)} µs/request, ${median(results.get('bare').map((r) => r.requests / seconds)).toFixed(0)} req/s; ${rounds} rounds of ${seconds} s, ${conns} connections, log level ${opts['log-level']}`]);
for (const cell of cells.slice(1)) {
  const rs = results.get(cell.key);
  const micros = rs.map((r) => r.micros);
  const vsBare = median(micros.map((m, i) => bareMicros[i] / m));
  const odd = rs.reduce((n, r) => n + (cell.spec.status === 200 ? r.non2xx : 0) + r.socketErrors, 0);
  line([cell.key.padEnd(24), `${median(micros).toFixed(2).padStart(7)} µs/req`, `bare/this ${vsBare.toFixed(3)}`, `req/s ${median(rs.map((r) => r.requests / seconds)).toFixed(0)}`, `rounds ${Math.min(...micros).toFixed(1)}–${Math.max(...micros).toFixed(1)} µs`, odd > 0 ? `(${odd} unexpected answers or socket errors)` : '']);
}
if (rungCells.length > 0) {
  // The ladder: bare, each rung (its processes pooled), then verify on the first build's NAME
  // (its processes pooled); each step is the median over rounds of the difference from the step before.
  const pooledOf = (keys) => Array.from({ length: rounds }, (_, round) => {
    const rs = keys.map((key) => results.get(key)?.[round]).filter((r) => r !== undefined);
    return rs.reduce((sum, r) => sum + r.micros * r.requests, 0) / rs.reduce((sum, r) => sum + r.requests, 0);
  });
  const serviceName = builds[0]?.label.split(':')[0];
  const serviceKeys = builds.filter((b) => b.label.split(':')[0] === serviceName).map((b) => `verify ${b.label}`).filter((key) => results.has(key));
  const ladder = [{ name: 'bare node:http', series: pooledOf(['bare']) }];
  for (const rung of opts.rung.filter((name) => name !== 'lookup')) ladder.push({ name: `rung ${rung}`, series: pooledOf(rungCells.filter((c) => c.rung === rung).map((c) => c.key)) });
  if (serviceKeys.length > 0) ladder.push({ name: `verify ${serviceName}`, series: pooledOf(serviceKeys) });
  line([`ladder (CPU µs per request; each rung's processes pooled per round; a step is the median of per-round differences):`]);
  for (let i = 0; i < ladder.length; i++) {
    const { name, series } = ladder[i];
    const vsBare = median(series.map((m, round) => bareMicros[round] / m));
    const step = i === 0 ? '' : (() => {
      const steps = series.map((m, round) => m - ladder[i - 1].series[round]);
      return `adds ${median(steps).toFixed(2).padStart(6)} µs (rounds ${Math.min(...steps).toFixed(1)} to ${Math.max(...steps).toFixed(1)})`;
    })();
    line([`  ${name.padEnd(22)} ${median(series).toFixed(2).padStart(7)} µs  bare/this ${vsBare.toFixed(3)}  ${step}`]);
  }
  if (opts.rung.includes('lookup')) {
    const series = pooledOf(rungCells.filter((c) => c.rung === 'lookup').map((c) => c.key));
    line([`  (rung lookup, not on the ladder: ${median(series).toFixed(2)} µs, bare/this ${median(series.map((m, round) => bareMicros[round] / m)).toFixed(3)})`]);
  }
}
if (builds.length >= 2) {
  // Every build against the first, and each against the one before it.
  const pairs = builds.slice(1).map((build) => [builds[0], build]);
  for (let i = 2; i < builds.length; i++) pairs.push([builds[i - 1], builds[i]]);
  for (const name of opts.scenario) {
    for (const [first, build] of pairs) {
      const a = results.get(`${name} ${first.label}`);
      const b = results.get(`${name} ${build.label}`);
      if (a === undefined || b === undefined) continue;
      const ratios = b.map((r, i) => r.micros / a[i].micros);
      line([`${name}: ${build.label}/${first.label} CPU per request, per round: median ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}); difference ${(median(a.map((r) => r.micros)) - median(b.map((r) => r.micros))).toFixed(2)} µs`]);
    }
  }
}
// Pooled groups: labels NAME:N with the same NAME.
const groups = new Map();
for (const build of builds) {
  const name = build.label.split(':')[0];
  if (name !== build.label) groups.set(name, [...(groups.get(name) ?? []), build]);
}
if (groups.size >= 2) {
  const names = [...groups.keys()];
  for (const scenario of opts.scenario) {
    const pooled = (name, round) => {
      const rs = groups.get(name).map((b) => results.get(`${scenario} ${b.label}`)?.[round]).filter((r) => r !== undefined);
      return rs.reduce((sum, r) => sum + r.micros * r.requests, 0) / rs.reduce((sum, r) => sum + r.requests, 0);
    };
    const series = new Map(names.map((name) => [name, Array.from({ length: rounds }, (_, round) => pooled(name, round))]));
    for (const name of names) line([`${scenario} ${name} (${groups.get(name).length} processes pooled): median ${median(series.get(name)).toFixed(2)} µs/req, bare/this ${median(series.get(name).map((m, i) => bareMicros[i] / m)).toFixed(3)}`]);
    for (const name of names.slice(1)) {
      const ratios = series.get(name).map((m, i) => m / series.get(names[0])[i]);
      line([`${scenario}: ${name}/${names[0]} pooled, per round: median ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}); difference ${(median(series.get(names[0])) - median(series.get(name))).toFixed(2)} µs`]);
    }
  }
}
process.exit(0);
