#!/usr/bin/env node
// Login fairness under a storm: how long a legitimate login takes while 64
// addresses, each in its own /24, keep the hash queue full with failed logins for random
// usernames. Plain ESM, node: modules only.
//
//   node scripts/bench/login-fairness.mjs [--cli PATH] [--samples N] [--give-up S]
//     [--storm-addresses 64] [--storm-networks 64] [--storm-depth 8]
//
// Starts the built service (dist/cli.js, or --cli) on a temporary data directory with
// --trust-proxy 127.0.0.1 and the default scrypt cost and hash concurrency, registers one user,
// then measures that user's login (each sample from its own address, outside every storm /24):
//   alone:        N logins one after another, no other load
//   during storm: N logins started one every 1.5 s while the storm runs; a 503 is retried after its
//                 Retry-After, as a client would, and the figure is the time to the 200 (or "gave
//                 up" after --give-up seconds).
// The storm: 64 X-Forwarded-For addresses (10.N.0.7, N = 0..63), 8 requests in flight each,
// by default; --storm-networks M spreads the addresses over M /24s instead (address i is
// 10.(i mod M).0.(7 + i div M)), as an attacker holding a few subnets would,
// re-sent as soon as answered (after 200 ms when refused with 429 or 503, so refusals do not
// spin the machine). Everything stops by itself: the whole run takes well under 60 s (a login
// still waiting after --give-up seconds is abandoned and counted as given up).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: opts } = parseArgs({
  options: {
    cli: { type: 'string', default: join(ROOT, 'dist', 'cli.js') },
    samples: { type: 'string', default: '5' },
    'give-up': { type: 'string', default: '20' },
    'storm-addresses': { type: 'string', default: '64' },
    'storm-networks': { type: 'string' },
    'storm-depth': { type: 'string', default: '8' },
    help: { type: 'boolean' },
  },
});
if (opts.help) {
  process.stdout.write('Usage: node scripts/bench/login-fairness.mjs [--cli dist/cli.js] [--samples 5] [--give-up 20] [--storm-addresses 64] [--storm-networks 64] [--storm-depth 8]\n');
  process.exit(0);
}
const SAMPLES = Number(opts.samples);
const GIVE_UP_MS = Number(opts['give-up']) * 1000;
const STORM_ADDRESSES = Number(opts['storm-addresses']);
const STORM_NETWORKS = Number(opts['storm-networks'] ?? opts['storm-addresses']);
const STORM_DEPTH = Number(opts['storm-depth']);
if (!(STORM_NETWORKS >= 1 && STORM_NETWORKS <= 256 && Math.ceil(STORM_ADDRESSES / STORM_NETWORKS) <= 248)) throw new Error('--storm-networks: 1 to 256, with at most 248 addresses in each');
const stormAddress = (i) => `10.${i % STORM_NETWORKS}.0.${7 + Math.floor(i / STORM_NETWORKS)}`;
const USERNAME = 'legit';
const PASSWORD = 'legit-password-1';
const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' };

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-fairness-'));
let service;
const cleanUp = () => {
  service?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
};
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130));
// Nothing here may run for ever.
setTimeout(() => {
  process.stderr.write('login-fairness: overall time limit (90 s) reached\n');
  process.exit(1);
}, 90_000).unref();

function startService() {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '' };
    service = spawn(process.execPath, [opts.cli, 'serve', '--port', '0', '--data-dir', dataDir, '--trust-proxy', '127.0.0.1', '--log-level', 'error'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    service.stdout.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^"\s]+)/.exec(text);
      if (match !== null) resolve(match[1]);
    });
    service.once('exit', (code) => reject(new Error(`the service exited early (${code})`)));
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: STORM_ADDRESSES * STORM_DEPTH + 64 });

function post(url, path, body, forwardedFor, signal) {
  return new Promise((resolve) => {
    const payload = Buffer.from(JSON.stringify(body));
    const headers = { 'content-type': 'application/json', 'content-length': String(payload.length), accept: 'application/json' };
    if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
    const req = http.request(`${url}${path}`, { method: 'POST', headers, agent, ...(signal === undefined ? {} : { signal }) }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers['retry-after'] ?? 1) }));
    });
    req.on('error', () => resolve({ status: 0, retryAfter: 1 }));
    req.end(payload);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One legitimate login: retried on 503 after Retry-After, until 200 or giving up (a request still waiting then is abandoned). */
async function legitimateLogin(url, address) {
  const started = performance.now();
  let busy = 0;
  for (;;) {
    const signal = AbortSignal.timeout(Math.max(1, Math.round(GIVE_UP_MS - (performance.now() - started))));
    const res = await post(url, '/api/auth/authenticate', { username: USERNAME, password: PASSWORD }, address, signal);
    const elapsed = performance.now() - started;
    if (res.status === 200) return { ms: elapsed, busy, servedOk: true };
    if (res.status === 0) return { ms: elapsed, busy, servedOk: false };
    if (res.status !== 503) throw new Error(`the legitimate login answered ${res.status}`);
    busy++;
    if (elapsed + res.retryAfter * 1000 > GIVE_UP_MS) return { ms: elapsed, busy, servedOk: false };
    await sleep(res.retryAfter * 1000);
  }
}

function summary(results) {
  const served = results.filter((r) => r.servedOk).map((r) => r.ms).sort((a, b) => a - b);
  const median = served.length === 0 ? undefined : served[Math.floor((served.length - 1) / 2)];
  const max = served.length === 0 ? undefined : served[served.length - 1];
  const fmt = (ms) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(2)} s`);
  const gaveUp = results.length - served.length;
  const busy = results.reduce((sum, r) => sum + r.busy, 0);
  return `served ${served.length}/${results.length}, median ${fmt(median)}, max ${fmt(max)}${gaveUp > 0 ? `, ${gaveUp} gave up after ${GIVE_UP_MS / 1000} s` : ''}, ${busy} answers 503 on the way`;
}

const url = await startService();
const registered = await post(url, '/api/auth/register?cookie=false', { username: USERNAME, password: PASSWORD, client: CLIENT, level: 10 });
if (registered.status !== 200) throw new Error(`registering the user answered ${registered.status}`);

const alone = [];
for (let i = 0; i < SAMPLES; i++) alone.push(await legitimateLogin(url, `192.0.2.${10 + i}`));
process.stdout.write(`login alone:          ${summary(alone)}\n`);

let isStorming = true;
const stormCounts = new Map();
const stormWorker = async (address) => {
  while (isStorming) {
    const res = await post(url, '/api/auth/authenticate', { username: `nobody-${randomBytes(6).toString('hex')}`, password: 'wrong-password' }, address);
    stormCounts.set(res.status, (stormCounts.get(res.status) ?? 0) + 1);
    if (res.status === 429 || res.status === 503 || res.status === 0) await sleep(200);
  }
};
const workers = [];
for (let n = 0; n < STORM_ADDRESSES; n++) for (let d = 0; d < STORM_DEPTH; d++) workers.push(stormWorker(stormAddress(n)));
await sleep(3_000); // let the storm fill the queue
const during = await Promise.all(
  Array.from({ length: SAMPLES }, async (_, i) => {
    await sleep(i * 1_500);
    return legitimateLogin(url, `192.0.2.${100 + i}`);
  }),
);
isStorming = false;
process.stdout.write(`login during storm:   ${summary(during)}\n`);
process.stdout.write(`storm (${STORM_ADDRESSES} addresses in ${STORM_NETWORKS} /24s, ${STORM_DEPTH} in flight each): ${[...stormCounts].sort().map(([status, count]) => `${count} x ${status}`).join(', ')}\n`);
// The storm's last requests may still be queued: stop the service rather than wait for them.
service.kill('SIGKILL');
agent.destroy();
process.exit(0);
