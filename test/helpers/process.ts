// Runs the BUILT command line (dist/cli.js) as a child process, the way an operator does: commands
// that end (runCli, runToExit) and the service, waited for until it listens (spawnService,
// startServe). dist/ must have been built from the sources as they are (`npm run build`, or any
// npm test script, which builds when it must): a stale build is refused, not run. Every wait is bounded; every child started here
// is remembered so an `after` hook can end the ones still running (killAllChildren, stopAllServices).
import { sendRequest } from './server.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildState } from '../../scripts/build-stamp.mjs';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_PATH = join(REPO_ROOT, 'dist', 'cli.js');
/** The secret runCli and startServe use (startServe sets it by default; runCli only when asked). */
export const CLI_SECRET = 'cli-test-secret-0123456789-abcdefghijklmnop';
/** The secret spawnService and runToExit set by default. */
export const PROCESS_SECRET = 'process-test-secret-0123456789-abcdefghijklmn';
export const CLIENT_JSON = '{"client":"rTorrent","type":"socket","version":1,"socket":"/s"}';
export const CLIENT_SETTINGS = Object.freeze({ client: 'rTorrent', type: 'socket', version: 1, socket: '/s' });

/** How long a command that should end promptly may take before it is killed and the test fails. */
const RUN_TIMEOUT_MS = 15_000;
/** How long `startServe` may take to print its listening line. */
const START_TIMEOUT_MS = 15_000;

let builtIsCurrent = false;
/** Throws unless dist/ was built from the sources as they are now (checked once per process). */
export function assertBuilt(): void {
  if (builtIsCurrent) return;
  const state = buildState(REPO_ROOT);
  if (state !== 'current') throw new Error(`dist/ is ${state === 'missing' ? 'not built' : 'older than the sources'}: run npm run build first`);
  builtIsCurrent = true;
}

/** Env values: a string sets, `undefined` removes. */
export type EnvOverrides = Readonly<Record<string, string | undefined>>;

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

/** childEnv plus a test secret and info logs: what spawnService and runToExit start from. */
const serviceEnv = (overrides: EnvOverrides = {}): NodeJS.ProcessEnv =>
  childEnv({ GATEHOUSE_SECRET: PROCESS_SECRET, GATEHOUSE_LOG_LEVEL: 'info', ...overrides });

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

type StreamName = 'stdout' | 'stderr';

/** One child of `node dist/cli.js`, its output captured; every helper below is built on it. */
interface Started {
  readonly child: ChildProcess;
  /** Resolves when the child has exited and its output is flushed (never rejects). */
  readonly exited: Promise<ExitInfo>;
  /** The spawn failure, if the child could not be started. */
  error(): Error | undefined;
  /** stdout and stderr so far, interleaved in arrival order. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Calls `listener` with each output line (a last unterminated one at exit); returns the unsubscribe. */
  onLine(listener: (line: string, stream: StreamName) => void): () => void;
}

interface StartOptions {
  /** Arguments after `node dist/cli.js`. */
  readonly args: readonly string[];
  /** The program node runs instead of dist/cli.js (the one-file build, copied somewhere). */
  readonly script?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string | undefined;
  /** Written to a piped stdin, which is then closed. Without it stdin is ignored (/dev/null). */
  readonly stdin?: string | Buffer;
}

const children = new Set<ChildProcess>();

function startChild(options: StartOptions): Started {
  if (options.script === undefined) assertBuilt();
  else if (!existsSync(options.script)) throw new Error(`${options.script} is missing`);
  const child = spawn(process.execPath, [options.script ?? CLI_PATH, ...options.args], {
    cwd: options.cwd ?? tmpdir(),
    env: options.env,
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let all = '';
  let out = '';
  let err = '';
  let spawnError: Error | undefined;
  const listeners = new Set<(line: string, stream: StreamName) => void>();
  const partial = { stdout: '', stderr: '' };
  const feed = (stream: StreamName, chunk: string): void => {
    all += chunk;
    if (stream === 'stdout') out += chunk;
    else err += chunk;
    const lines = (partial[stream] + chunk).split('\n');
    partial[stream] = lines.pop() ?? '';
    for (const line of lines) for (const listener of [...listeners]) listener(line, stream);
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => feed('stdout', chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => feed('stderr', chunk));
  if (options.stdin !== undefined) {
    child.stdin?.on('error', () => undefined); // the child may exit before reading
    child.stdin?.end(options.stdin);
  }
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      for (const stream of ['stdout', 'stderr'] as const) {
        if (partial[stream] !== '') for (const listener of [...listeners]) listener(partial[stream], stream);
        partial[stream] = '';
      }
      resolve({ code, signal });
    });
    child.once('error', (error) => {
      spawnError = error;
      children.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  return {
    child,
    exited,
    error: () => spawnError,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    onLine(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * The first line `match` accepts: `seen` if given, else the next one to arrive. Rejects with
 * `failure(undefined)` after `timeoutMs`, or with `failure(exit)` if the child exits first.
 */
function firstLine(
  started: Started,
  seen: string | undefined,
  match: (line: string, stream: StreamName) => boolean,
  timeoutMs: number,
  failure: (exit: ExitInfo | undefined) => Error,
): Promise<string> {
  if (seen !== undefined) return Promise.resolve(seen);
  return new Promise<string>((resolve, reject) => {
    let isDone = false;
    const finish = (error: Error | undefined, line?: string): void => {
      if (isDone) return;
      isDone = true;
      clearTimeout(timer);
      unsubscribe();
      if (error === undefined) resolve(line ?? '');
      else reject(error);
    };
    const unsubscribe = started.onLine((line, stream) => {
      if (match(line, stream)) finish(undefined, line);
    });
    const timer = setTimeout(() => finish(failure(undefined)), timeoutMs);
    void started.exited.then((exit) => finish(failure(exit)));
  });
}

/** Waits for the exit; after `timeoutMs` SIGKILLs the child, waits for that, and throws `message()`. */
async function exitWithin(started: Started, timeoutMs: number, message: () => string): Promise<ExitInfo> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const result = await Promise.race([started.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    started.child.kill('SIGKILL');
    await started.exited;
    throw new Error(message());
  }
  return result;
}

/** Sends `signal` unless the child has already exited, then waits for the exit as exitWithin does. */
function stopChild(started: Started, signal: NodeJS.Signals, timeoutMs: number, message: () => string): Promise<ExitInfo> {
  const { child } = started;
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  return exitWithin(started, timeoutMs, message);
}

const LISTENING = /listening on (http:\/\/[^\s"]+)/;

// ---- Commands that end: runCli (the cli tests' form) and runToExit (the durability tests' form).

export interface RunOptions {
  readonly env?: EnvOverrides;
  /** Written to stdin, which is then closed. Without it stdin is closed at once. */
  readonly stdin?: string | Buffer;
  readonly cwd?: string;
  readonly timeoutMs?: number;
  /** Run this program instead of dist/cli.js. */
  readonly script?: string;
}

export interface RunResult extends ExitInfo {
  readonly stdout: string;
  readonly stderr: string;
  readonly pid: number;
}

/** Runs `node dist/cli.js ...args` to completion (killed, and rejected, after a bounded wait). */
export async function runCli(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const started = startChild({ args, script: options.script, env: childEnv(options.env), cwd: options.cwd, stdin: options.stdin ?? '' });
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  const exit = await exitWithin(started, timeoutMs, () => `gatehouse ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${started.stdout()}\nstderr: ${started.stderr()}`);
  const error = started.error();
  if (error !== undefined) throw error;
  return { ...exit, stdout: started.stdout(), stderr: started.stderr(), pid: started.child.pid ?? -1 };
}

export interface SpawnServiceOptions {
  /** Arguments after `node dist/cli.js`, e.g. ['serve', '--port', '0', '--data-dir', dir]. */
  readonly args: readonly string[];
  /** Applied over a clean environment holding PATH, HOME, a test secret, cheap scrypt and info logs. */
  readonly env?: EnvOverrides;
  readonly cwd?: string;
  /** How long the listening line may take (default 20 s). */
  readonly startTimeoutMs?: number;
}

export interface RunToExitResult extends ExitInfo {
  readonly stdout: string;
  readonly stderr: string;
  /** True when it printed a listening line (and was then stopped with SIGTERM): it should not have started. */
  readonly didListen: boolean;
}

/**
 * Runs a command expected to END on its own (a refused start, say) and resolves with its exit;
 * if it starts listening instead, it is stopped with SIGTERM and `didListen` is true.
 */
export async function runToExit(options: SpawnServiceOptions & { readonly timeoutMs?: number }): Promise<RunToExitResult> {
  const started = startChild({ args: options.args, env: serviceEnv(options.env), cwd: options.cwd });
  let didListen = false;
  const unsubscribe = started.onLine((line) => {
    if (!didListen && LISTENING.test(line)) {
      didListen = true;
      started.child.kill('SIGTERM');
    }
  });
  const timeoutMs = options.timeoutMs ?? 20_000;
  try {
    const exit = await exitWithin(started, timeoutMs, () => `the process did not exit within ${timeoutMs} ms:\n${started.output()}`);
    return { ...exit, stdout: started.stdout(), stderr: started.stderr(), didListen };
  } finally {
    unsubscribe();
  }
}

// ---- The service: spawnService (the durability tests' form) and startServe (the cli tests' form).

export interface ServiceProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly child: ChildProcess;
  /** stdout and stderr so far, interleaved in arrival order. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<ExitInfo>;
  /** Resolves with the first output line matching `pattern`; rejects after `timeoutMs` or on exit. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (default SIGTERM) and waits for the exit; SIGKILLs and rejects after `timeoutMs` (default 15 s). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitInfo>;
  /** Waits for the exit without sending anything (after `child.kill(...)`); SIGKILLs and rejects after `timeoutMs` (default 15 s). */
  waitForExit(timeoutMs?: number): Promise<ExitInfo>;
}

/** Raised when the child exits (or times out) before printing its listening line. */
export class ServiceDidNotStart extends Error {
  readonly exit: ExitInfo | undefined;
  readonly stdoutText: string;
  readonly stderrText: string;
  constructor(reason: string, exit: ExitInfo | undefined, stdoutText: string, stderrText: string) {
    super(`the service did not start: ${reason}\n--- stdout\n${stdoutText}--- stderr\n${stderrText}`);
    this.exit = exit;
    this.stdoutText = stdoutText;
    this.stderrText = stderrText;
  }
}

/** Starts `node dist/cli.js ...args` and resolves once it prints `listening on URL`; rejects with ServiceDidNotStart otherwise. */
export async function spawnService(options: SpawnServiceOptions): Promise<ServiceProcess> {
  const started = startChild({ args: options.args, env: serviceEnv(options.env), cwd: options.cwd });
  const { child, exited } = started;
  const startTimeoutMs = options.startTimeoutMs ?? 20_000;
  let url: string;
  try {
    const line = await firstLine(started, undefined, (text) => LISTENING.test(text), startTimeoutMs, (exit) =>
      exit === undefined
        ? new ServiceDidNotStart(`no listening line within ${startTimeoutMs} ms`, undefined, started.stdout(), started.stderr())
        : new ServiceDidNotStart(`it exited with code ${exit.code} signal ${exit.signal}`, exit, started.stdout(), started.stderr()),
    );
    url = LISTENING.exec(line)?.[1] ?? '';
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const port = Number(new URL(url).port);

  const waitForOutput = (pattern: RegExp, timeoutMs = 15_000): Promise<string> => {
    const seen = started.output().split('\n').find((line) => pattern.test(line));
    return firstLine(started, seen, (line) => pattern.test(line), timeoutMs, (exit) =>
      exit === undefined
        ? new Error(`no output line matched ${pattern} within ${timeoutMs} ms:\n${started.output()}`)
        : new Error(`the process exited before printing a line matching ${pattern}:\n${started.output()}`),
    );
  };
  const exitMessage = (timeoutMs: number) => (): string => `the process did not exit within ${timeoutMs} ms:\n${started.output()}`;

  return {
    url,
    port,
    pid: child.pid ?? -1,
    child,
    output: started.output,
    stdout: started.stdout,
    stderr: started.stderr,
    exited,
    waitForOutput,
    stop: (signal = 'SIGTERM', timeoutMs = 15_000) => stopChild(started, signal, timeoutMs, exitMessage(timeoutMs)),
    waitForExit: (timeoutMs = 15_000) => exitWithin(started, timeoutMs, exitMessage(timeoutMs)),
  };
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
  stop(signal?: NodeJS.Signals): Promise<ExitInfo>;
  readonly exited: Promise<ExitInfo>;
}

export interface ServeOptions {
  readonly env?: EnvOverrides;
  readonly cwd?: string;
  /**
   * The listening line is an info line; with --log-level warn it is not printed. Then pass a
   * port here (see freePort) and `serve` is considered started once /healthz answers.
   */
  readonly knownPort?: number;
  /** Run this program instead of dist/cli.js. */
  readonly script?: string;
}

/**
 * Starts `node dist/cli.js serve ...args` (the caller passes --port 0 or a port, --data-dir, ...).
 * GATEHOUSE_SECRET defaults to CLI_SECRET; pass `env: { GATEHOUSE_SECRET: undefined }` for the secret file.
 */
export async function startServe(args: readonly string[], options: ServeOptions = {}): Promise<ServeProcess> {
  const started = startChild({ args: ['serve', ...args], script: options.script, env: childEnv({ GATEHOUSE_SECRET: CLI_SECRET, ...options.env }), cwd: options.cwd });
  const { child, exited } = started;
  const stdoutLines: string[] = [];
  started.onLine((line, stream) => {
    if (stream === 'stdout') stdoutLines.push(line);
  });
  const outputText = (): string => `stdout: ${started.stdout()}\nstderr: ${started.stderr()}`;

  const waitForLine = (match: (line: string) => boolean, timeoutMs = 10_000): Promise<string> =>
    firstLine(started, stdoutLines.find(match), (line, stream) => stream === 'stdout' && match(line), timeoutMs, (exit) =>
      exit === undefined
        ? new Error(`no matching stdout line within ${timeoutMs} ms\n${outputText()}`)
        : new Error(`serve exited before printing a matching line\n${outputText()}`),
    );

  let url: string;
  let port: number;
  try {
    if (options.knownPort === undefined) {
      const line = await waitForLine((text) => /listening on http:\/\//.test(text), START_TIMEOUT_MS);
      const found = LISTENING.exec(line)?.[1];
      if (found === undefined) throw new Error(`unreadable listening line: ${line}`);
      url = found;
      port = Number(new URL(found).port);
    } else {
      port = options.knownPort;
      url = `http://127.0.0.1:${port}`;
      await waitForHealth(port, exited, outputText);
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const stop = (signal: NodeJS.Signals = 'SIGTERM'): Promise<ExitInfo> =>
    stopChild(started, signal, 10_000, () => `serve did not exit within 10 s of ${signal}\n${outputText()}`);
  return { child, pid: child.pid ?? -1, url, port, stdoutLines, stdout: started.stdout, stderr: started.stderr, waitForLine, stop, exited };
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

/** `serve` on loopback, a free port, and `dir`. */
export const serveArgs = (dir: string): string[] => ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir];

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

// ---- Clean-up for `after` hooks.

/** SIGKILLs every child started here that is still running and waits (at most 5 s each) for them. */
export async function killAllChildren(): Promise<void> {
  const waits: Array<Promise<void>> = [];
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    waits.push(new Promise<void>((resolve) => {
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

// ---- HTTP and output helpers for the cli tests.

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
