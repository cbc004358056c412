#!/usr/bin/env node
// Crash test: runs the BUILT service (dist/cli.js) as a child process on 127.0.0.1,
// drives concurrent registrations, updates (password, level, client, rename) and deletions,
// sign-ins and ends of sessions, SIGKILLs it at a random moment, restarts it on the same data
// directory and checks, after every restart:
//   - users.json (and users.json.prev) parse and are valid; so does sessions.json (and .prev);
//   - every change answered 200 before the kill is in the file (an expected model is kept);
//     a change whose answer never arrived is "unknown": the file may hold it before or after,
//     but as a whole (a rename is both names or neither);
//   - nothing answered with an error is in the file;
//   - every session whose end was answered 200 is refused (verify 401), and every session whose
//     sign-in was answered 200 (of an account whose credentials have not changed since, and not
//     ended) still opens (verify 200);
//   - the service starts, answers verify, and lists exactly the users in the file.
//
//   node scripts/crash-test.mjs [--cycles N] [--seed S] [--verbose] [--keep] [--cli dist/cli.js]
//
// Prints `N cycles, L lost, C corrupt` and exits 1 on any loss, corruption or other failure.
// Importable: `runCrashTest(options)` resolves with the counts.
import { spawn } from 'node:child_process';
import { scryptSync, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_CLI = join(REPO_ROOT, 'dist', 'cli.js');
const SECRET = 'crash-test-secret-0123456789-abcdefghijklmnopq';
const ADMIN = 'admin';
const ADMIN_PASSWORD = 'admin-password';
const START_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 15_000;
const EXIT_TIMEOUT_MS = 10_000;

/** A small seeded generator (mulberry32), so a run can be repeated with --seed. */
function createRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
}

function clientFor(socket) {
  return { client: 'rTorrent', type: 'socket', version: 1, socket };
}

/** Starts `node cli.js serve` on port 0 and resolves once it prints its listening line. */
function startService(cliPath, dataDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
      env: {
        PATH: process.env.PATH ?? '',
        GATEHOUSE_SECRET: SECRET,
        GATEHOUSE_SCRYPT: '1024,8,1',
        GATEHOUSE_LOG_LEVEL: 'info',
        GATEHOUSE_HASH_QUEUE: '10000',
        // Every sign-in comes from 127.0.0.1: the per-client share of the hash queue must hold them all.
        GATEHOUSE_HASH_QUEUE_PER_CLIENT: '10000',
        GATEHOUSE_HASH_QUEUE_PER_NETWORK: '10000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let isStarted = false;
    const keep = (chunk) => {
      output += chunk;
      if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
    };
    const exited = new Promise((resolveExit) => child.once('close', (code, signal) => resolveExit({ code, signal })));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      keep(chunk);
      if (isStarted) return;
      pending += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(pending);
      if (match !== null) {
        isStarted = true;
        pending = '';
        clearTimeout(timer);
        resolve({ child, port: Number(match[2]), exited, output: () => output });
      }
    });
    child.stderr.setEncoding('utf8').on('data', keep);
    void exited.then(({ code, signal }) => {
      if (isStarted) return;
      clearTimeout(timer);
      reject(Object.assign(new Error(`the service exited (code ${code}, signal ${signal}) before listening:\n${output}`), { exitCode: code, output }));
    });
  });
}

/**
 * One HTTP request to 127.0.0.1. Resolves `{status, body}` once a status arrived (the service
 * answers only after the change is durable, so a 200 status line is the acknowledgement), or
 * `{error}` when none did (the change is then unknown).
 */
function send(port, agent, method, path, body, token) {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = { accept: 'application/json' };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    if (token !== undefined) headers.cookie = `jwt=${token}`;
    let settled = false;
    const done = (value) => {
      if (!settled) {
        settled = true;
        resolve(value);
      }
    };
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        done({ status: res.statusCode, body: json, headers: res.headers });
      });
      res.on('error', () => done({ status: res.statusCode, body: undefined, headers: res.headers }));
      res.on('aborted', () => done({ status: res.statusCode, body: undefined, headers: res.headers }));
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' }));
    });
    req.on('error', (error) => done({ error: error.code ?? error.message }));
    req.end(payload);
  });
}

/** Reads and validates users.json the way a careful operator would; throws with a reason. */
function readUsersFile(path) {
  const text = readFileSync(path, 'utf8');
  const document = JSON.parse(text);
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new Error('not a JSON object');
  if (document.format !== 1) throw new Error(`format is ${JSON.stringify(document.format)}`);
  if (!Array.isArray(document.users)) throw new Error('no users array');
  const users = new Map();
  for (const [index, user] of document.users.entries()) {
    if (typeof user?.username !== 'string') throw new Error(`users[${index}] has no username`);
    if (users.has(user.username)) throw new Error(`users[${index}] repeats ${JSON.stringify(user.username)}`);
    if (typeof user.passwordHash !== 'string' || !user.passwordHash.startsWith('$scrypt$')) throw new Error(`users[${index}] has no scrypt hash`);
    if (typeof user.client !== 'object' || user.client === null) throw new Error(`users[${index}] has no client`);
    users.set(user.username, user);
  }
  return users;
}

/** Reads sessions.json as a careful operator would: parses, format 1, records with ids. Throws with a reason. */
function readSessionsFile(path) {
  const document = JSON.parse(readFileSync(path, 'utf8'));
  if (document?.format !== 1 || !Array.isArray(document.sessions) || !Array.isArray(document.lastSignIns)) throw new Error('not a format 1 sessions file');
  for (const [index, record] of document.sessions.entries()) {
    if (typeof record?.id !== 'string' || typeof record.username !== 'string') throw new Error(`sessions[${index}] has no id or username`);
  }
  return document;
}

/** The session id (`ses`) a token we issued carries. */
function sessionIdOf(token) {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).ses;
  } catch {
    return undefined;
  }
}

const verifiedHashes = new Map();

/** True when `hash` (our `$scrypt$ln=..,r=..,p=..$salt$key` format) is a hash of `password`. */
function hashMatches(hash, password) {
  const key = `${hash}\u0000${password}`;
  const known = verifiedHashes.get(key);
  if (known !== undefined) return known;
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(hash);
  let result = false;
  if (match !== null) {
    const N = 2 ** Number(match[1]);
    const r = Number(match[2]);
    const p = Number(match[3]);
    const expected = Buffer.from(match[5], 'base64url');
    const derived = scryptSync(password.normalize('NFC'), Buffer.from(match[4], 'base64url'), expected.length, { N, r, p, maxmem: 256 * 1024 * 1024 });
    result = derived.length === expected.length && timingSafeEqual(derived, expected);
  }
  if (verifiedHashes.size > 100_000) verifiedHashes.clear();
  verifiedHashes.set(key, result);
  return result;
}

/** Does the stored record equal the expected state ({level, socket, password}) or both absent? */
function sameState(stored, expected) {
  if (stored === undefined || expected === null) return stored === undefined && expected === null;
  return (
    stored.level === expected.level &&
    JSON.stringify(stored.client) === JSON.stringify(clientFor(expected.socket)) &&
    hashMatches(stored.passwordHash, expected.password)
  );
}

function describeStored(stored) {
  return stored === undefined ? 'absent' : `level ${JSON.stringify(stored.level)}, socket ${JSON.stringify(stored.client?.socket)}`;
}

function describeState(state) {
  return state === null ? 'absent' : `level ${JSON.stringify(state.level)}, socket ${JSON.stringify(state.socket)}, password ${JSON.stringify(state.password)}`;
}

/**
 * Runs the crash test. Options: cycles (300), seed (random), cliPath (dist/cli.js),
 * log (console.log), isVerbose, keepDataDir. Resolves with
 * `{cycles, lost, corrupt, other, failures, seed, dataDir, stats}`.
 */
export async function runCrashTest(options = {}) {
  const cycles = options.cycles ?? 300;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const cliPath = options.cliPath ?? DEFAULT_CLI;
  const log = options.log ?? ((line) => console.log(line));
  const isVerbose = options.isVerbose === true;
  const random = createRandom(seed);
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run npm run build first`);

  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-crash-'));
  const usersPath = join(dataDir, 'users.json');
  const failures = [];
  const counts = { lost: 0, corrupt: 0, other: 0 };
  const stats = { acknowledged: 0, refused: 0, unknown: 0, resolvedBefore: 0, resolvedAfter: 0, kills: 0, maxStaleTemps: 0, signIns: 0, sessionEnds: 0, sessionsChecked: 0 };
  const fail = (kind, cycle, detail) => {
    counts[kind] += 1;
    failures.push({ kind, cycle, detail });
    log(`FAIL [${kind}] cycle ${cycle}: ${detail}`);
  };

  /** name -> {level, socket, password}: the state the file must hold for every name not in `unknown`. */
  const model = new Map();
  /** Changes sent but never answered: {names, before: Map, after: Map, what}. */
  let unknown = [];
  /**
   * Sessions signed in with an answer: {name, token, id, state}. state 'live' (must open after a
   * restart), 'ended' (its end was answered 200: must be refused), 'busy' (a request on it is in
   * flight); a session of an account whose credentials changed, or whose end got no answer, is dropped.
   */
  let sessions = [];
  const signInAttempts = new Map();
  const dropSessionsOf = (name) => {
    sessions = sessions.filter((session) => session.name !== name || session.state === 'ended');
  };
  const busy = new Set();
  let serial = 0;
  const freshName = () => {
    serial += 1;
    // Mostly plain names; some with characters a careless serializer would mangle.
    return random.pick([`u${serial}`, `u${serial}`, `u${serial}`, `ü-${serial}`, `q"${serial}\\`, `sp ${serial}`, `日本${serial}`]);
  };
  const freshState = () => {
    serial += 1;
    return { level: random.pick([10, 5, 'USER', 'ADMINISTRATOR']), socket: `/run/s-${serial}.sock`, password: `pw-${serial}` };
  };

  let token;
  let service;
  let cycle = 0;

  /** Restarts on the data directory and checks the file against the model. False when it cannot go on. */
  async function restartAndCheck() {
    // 1. The file parses and is valid.
    let actual = new Map();
    if (existsSync(usersPath)) {
      try {
        actual = readUsersFile(usersPath);
      } catch (error) {
        fail('corrupt', cycle, `users.json is unusable: ${error.message}`);
        return false;
      }
    } else if (model.size > 0) {
      fail('lost', cycle, 'users.json is missing');
    }
    const previousPath = `${usersPath}.prev`;
    if (existsSync(previousPath)) {
      try {
        readUsersFile(previousPath);
      } catch (error) {
        fail('corrupt', cycle, `users.json.prev is unusable: ${error.message}`);
      }
    }
    for (const name of ['sessions.json', 'sessions.json.prev']) {
      if (!existsSync(join(dataDir, name))) continue;
      try {
        readSessionsFile(join(dataDir, name));
      } catch (error) {
        fail('corrupt', cycle, `${name} is unusable: ${error.message}`);
        return false;
      }
    }
    const temps = readdirSync(dataDir).filter((name) => name.endsWith('.tmp'));
    stats.maxStaleTemps = Math.max(stats.maxStaleTemps, temps.length);

    // 2. Unknown changes: all before or all after.
    const covered = new Set();
    for (const change of unknown) {
      for (const name of change.names) covered.add(name);
      const isBefore = change.names.every((name) => sameState(actual.get(name), change.before.get(name) ?? null));
      const isAfter = !isBefore && change.names.every((name) => sameState(actual.get(name), change.after.get(name) ?? null));
      if (isBefore || isAfter) {
        stats[isBefore ? 'resolvedBefore' : 'resolvedAfter'] += 1;
        const chosen = isBefore ? change.before : change.after;
        for (const name of change.names) {
          const state = chosen.get(name) ?? null;
          if (state === null) model.delete(name);
          else model.set(name, state);
        }
      } else {
        const seen = change.names.map((name) => `${JSON.stringify(name)}: ${describeStored(actual.get(name))}`).join('; ');
        const before = change.names.map((name) => `${JSON.stringify(name)}: ${describeState(change.before.get(name) ?? null)}`).join('; ');
        const after = change.names.map((name) => `${JSON.stringify(name)}: ${describeState(change.after.get(name) ?? null)}`).join('; ');
        fail('lost', cycle, `unanswered ${change.what}: the file holds neither the state before (${before}) nor after (${after}); it holds ${seen}`);
        for (const name of change.names) {
          const stored = actual.get(name);
          if (stored === undefined) model.delete(name);
          else model.set(name, { level: stored.level, socket: stored.client.socket, password: `(unknown:${stored.passwordHash})` });
        }
      }
    }
    unknown = [];

    // 3. Acknowledged changes present; refused ones absent.
    for (const [name, expected] of model) {
      if (covered.has(name)) continue;
      const stored = actual.get(name);
      if (!sameState(stored, expected)) {
        fail('lost', cycle, `${JSON.stringify(name)} should be ${describeState(expected)} (acknowledged) but the file has ${describeStored(stored)}`);
        if (stored === undefined) model.delete(name);
        else model.set(name, { level: stored.level, socket: stored.client.socket, password: expected.password });
      }
    }
    for (const [name, stored] of actual) {
      if (covered.has(name) || model.has(name)) continue;
      fail('other', cycle, `${JSON.stringify(name)} is in the file (${describeStored(stored)}) but was never acknowledged (refused or never sent)`);
      model.set(name, { level: stored.level, socket: stored.client.socket, password: '(unknown)' });
    }

    // 4. The service starts on it, answers verify, and lists exactly the file.
    try {
      service = await startService(cliPath, dataDir);
    } catch (error) {
      if (/cannot be used/.test(String(error.message))) fail('corrupt', cycle, `the service refused the users file: ${error.message}`);
      else fail('other', cycle, `the service did not start: ${error.message}`);
      return false;
    }
    service.agent = new Agent({ keepAlive: true, maxSockets: 64 });
    if (token === undefined) return true;
    const verify = await send(service.port, service.agent, 'GET', '/api/auth/verify', undefined, token);
    if (verify.status !== 200 || verify.body?.username !== ADMIN) {
      fail('other', cycle, `verify answered ${verify.status ?? verify.error} ${JSON.stringify(verify.body)}`);
      return false;
    }
    const list = await send(service.port, service.agent, 'GET', '/api/auth/users', undefined, token);
    if (list.status !== 200 || !Array.isArray(list.body)) {
      fail('other', cycle, `GET /api/auth/users answered ${list.status ?? list.error}`);
      return false;
    }
    const listed = new Map(list.body.map((entry) => [entry.username, entry.level]));
    const fileLevels = new Map([...actual].map(([name, user]) => [name, user.level]));
    if (listed.size !== fileLevels.size || [...fileLevels].some(([name, level]) => listed.get(name) !== level)) {
      fail('other', cycle, `the service lists ${listed.size} users that differ from the ${fileLevels.size} in users.json`);
    }
    // 5. Sessions: an acknowledged end stays ended; an acknowledged sign-in still opens.
    for (const session of sessions) {
      const answer = await send(service.port, service.agent, 'GET', '/api/auth/verify', undefined, session.token);
      stats.sessionsChecked += 1;
      const expected = session.state === 'ended' ? 401 : 200;
      if (answer.status !== expected) {
        const what = session.state === 'ended' ? 'an acknowledged end of a session was lost: its token is accepted again' : 'an acknowledged sign-in was lost: its token is refused';
        fail('lost', cycle, `${what} (session ${session.id} of ${JSON.stringify(session.name)}; verify answered ${answer.status ?? answer.error})`);
      }
      session.checks = (session.checks ?? 0) + 1;
    }
    // An ended session checked over a few restarts has made its point; the list stays short.
    sessions = sessions.filter((session) => session.state !== 'ended' || session.checks < 3);
    return true;
  }

  /** A sign-in of an account whose password the model knows, or the end of a session; resolves when answered or not. */
  async function operateOnSessions(kind) {
    const port = service.port;
    const agent = service.agent;
    if (kind === 'sign-in') {
      const candidates = [...model.keys()].filter((name) => name !== ADMIN && !busy.has(name) && !unknown.some((change) => change.names.includes(name)) && !model.get(name).password.startsWith('(unknown'));
      const name = candidates.length > 0 ? random.pick(candidates) : undefined;
      // Every attempt may have made a record (an unanswered one too): staying under the limit of 64
      // sessions per account keeps the oldest from being ended by it.
      if (name === undefined || (signInAttempts.get(name) ?? 0) >= 40) return;
      signInAttempts.set(name, (signInAttempts.get(name) ?? 0) + 1);
      busy.add(name);
      try {
        const answer = await send(port, agent, 'POST', '/api/auth/authenticate', { username: name, password: model.get(name).password });
        if (answer.status === undefined) return;
        const token = (answer.headers?.['set-cookie'] ?? []).map((line) => /^jwt=([^;]+)/.exec(line)?.[1]).find((value) => value !== undefined);
        if (answer.status !== 200 || token === undefined) {
          fail('other', cycle, `sign-in of ${JSON.stringify(name)} answered ${answer.status} ${JSON.stringify(answer.body)}`);
          return;
        }
        stats.signIns += 1;
        sessions.push({ name, token, id: sessionIdOf(token), state: 'live' });
      } finally {
        busy.delete(name);
      }
      return;
    }
    const live = sessions.filter((session) => session.state === 'live' && !busy.has(session.name));
    if (live.length === 0) return;
    const target = random.pick(live);
    // Ended from itself, or from another live session of the same account.
    const others = live.filter((session) => session.name === target.name && session !== target);
    const by = others.length > 0 && random.chance(0.5) ? random.pick(others) : target;
    target.state = 'busy';
    const answer = await send(port, agent, 'DELETE', `/api/auth/account/sessions/${encodeURIComponent(target.id)}`, undefined, by.token);
    // A change of the account's credentials while this was under way ended its sessions (and dropped
    // them here): then no answer is wrong, a 404 (no live session) or 401 least of all.
    if (!sessions.includes(target)) return;
    if (answer.status === 200) {
      target.state = 'ended';
      stats.sessionEnds += 1;
    } else if (answer.status === undefined) {
      sessions = sessions.filter((session) => session !== target);
    } else {
      fail('other', cycle, `ending session ${target.id} of ${JSON.stringify(target.name)} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      sessions = sessions.filter((session) => session !== target);
    }
  }

  // One operation, chosen at random among those possible now. Resolves when answered or not.
  async function operate() {
    const port = service.port;
    const agent = service.agent;
    const present = [...model.keys()].filter((name) => name !== ADMIN && !busy.has(name) && !unknown.some((change) => change.names.includes(name)));
    const population = model.size;
    const kinds = [
      ['register', population < 40 ? 30 : 8],
      ['password', 10],
      ['level', 10],
      ['client', 12],
      ['rename', 10],
      ['delete', population > 40 ? 25 : 10],
      ['bad-register', 3],
      ['duplicate-register', 3],
      ['rename-onto-taken', 3],
      ['patch-missing', 2],
      ['delete-missing', 2],
      ['sign-in', 20],
      ['end-session', sessions.some((session) => session.state === 'live') ? 20 : 0],
    ].filter(([kind]) => present.length > 1 || ['register', 'bad-register', 'patch-missing', 'delete-missing', 'sign-in', 'end-session'].includes(kind));
    const total = kinds.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = random.next() * total;
    let kind = kinds[0][0];
    for (const [candidate, weight] of kinds) {
      roll -= weight;
      if (roll < 0) {
        kind = candidate;
        break;
      }
    }
    if (kind === 'sign-in' || kind === 'end-session') return operateOnSessions(kind);
    const target = present.length > 0 ? random.pick(present) : undefined;
    const path = (name) => `/api/auth/users/${encodeURIComponent(name)}`;

    let method;
    let url;
    let body;
    let expected = 200;
    let expectedCode;
    const before = new Map();
    const after = new Map();
    const names = [];
    const lock = (...list) => {
      for (const name of list) {
        // Any change but the client settings may end the account's sessions: they are no longer checked.
        if (kind !== 'client') dropSessionsOf(name);
        busy.add(name);
        names.push(name);
        before.set(name, model.get(name) ?? null);
        after.set(name, model.get(name) ?? null);
      }
    };
    switch (kind) {
      case 'register': {
        const name = freshName();
        const state = freshState();
        lock(name);
        after.set(name, state);
        [method, url, body] = ['POST', '/api/auth/register?cookie=false', { username: name, password: state.password, client: clientFor(state.socket), level: state.level }];
        break;
      }
      case 'password':
      case 'level':
      case 'client': {
        lock(target);
        const old = model.get(target);
        serial += 1;
        const changed =
          kind === 'password'
            ? { ...old, password: `pw-${serial}` }
            : kind === 'level'
              ? { ...old, level: random.pick([10, 5, 'USER', 'ADMINISTRATOR'].filter((level) => level !== old.level)) }
              : { ...old, socket: `/run/s-${serial}.sock` };
        after.set(target, changed);
        const patch = kind === 'password' ? { password: changed.password } : kind === 'level' ? { level: changed.level } : { client: clientFor(changed.socket) };
        [method, url, body] = ['PATCH', path(target), patch];
        break;
      }
      case 'rename': {
        const name = freshName();
        lock(target, name);
        after.set(target, null);
        after.set(name, model.get(target));
        [method, url, body] = ['PATCH', path(target), { username: name }];
        break;
      }
      case 'delete': {
        lock(target);
        after.set(target, null);
        [method, url] = ['DELETE', path(target)];
        break;
      }
      case 'bad-register': {
        const name = freshName();
        lock(name);
        [method, url, body] = ['POST', '/api/auth/register?cookie=false', { username: name, password: 'x', client: { client: 'NoSuchClient', type: 'socket', version: 1, socket: '/s' }, level: 5 }];
        [expected, expectedCode] = [400, 'VALIDATION_FAILED'];
        break;
      }
      case 'duplicate-register': {
        const name = random.chance(0.2) ? ADMIN : target;
        const state = freshState();
        [method, url, body] = ['POST', '/api/auth/register?cookie=false', { username: name, password: state.password, client: clientFor(state.socket), level: state.level }];
        [expected, expectedCode] = [500, 'USERNAME_TAKEN'];
        if (name !== ADMIN) lock(name);
        break;
      }
      case 'rename-onto-taken': {
        const others = present.filter((name) => name !== target);
        const taken = random.chance(0.2) || others.length === 0 ? ADMIN : random.pick(others);
        lock(target);
        if (taken !== ADMIN) lock(taken);
        [method, url, body] = ['PATCH', path(target), { username: taken }];
        [expected, expectedCode] = [500, 'USERNAME_TAKEN'];
        break;
      }
      case 'patch-missing':
      case 'delete-missing': {
        const name = freshName();
        lock(name);
        [method, url, body] = kind === 'patch-missing' ? ['PATCH', path(name), { level: 5 }] : ['DELETE', path(name), undefined];
        [expected, expectedCode] = [500, 'USER_NOT_FOUND'];
        break;
      }
      default:
        throw new Error(`unknown operation ${kind}`);
    }

    const answer = await send(port, agent, method, url, body, token);
    try {
      if (answer.status === undefined) {
        if (answer.error === 'TIMEOUT' && !service.isKilled) fail('other', cycle, `${kind} ${method} ${url} got no answer within ${REQUEST_TIMEOUT_MS} ms (a hang)`);
        if (expected === 200) {
          stats.unknown += 1;
          unknown.push({ names, before, after, what: `${kind} (${method} ${url})` });
        }
        return;
      }
      if (answer.status === expected && (expectedCode === undefined || answer.body?.code === expectedCode)) {
        if (expected === 200) {
          stats.acknowledged += 1;
          for (const [name, state] of after) {
            if (state === null) model.delete(name);
            else model.set(name, state);
          }
        } else {
          stats.refused += 1;
        }
        return;
      }
      if (answer.status >= 500 && service.isKilled) {
        // Cannot happen (a killed process sends nothing) but would be unknown, not refused.
        unknown.push({ names, before, after, what: `${kind} (${method} ${url})` });
        return;
      }
      fail('other', cycle, `${kind} ${method} ${url} answered ${answer.status} ${JSON.stringify(answer.body)}; expected ${expected}${expectedCode === undefined ? '' : ` ${expectedCode}`}`);
      if (answer.status === 200) {
        for (const [name, state] of after) {
          if (state === null) model.delete(name);
          else model.set(name, state);
        }
      } else {
        stats.refused += 1;
      }
    } finally {
      for (const name of names) busy.delete(name);
    }
  }

  async function killDuringWorkload() {
    const workers = random.int(8, 16);
    // Most kills land in the middle of the traffic; some very early, some after a long run.
    const delayMs = random.chance(0.1) ? random.int(0, 5) : random.chance(0.1) ? random.int(200, 600) : random.int(5, 200);
    service.isKilled = false;
    let isStopping = false;
    const loops = [];
    for (let i = 0; i < workers; i++) {
      loops.push(
        (async () => {
          while (!isStopping) await operate();
        })(),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    isStopping = true;
    service.isKilled = true;
    service.child.kill('SIGKILL');
    stats.kills += 1;
    await Promise.all(loops);
    const exit = await Promise.race([service.exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS))]);
    service.agent.destroy();
    if (exit === 'timeout') throw new Error(`the service did not die within ${EXIT_TIMEOUT_MS} ms of SIGKILL`);
    if (isVerbose) log(`cycle ${cycle}: ${workers} workers, killed after ${delayMs} ms; ${model.size} users, ${unknown.length} unknown`);
  }

  const startedAt = Date.now();
  log(`crash test: ${cycles} cycles, seed ${seed}, data dir ${dataDir}`);
  try {
    // Set-up: the administrator every later request uses (never changed, never killed mid-way).
    if (!(await restartAndCheck())) throw new Error('the service did not start on an empty directory');
    const first = await send(service.port, service.agent, 'POST', '/api/auth/register', { username: ADMIN, password: ADMIN_PASSWORD, client: clientFor('/run/admin.sock'), level: 10 });
    const cookie = (first.headers?.['set-cookie'] ?? []).map((line) => /^jwt=([^;]+)/.exec(line)?.[1]).find((value) => value !== undefined);
    if (first.status !== 200 || cookie === undefined) throw new Error(`registering the administrator answered ${first.status ?? first.error}`);
    token = cookie;
    model.set(ADMIN, { level: 10, socket: '/run/admin.sock', password: ADMIN_PASSWORD });

    for (cycle = 1; cycle <= cycles; cycle++) {
      await killDuringWorkload();
      if (!(await restartAndCheck())) break;
      if (!isVerbose && cycle % 50 === 0) log(`... ${cycle} cycles, ${model.size} users, ${Math.round((Date.now() - startedAt) / 1000)} s`);
    }
    if (service !== undefined && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM');
      const exit = await Promise.race([service.exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS))]);
      service.agent?.destroy();
      if (exit === 'timeout') {
        service.child.kill('SIGKILL');
        fail('other', cycle, 'the service did not stop within 10 s of SIGTERM');
      } else if (exit.code !== 0) {
        fail('other', cycle, `the service exited with ${exit.code ?? exit.signal} after SIGTERM`);
      }
    }
  } finally {
    if (service !== undefined && service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  }
  const completed = Math.min(cycle, cycles);
  const result = { cycles: completed, lost: counts.lost, corrupt: counts.corrupt, other: counts.other, failures, seed, dataDir, stats, seconds: (Date.now() - startedAt) / 1000 };
  const isFailed = failures.length > 0 || completed < cycles;
  if (!isFailed && options.keepDataDir !== true) rmSync(dataDir, { recursive: true, force: true });
  else log(`data directory kept for inspection: ${dataDir}`);
  return result;
}

function parseArguments(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--cycles') options.cycles = Number(value());
    else if (arg === '--seed') options.seed = Number(value());
    else if (arg === '--verbose') options.isVerbose = true;
    else if (arg === '--keep') options.keepDataDir = true;
    else if (arg === '--cli') options.cliPath = value();
    else if (arg === '--help') {
      console.log('Usage: node scripts/crash-test.mjs [--cycles N] [--seed S] [--verbose] [--keep] [--cli PATH-TO-cli.js]');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (options.cycles !== undefined && (!Number.isInteger(options.cycles) || options.cycles < 1)) throw new Error('--cycles must be a positive integer');
  if (options.seed !== undefined && !Number.isInteger(options.seed)) throw new Error('--seed must be an integer');
  return options;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options;
  try {
    options = parseArguments(process.argv.slice(2));
  } catch (error) {
    console.error(`crash-test: ${error.message}`);
    process.exit(2);
  }
  runCrashTest(options).then(
    (result) => {
      const { stats } = result;
      console.log(
        `acknowledged ${stats.acknowledged}, refused as expected ${stats.refused}, unanswered ${stats.unknown} ` +
          `sign-ins ${stats.signIns}, session ends ${stats.sessionEnds}, session checks ${stats.sessionsChecked} ` +
          `(found applied ${stats.resolvedAfter}, not applied ${stats.resolvedBefore}); stale temp files at most ${stats.maxStaleTemps}; ${result.seconds.toFixed(1)} s`,
      );
      if (result.other > 0) console.log(`${result.other} other failures (see FAIL lines above)`);
      console.log(`${result.cycles} cycles, ${result.lost} lost, ${result.corrupt} corrupt`);
      process.exit(result.failures.length > 0 || result.cycles < (options.cycles ?? 300) ? 1 : 0);
    },
    (error) => {
      console.error(`crash-test: ${error.stack ?? error.message}`);
      process.exit(1);
    },
  );
}
