#!/usr/bin/env node
// A/B of the hot path by instructions per request, for a machine too busy for CPU time: starts one
// service per build under valgrind's callgrind (a copy of a dist/ directory each, labelled), warms
// each up, then in interleaved rounds zeroes the counters (callgrind_control -z), sends a fixed
// number of requests one after another on one kept-alive connection, and dumps the counters
// (callgrind_control -d). A count of instructions does not grow when another process takes the
// core, as CPU time does. Only the main thread is counted: the JIT's compiler threads and the
// collector's helpers run when they get a core. What still moves the count is the main thread's own
// share of that work (scavenges, on-stack replacement), so valgrind instruments only after the
// warm-up, and each cell is the median over the rounds, its spread printed beside it. Needs
// valgrind (Debian's package) and its callgrind_control.
//
//   cp -r dist /tmp/dist-before; (change, npm run build)
//   node scripts/bench/instructions-ab.mjs --build before=/tmp/dist-before --build after=dist \
//        --scenario verify --scenario forward [--rounds 7] [--requests 2000] [--warm-up 4000]
//
// Prints, per scenario and build, the median instructions per request and the range over rounds,
// and for two builds the median of the per-round ratios second/first (above 1: the second build
// runs more instructions per request).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CLIENT, freePort, request, tokenOf } from './http-client.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const { values: opts } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: ['current=dist'] },
    scenario: { type: 'string', multiple: true, default: ['verify'] },
    rounds: { type: 'string', default: '7' },
    requests: { type: 'string', default: '2000' },
    'warm-up': { type: 'string', default: '4000' },
  },
});
const rounds = Number(opts.rounds);
const requests = Number(opts.requests);
const warmUp = Number(opts['warm-up']);
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('valgrind is not installed (apt-get install -y valgrind)');
  process.exit(2);
}

const children = new Set();
const temp = mkdtempSync(join(os.tmpdir(), 'gatehouse-instructions-ab-'));
chmodSync(temp, 0o700);
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(temp, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
async function waitForHealth(url, label, tries) {
  for (let i = 0; ; i++) {
    try {
      if ((await request(`${url}/healthz`)).status === 200) return;
    } catch {
      if (i > tries) throw new Error(`${label} did not start`);
      await new Promise((ok) => setTimeout(ok, 200));
    }
  }
}


async function startBuild(label, distPath) {
  const app = join(temp, label);
  cpSync(resolve(distPath), join(app, 'dist'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  const port = await freePort();
  const env = {
    ...process.env, GATEHOUSE_DATA_DIR: join(temp, `${label}-data`), GATEHOUSE_PORT: String(port), GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_SCRYPT: '1024,8,1', GATEHOUSE_LOG_LEVEL: 'info', GATEHOUSE_SECRET: 'x'.repeat(40),
  };
  const url = `http://127.0.0.1:${port}`;
  // The account is made by the service run plainly: under valgrind a write can outlast the store's
  // deadline. The session (its token and record) outlives the restart under valgrind.
  const plain = spawn(process.execPath, [join(app, 'dist', 'cli.js'), 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  children.add(plain);
  await waitForHealth(url, label, 300);
  const registered = await request(`${url}/api/auth/register`, { method: 'POST', body: { username: 'admin', password: 'bench-password-1', client: CLIENT, level: 10 } });
  const admin = tokenOf(registered);
  if (admin === undefined) throw new Error(`${label}: the first registration answered ${registered.status} ${registered.body}`);
  await new Promise((ok) => { plain.once('exit', ok); plain.kill('SIGTERM'); });
  children.delete(plain);
  const out = join(temp, `${label}.callgrind`);
  const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${out}.%p`, process.execPath, join(app, 'dist', 'cli.js'), 'serve'], {
    env, stdio: ['ignore', 'ignore', openSync(join(os.tmpdir(), `gatehouse-instructions-ab-${label}.stderr`), 'w')],
  });
  children.add(child);
  await waitForHealth(url, label, 1200);
  return { label, url, pid: child.pid, admin, out };
}

const SCENARIOS = {
  verify: (s) => ({ path: '/api/auth/verify', headers: { Cookie: `jwt=${s.admin}` }, status: 200 }),
  forward: (s) => ({ path: '/api/auth/forward', headers: { Cookie: `jwt=${s.admin}` }, status: 200 }),
  401: () => ({ path: '/api/auth/users', headers: {}, status: 401 }),
};

async function send(build, spec, count) {
  for (let i = 0; i < count; i++) {
    // The service closes a connection idle past its keep-alive timeout, which a pause for
    // callgrind_control can reach: such a request is sent again on a new connection.
    let res;
    for (let attempt = 1; res === undefined; attempt++) {
      res = await request(`${build.url}${spec.path}`, { headers: spec.headers, agent })
        .catch((error) => (error.code === 'ECONNRESET' && attempt < 5 ? undefined : Promise.reject(error)));
    }
    if (res.status !== spec.status) throw new Error(`${build.label} ${spec.path}: ${res.status}, expected ${spec.status}`);
  }
}

function control(flag, pid, value) {
  const result = spawnSync('callgrind_control', value === undefined ? [flag, String(pid)] : [flag, value, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${result.stderr}`);
}

/**
 * The instructions the main thread ran since the last zero: the newest dump of that process, its
 * thread 1 (with --separate-threads each thread is dumped to a file of its own, `...N-TT`). The JIT's
 * compiler threads and the collector's helpers do their work off that thread, when they get to it.
 */
function dumpedInstructions(build) {
  control('-d', build.pid);
  const pattern = new RegExp(`^${build.label}\\.callgrind\\.${build.pid}\\.(\\d+)-01$`);
  const newest = readdirSync(temp).map((name) => ({ name, m: pattern.exec(name) })).filter(({ m }) => m !== null)
    .sort((a, b) => Number(b.m[1]) - Number(a.m[1]))[0];
  if (newest === undefined) throw new Error(`no dump of ${build.label}'s main thread in ${readdirSync(temp).join(' ')}`);
  const summary = /^summary: (\d+)/m.exec(readFileSync(join(temp, newest.name), 'utf8'));
  if (summary === null) throw new Error(`no summary in ${newest.name}`);
  return Number(summary[1]);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const builds = [];
for (const entry of opts.build) {
  const [label, path] = entry.includes('=') ? entry.split('=') : [entry, entry];
  builds.push(await startBuild(label, path));
  process.stdout.write(`${label}: started under callgrind\n`);
}
for (const build of builds) {
  for (const name of opts.scenario) await send(build, SCENARIOS[name](build), warmUp);
}
// Instrumented from here on: start-up and warm-up ran at valgrind's uninstrumented speed.
for (const build of builds) control('-i', build.pid, 'on');
for (const build of builds) {
  for (const name of opts.scenario) await send(build, SCENARIOS[name](build), Math.ceil(requests / 4));
}
process.stdout.write(`warmed up with ${warmUp} requests per scenario\n`);

const perRequest = new Map();
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const name of opts.scenario) {
    for (const build of order) {
      control('-z', build.pid);
      await send(build, SCENARIOS[name](build), requests);
      const key = `${name}\t${build.label}`;
      perRequest.set(key, [...(perRequest.get(key) ?? []), dumpedInstructions(build) / requests]);
    }
  }
  process.stdout.write(`round ${round + 1} of ${rounds}\n`);
}

for (const name of opts.scenario) {
  for (const build of builds) {
    const xs = perRequest.get(`${name}\t${build.label}`);
    process.stdout.write(`${name} ${build.label}: ${Math.round(median(xs))} instructions per request (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})\n`);
  }
  // Builds named NAME:1, NAME:2, ... are processes of one build: pooled per round (their summed
  // instructions over their summed requests, all sent the same count), then compared.
  const groups = [...new Set(builds.map((build) => build.label.split(':')[0]))];
  if (groups.length === 2) {
    const pooled = groups.map((group) => {
      const members = builds.filter((build) => build.label.split(':')[0] === group).map((build) => perRequest.get(`${name}\t${build.label}`));
      return members[0].map((_, round) => members.reduce((sum, xs) => sum + xs[round], 0) / members.length);
    });
    const ratios = pooled[0].map((x, i) => pooled[1][i] / x);
    process.stdout.write(`${name} ${groups[1]}/${groups[0]}: ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})\n`);
  }
}
agent.destroy();
process.exit(0);
