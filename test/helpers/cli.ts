// Runs the BUILT command line (dist/cli.js) as a child process, the way an operator does.
// `npm run build` must have run first. Every child started here is remembered so that an
// `after` hook can end it with `killAllChildren()`; every wait is bounded.
import { sendRequest } from './server.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_PATH = join(REPO_ROOT, 'dist', 'cli.js');
export const CLI_SECRET = 'cli-test-secret-0123456789-abcdefghijklmnop';
export const CLIENT_JSON = '{"client":"rTorrent","type":"socket","version":1,"socket":"/s"}';
export const CLIENT_SETTINGS = Object.freeze({ client: 'rTorrent', type: 'socket', version: 1, socket: '/s' });

/** How long a command that should end promptly may take before it is killed and the test fails. */
const RUN_TIMEOUT_MS = 15_000;
/** How long `serve` may take to print its listening line. */
const START_TIMEOUT_MS = 15_000;

const children = new Set<ChildProcess>();

export function assertBuilt(): void {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run npm run build first`);
}

/** Env values: a string sets, `undefined` removes. */
export type EnvOverrides = Record<string, string | undefined>;

/**
 * A clean environment: nothing GATEHOUSE_* from the parent, cheap scrypt. `GATEHOUSE_SECRET`
 * is not set unless asked for (offline commands and secret-file tests need it absent).
 */
export function childEnv(overrides: EnvOverrides = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'SYSTEMROOT']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env['GATEHOUSE_SCRYPT'] = '1024,8,1';
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface RunOptions {
  readonly env?: EnvOverrides;
  /** Written to stdin, which is then closed. Without it stdin is closed at once. */
  readonly stdin?: string;
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly pid: number;
}

/** Runs `node dist/cli.js ...args` to completion (killed, and rejected, after a bounded wait). */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: childEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => undefined); // the child may exit before reading
  child.stdin.end(options.stdin ?? '');
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gatehouse ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      children.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr, pid: child.pid ?? -1 });
    });
  });
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The URL from the listening line, e.g. http://127.0.0.1:41234 (or 0.0.0.0). */
  readonly url: string;
  readonly port: number;
  /** Complete stdout lines so far. */
  readonly stdoutLines: string[];
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line (seen or future) that matches; rejects after a bounded wait. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServeOptions {
  readonly env?: EnvOverrides;
  readonly cwd?: string;
  /**
   * The listening line is an info line; with --log-level warn it is not printed. Then pass a
   * port here (see freePort) and `serve` is considered started once /healthz answers.
   */
  readonly knownPort?: number;
}

/**
 * Starts `node dist/cli.js serve ...args` (the caller passes --port 0 or a port, --data-dir, ...).
 * GATEHOUSE_SECRET defaults to CLI_SECRET; pass `env: { GATEHOUSE_SECRET: undefined }` for the secret file.
 */
export async function startServe(args: readonly string[], options: ServeOptions = {}): Promise<ServeProcess> {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_PATH, 'serve', ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: childEnv({ GATEHOUSE_SECRET: CLI_SECRET, ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  let partial = '';
  const stdoutLines: string[] = [];
  const waiters = new Set<{ match: (line: string) => boolean; resolve: (line: string) => void }>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    partial += chunk;
    let newline: number;
    while ((newline = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      stdoutLines.push(line);
      for (const waiter of waiters) {
        if (waiter.match(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });

  const waitForLine = (match: (line: string) => boolean, timeoutMs = 10_000): Promise<string> => {
    const seen = stdoutLines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no matching stdout line within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then(() => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`serve exited before printing a matching line\nstdout: ${stdout}\nstderr: ${stderr}`));
      });
    });
  };

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`serve did not exit within 10 s of ${signal}\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, 10_000);
    });
    try {
      return await Promise.race([exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  let url: string;
  let port: number;
  try {
    if (options.knownPort === undefined) {
      const line = await waitForLine((text) => /listening on http:\/\//.test(text), START_TIMEOUT_MS);
      const found = /listening on (http:\/\/[^\s"]+)/.exec(line)?.[1];
      if (found === undefined) throw new Error(`unreadable listening line: ${line}`);
      url = found;
      port = Number(new URL(found).port);
    } else {
      port = options.knownPort;
      url = `http://127.0.0.1:${port}`;
      await waitForHealth(port, exited, () => `stdout: ${stdout}\nstderr: ${stderr}`);
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, pid: child.pid ?? -1, url, port, stdoutLines, stdout: () => stdout, stderr: () => stderr, waitForLine, stop, exited };
}

async function waitForHealth(port: number, exited: Promise<unknown>, output: () => string): Promise<void> {
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (hasExited) throw new Error(`serve exited before answering /healthz\n${output()}`);
    try {
      const res = await httpCall(port, { path: '/healthz' });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`serve did not answer /healthz on port ${port} within ${START_TIMEOUT_MS} ms\n${output()}`);
}

/** A port that was free a moment ago (for runs whose listening line is not printed). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Ends every child still running (for `after` hooks). */
export async function killAllChildren(): Promise<void> {
  const waits: Promise<void>[] = [];
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    waits.push(new Promise((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    }));
    child.kill('SIGKILL');
  }
  await Promise.all(waits);
  children.clear();
}

const tempDirs: string[] = [];

/** A fresh temporary directory, removed by `removeTempDirs`. */
export async function tempDir(prefix = 'gatehouse-cli-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export interface CallOptions {
  readonly method?: string;
  readonly path: string;
  /** An object is sent as JSON. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Sent as the `jwt` cookie. */
  readonly token?: string;
}

export interface CallResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: unknown;
  /** The Set-Cookie line for `jwt`, if any. */
  readonly setCookie: string | undefined;
  /** The `jwt` value from that line. */
  readonly cookieToken: string | undefined;
}

/** One HTTP request to 127.0.0.1:port (the harness's sendRequest), plus the jwt Set-Cookie line. */
export async function httpCall(port: number, options: CallOptions): Promise<CallResult> {
  const res = await sendRequest(port, options);
  const setCookie = (res.headers['set-cookie'] ?? []).find((line) => line.startsWith('jwt='));
  return { ...res, setCookie };
}

/** Parses every non-empty line as JSON; throws naming the first line that is not a JSON object. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`not a JSON object line: ${line}`);
      return parsed as Record<string, unknown>;
    });
}
