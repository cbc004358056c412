#!/usr/bin/env node
// Scale check: how the BUILT service behaves with 1k, 10k and 100k users.
// For each size it writes a valid users.json (one precomputed scrypt hash shared by every user,
// distinct usernames), starts `node dist/cli.js serve` on 127.0.0.1 and measures:
//   - start-up: spawn -> listening line (median of several starts)
//   - one write: one PATCH of client settings (median of several sequential samples)
//   - 64 PATCHes one after another vs 64 at once (group commit batches the concurrent ones)
//   - memory: VmRSS and VmHWM (peak RSS) after start, and VmHWM at the end, from /proc/PID/status
//   - correctness: the list count, the patched settings in users.json, a register that survives a restart
//
//   npm run build && node scripts/scale.mjs [--sizes 1000,10000,100000] [--samples 9]
import { spawn } from 'node:child_process';
import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI_PATH = join(REPO_ROOT, 'dist', 'cli.js');
const SECRET = 'scale-test-secret-0123456789-abcdefghijklmnopqr';
const PASSWORD = 'scale-password';
const COST = { N: 1024, r: 8, p: 1 };

function parseArguments(argv) {
  const options = { sizes: [1000, 10_000, 100_000], samples: 9, starts: 3 };
  for (let i = 0; i < argv.length; i++) {
    const next = () => argv[++i] ?? '';
    if (argv[i] === '--sizes') options.sizes = next().split(',').map(Number);
    else if (argv[i] === '--samples') options.samples = Number(next());
    else if (argv[i] === '--starts') options.starts = Number(next());
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return options;
}

/** One hash in the service's own format, reused for every user (hashing 100k passwords would take minutes). */
function precomputedHash() {
  const salt = randomBytes(16);
  const key = scryptSync(PASSWORD, salt, 32, { ...COST, maxmem: 64 * 1024 * 1024 });
  return `$scrypt$ln=${Math.log2(COST.N)},r=${COST.r},p=${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const nameOf = (i) => (i === 0 ? 'admin' : `user${String(i).padStart(6, '0')}`);

function writeUsersFile(dir, count, hash) {
  const changedAt = Math.floor(Date.now() / 1000) - 3600;
  const lines = [];
  for (let i = 0; i < count; i++) {
    lines.push(
      JSON.stringify({
        username: nameOf(i),
        level: i === 0 ? 10 : 5,
        passwordHash: hash,
        client: { client: 'rTorrent', type: 'socket', version: 1, socket: `/run/u${i}.sock` },
        credentialsChangedAt: changedAt,
        sessionKey: randomBytes(16).toString('base64url'),
      }),
    );
  }
  const path = join(dir, 'users.json');
  writeFileSync(path, `{"format":1,"users":[\n${lines.join(',\n')}\n]}\n`, { mode: 0o600 });
  return statSync(path).size;
}

function startService(dir) {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn(process.execPath, [CLI_PATH, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], {
      env: { PATH: process.env.PATH ?? '', GATEHOUSE_SECRET: SECRET, GATEHOUSE_SCRYPT: `${COST.N},${COST.r},${COST.p}`, GATEHOUSE_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let isListening = false;
    const exited = new Promise((resolveExit) => child.once('close', (code, signal) => resolveExit({ code, signal })));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line within 120 s:\n${output.slice(-4000)}`));
    }, 120_000);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      if (isListening) return;
      output += chunk;
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match !== null) {
        isListening = true;
        clearTimeout(timer);
        resolve({ child, port: Number(match[1]), exited, startupMs: performance.now() - startedAt });
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    void exited.then(({ code }) => {
      if (isListening) return;
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code} before listening:\n${output.slice(-4000)}`));
    });
  });
}

async function stopService(service) {
  service.child.kill('SIGTERM');
  const exit = await service.exited;
  if (exit.code !== 0) throw new Error(`the service exited with ${exit.code ?? exit.signal} on SIGTERM`);
}

function send(port, agent, method, path, body, token) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = { accept: 'application/json' };
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    if (token !== undefined) headers.cookie = `jwt=${token}`;
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, text, json: text === '' ? undefined : JSON.parse(text), headers: res.headers });
      });
    });
    req.setTimeout(120_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rssMb: field('VmRSS'), hwmMb: field('VmHWM') };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what} answered ${res.status} ${res.text}`);
}

async function measure(count, options, hash) {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-scale-${count}-`));
  try {
    const fileBytes = writeUsersFile(dir, count, hash);
    const startups = [];
    for (let i = 0; i < options.starts - 1; i++) {
      const service = await startService(dir);
      startups.push(service.startupMs);
      await stopService(service);
    }
    const service = await startService(dir);
    startups.push(service.startupMs);
    const afterStart = memoryOf(service.child.pid);
    const agent = new Agent({ keepAlive: true, maxSockets: 128 });
    const problems = [];
    try {
      const login = await send(service.port, agent, 'POST', '/api/auth/authenticate', { username: 'admin', password: PASSWORD });
      expectStatus(login, 200, 'login');
      const token = /^jwt=([^;]+)/.exec((login.headers['set-cookie'] ?? [])[0] ?? '')?.[1];
      const lastSocket = new Map();
      const patch = async (i, tag) => {
        const socket = `/run/${tag}-${i}.sock`;
        const res = await send(service.port, agent, 'PATCH', `/api/auth/users/${nameOf(i)}`, { client: { client: 'rTorrent', type: 'socket', version: 1, socket } }, token);
        expectStatus(res, 200, `PATCH ${nameOf(i)}`);
        lastSocket.set(nameOf(i), socket);
      };
      const target = (k) => 1 + ((k * 7919) % (count - 1));

      // One write, sequential samples (the first is a warm-up).
      await patch(target(0), 'warm');
      const writes = [];
      for (let k = 1; k <= options.samples; k++) {
        const t = performance.now();
        await patch(target(k), 'one');
        writes.push(performance.now() - t);
      }

      // 64 one after another, then 64 at once.
      let t = performance.now();
      for (let k = 0; k < 64; k++) await patch(target(100 + k), 'seq');
      const sequentialMs = performance.now() - t;
      t = performance.now();
      await Promise.all(Array.from({ length: 64 }, (_, k) => patch(target(200 + k), 'conc')));
      const concurrentMs = performance.now() - t;

      // Reads and writes are right.
      const list = await send(service.port, agent, 'GET', '/api/auth/users', undefined, token);
      expectStatus(list, 200, 'list');
      if (list.json.length !== count) problems.push(`list has ${list.json.length} users, expected ${count}`);
      const registered = await send(service.port, agent, 'POST', '/api/auth/register?cookie=false', { username: 'scale-new', password: 'new-password', client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/n' }, level: 5 }, token);
      expectStatus(registered, 200, 'register');
      const peak = memoryOf(service.child.pid);
      agent.destroy();
      await stopService(service);

      const onDisk = JSON.parse(readFileSync(join(dir, 'users.json'), 'utf8')).users;
      const byName = new Map(onDisk.map((user) => [user.username, user]));
      for (const [name, socket] of lastSocket) {
        if (byName.get(name)?.client?.socket !== socket) problems.push(`${name} has socket ${byName.get(name)?.client?.socket} on disk, expected ${socket}`);
      }
      const reopened = await startService(dir);
      const reopenAgent = new Agent({ keepAlive: false });
      const relogin = await send(reopened.port, reopenAgent, 'POST', '/api/auth/authenticate', { username: 'scale-new', password: 'new-password' });
      if (relogin.status !== 200) problems.push(`the registered user cannot log in after a restart (${relogin.status})`);
      const relist = await send(reopened.port, reopenAgent, 'GET', '/api/auth/users', undefined, token);
      if (relist.json?.length !== count + 1) problems.push(`after a restart the list has ${relist.json?.length} users, expected ${count + 1}`);
      await stopService(reopened);

      return {
        count,
        fileMb: fileBytes / 1024 / 1024,
        startupMs: median(startups),
        rssMb: afterStart.rssMb,
        startHwmMb: afterStart.hwmMb,
        hwmMb: peak.hwmMb,
        writeMs: median(writes),
        writeMaxMs: Math.max(...writes),
        sequentialOps: 64 / (sequentialMs / 1000),
        concurrentOps: 64 / (concurrentMs / 1000),
        sequentialMs,
        concurrentMs,
        problems,
      };
    } finally {
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(rows) {
  const header = ['users', 'file MB', 'start-up ms', 'RSS MB (peak) after start', 'peak RSS MB at end', 'one write ms (median / max)', '64 sequential', '64 concurrent', 'gain', 'correct'];
  const lines = rows.map((row) => [
    row.count.toLocaleString('en-US'),
    row.fileMb.toFixed(2),
    row.startupMs.toFixed(0),
    `${row.rssMb.toFixed(0)} (${row.startHwmMb.toFixed(0)})`,
    row.hwmMb.toFixed(0),
    `${row.writeMs.toFixed(1)} / ${row.writeMaxMs.toFixed(1)}`,
    `${row.sequentialOps.toFixed(0)}/s (${row.sequentialMs.toFixed(0)} ms)`,
    `${row.concurrentOps.toFixed(0)}/s (${row.concurrentMs.toFixed(0)} ms)`,
    `${(row.concurrentOps / row.sequentialOps).toFixed(1)}x`,
    row.problems.length === 0 ? 'yes' : 'NO',
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)));
  const format = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  return [format(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...lines.map(format)].join('\n');
}

const options = parseArguments(process.argv.slice(2));
const hash = precomputedHash();
const rows = [];
for (const count of options.sizes) {
  process.stderr.write(`measuring ${count} users...\n`);
  rows.push(await measure(count, options, hash));
}
console.log(table(rows));
const first = rows[0];
const last = rows[rows.length - 1];
if (rows.length > 1) {
  const factor = last.count / first.count;
  console.log(
    `\nFrom ${first.count} to ${last.count} users (x${factor}): start-up x${(last.startupMs / first.startupMs).toFixed(1)}, ` +
      `one write x${(last.writeMs / first.writeMs).toFixed(1)}, peak RSS x${(last.hwmMb / first.hwmMb).toFixed(1)}; ` +
      `at ${last.count} users 64 concurrent writes finish ${(last.concurrentOps / last.sequentialOps).toFixed(1)}x faster than 64 sequential ones (group commit).`,
  );
}
const problems = rows.flatMap((row) => row.problems.map((problem) => `${row.count} users: ${problem}`));
for (const problem of problems) console.log(`PROBLEM ${problem}`);
process.exit(problems.length > 0 ? 1 : 0);
