// Runs the BUILT service (dist/cli.js) as a child process, the way an operator does, and waits
// for its listening line. `npm run build` must have run first. Every wait is bounded; every
// child started here is remembered so an `after` hook can end the ones still running with
// `stopAllServices()`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_PATH = join(REPO_ROOT, 'dist', 'cli.js');
export const PROCESS_SECRET = 'process-test-secret-0123456789-abcdefghijklmn';

/** Env values: a string sets, `undefined` removes. */
export type EnvOverrides = Readonly<Record<string, string | undefined>>;

export interface SpawnServiceOptions {
  /** Arguments after `node dist/cli.js`, e.g. ['serve', '--port', '0', '--data-dir', dir]. */
  readonly args: readonly string[];
  /** Applied over a clean environment holding PATH, HOME, a test secret, cheap scrypt and info logs. */
  readonly env?: EnvOverrides;
  readonly cwd?: string;
  /** How long the listening line may take (default 20 s). */
  readonly startTimeoutMs?: number;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

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

const live = new Set<ChildProcess>();

export function childEnv(overrides: EnvOverrides = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env['GATEHOUSE_SECRET'] = PROCESS_SECRET;
  env['GATEHOUSE_SCRYPT'] = '1024,8,1';
  env['GATEHOUSE_LOG_LEVEL'] = 'info';
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<ExitInfo>;
  output(): string;
  stdout(): string;
  stderr(): string;
  onLine(listener: (line: string) => void): () => void;
}

function startChild(options: SpawnServiceOptions): Started {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run npm run build first`);
  const child = spawn(process.execPath, [CLI_PATH, ...options.args], {
    cwd: options.cwd ?? tmpdir(),
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let all = '';
  let out = '';
  let err = '';
  const listeners = new Set<(line: string) => void>();
  const partial = { stdout: '', stderr: '' };
  const feed = (stream: 'stdout' | 'stderr', chunk: string): void => {
    all += chunk;
    if (stream === 'stdout') out += chunk;
    else err += chunk;
    const lines = (partial[stream] + chunk).split('\n');
    partial[stream] = lines.pop() ?? '';
    for (const line of lines) for (const listener of [...listeners]) listener(line);
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => feed('stdout', chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => feed('stderr', chunk));
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child);
      for (const stream of ['stdout', 'stderr'] as const) {
        if (partial[stream] !== '') for (const listener of [...listeners]) listener(partial[stream]);
        partial[stream] = '';
      }
      resolve({ code, signal });
    });
    child.once('error', () => {
      live.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  return {
    child,
    exited,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    onLine(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

const LISTENING = /listening on (http:\/\/[^\s"]+)/;

/** Starts `node dist/cli.js ...args` and resolves once it prints `listening on URL`; rejects with ServiceDidNotStart otherwise. */
export async function spawnService(options: SpawnServiceOptions): Promise<ServiceProcess> {
  const started = startChild(options);
  const { child, exited } = started;
  const url = await new Promise<string>((resolve, reject) => {
    let isDone = false;
    const finish = (error: Error | undefined, value?: string): void => {
      if (isDone) return;
      isDone = true;
      clearTimeout(timer);
      unsubscribe();
      if (error === undefined) resolve(value ?? '');
      else reject(error);
    };
    const unsubscribe = started.onLine((line) => {
      const match = LISTENING.exec(line);
      if (match?.[1] !== undefined) finish(undefined, match[1]);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(new ServiceDidNotStart(`no listening line within ${options.startTimeoutMs ?? 20_000} ms`, undefined, started.stdout(), started.stderr()));
    }, options.startTimeoutMs ?? 20_000);
    void exited.then((exit) => finish(new ServiceDidNotStart(`it exited with code ${exit.code} signal ${exit.signal}`, exit, started.stdout(), started.stderr())));
  });
  const port = Number(new URL(url).port);

  const waitForOutput = (pattern: RegExp, timeoutMs = 15_000): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const already = started.output().split('\n').find((line) => pattern.test(line));
      if (already !== undefined) {
        resolve(already);
        return;
      }
      let isDone = false;
      const finish = (error: Error | undefined, line?: string): void => {
        if (isDone) return;
        isDone = true;
        clearTimeout(timer);
        unsubscribe();
        if (error === undefined) resolve(line ?? '');
        else reject(error);
      };
      const unsubscribe = started.onLine((line) => {
        if (pattern.test(line)) finish(undefined, line);
      });
      const timer = setTimeout(() => finish(new Error(`no output line matched ${pattern} within ${timeoutMs} ms:\n${started.output()}`)), timeoutMs);
      void exited.then(() => finish(new Error(`the process exited before printing a line matching ${pattern}:\n${started.output()}`)));
    });

  const waitForExit = async (timeoutMs = 15_000): Promise<ExitInfo> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const result = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`the process did not exit within ${timeoutMs} ms:\n${started.output()}`);
    }
    return result;
  };

  const stop = (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<ExitInfo> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return waitForExit(timeoutMs);
  };

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
    stop,
    waitForExit,
  };
}

export interface RunResult extends ExitInfo {
  readonly stdout: string;
  readonly stderr: string;
  /** True when it printed a listening line (and was then stopped with SIGTERM): it should not have started. */
  readonly didListen: boolean;
}

/**
 * Runs a command expected to END on its own (a refused start, say) and resolves with its exit;
 * if it starts listening instead, it is stopped with SIGTERM and `didListen` is true.
 */
export async function runToExit(options: SpawnServiceOptions & { readonly timeoutMs?: number }): Promise<RunResult> {
  const started = startChild(options);
  let didListen = false;
  const unsubscribe = started.onLine((line) => {
    if (!didListen && LISTENING.test(line)) {
      didListen = true;
      started.child.kill('SIGTERM');
    }
  });
  const timeoutMs = options.timeoutMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const result = await Promise.race([started.exited, timeout]);
  clearTimeout(timer);
  unsubscribe();
  if (result === 'timeout') {
    started.child.kill('SIGKILL');
    await started.exited;
    throw new Error(`the process did not exit within ${timeoutMs} ms:\n${started.output()}`);
  }
  return { ...result, stdout: started.stdout(), stderr: started.stderr(), didListen };
}

/** SIGKILLs every child started here that is still running (for `after` hooks) and waits for them. */
export async function stopAllServices(): Promise<void> {
  const waits: Array<Promise<void>> = [];
  for (const child of live) {
    waits.push(new Promise<void>((resolve) => child.once('close', () => resolve())));
    child.kill('SIGKILL');
  }
  await Promise.all(waits);
}

const tempDirs: string[] = [];

/** A fresh temp data directory, removed by removeTempDataDirs(). */
export async function tempDataDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `gatehouse-${prefix}-`));
  tempDirs.push(dir);
  return dir;
}

export async function removeTempDataDirs(): Promise<void> {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** `serve` on loopback, a free port, and `dir`. */
export const serveArgs = (dir: string): string[] => ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir];
