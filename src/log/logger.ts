import { escapeUnsafeCharacters, quoteForLog } from './terminal-safe.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  /** The info line for one answered request (fixed shape: it is written for every request). */
  request(method: string, path: string, status: number, durationMs: number, address: string): void;
  /** An info line shown at every level but silent (the listening address). */
  announce(msg: string, fields?: LogFields): void;
  /** Goes to stderr with the cause's name, code and stack (never the request that caused it). */
  error(msg: string, cause?: unknown, fields?: LogFields): void;
  /** Writes out what is buffered, synchronously enough for an exit right after. */
  flush(): void;
  isEnabled(level: LogLevel): boolean;
}

export interface LogSink {
  write(text: string): unknown;
}

/** A request line until its batch is written. */
interface RequestRecord {
  readonly timeMs: number;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly address: string;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

// stdout lines are batched and written this often (or sooner, when this many are waiting): in a
// profile at 64 connections, a write per event-loop turn cost as much as building the lines.
const FLUSH_INTERVAL_MS = 10;
const MAX_BUFFERED_LINES = 1024;

/** quoteForLog of a string, remembering the last one: a request's method, path and address mostly repeat. */
function lastValueQuoter(): (value: string) => string {
  let last = '';
  let quoted = '""';
  return (value) => {
    if (value !== last) {
      last = value;
      quoted = quoteForLog(value);
    }
    return quoted;
  };
}

/**
 * One line per event. stdout lines are batched for up to FLUSH_INTERVAL_MS, so the request log
 * on the hot path costs one write per batch rather than one per request; flush() writes at once.
 */
export function createLogger(options: { level: LogLevel; format: LogFormat; stdout: LogSink; stderr: LogSink; now?: () => number }): Logger {
  const now = options.now ?? Date.now;
  const threshold = RANK[options.level];
  // Lines waiting for the next write: other lines as text, request lines as their fields, made
  // into text only when the batch is written (one small record per request in the meantime).
  let buffered: Array<string | RequestRecord> = [];
  let timer: NodeJS.Timeout | undefined;

  const flush = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (buffered.length === 0) return;
    const lines = buffered;
    buffered = [];
    let text = '';
    for (const line of lines) text += typeof line === 'string' ? line : requestLine(line);
    options.stdout.write(text);
  };

  // The request log is on the hot path: the time string is made once per millisecond, and a
  // line is built from our own field names (never from input) rather than by JSON.stringify
  // of a fresh object. Values still go through JSON.stringify, so input cannot break a line, and
  // quoteForLog escapes what JSON leaves raw but a terminal acts on (bidi overrides, C1 controls).
  let lastMs = NaN;
  let lastTime = '';
  const timeOf = (ms: number): string => {
    if (ms !== lastMs) {
      lastMs = ms;
      lastTime = new Date(ms).toISOString();
    }
    return lastTime;
  };

  const format = (level: LogLevel, msg: string, fields: LogFields | undefined): string => {
    const time = timeOf(now());
    if (options.format === 'json') {
      let line = `{"time":"${time}","level":"${level}","msg":${quoteForLog(msg)}`;
      if (fields !== undefined) {
        for (const key in fields) {
          const value = fields[key];
          if (value === undefined || key === 'time' || key === 'level' || key === 'msg') continue;
          line += `,"${key}":${typeof value === 'string' ? quoteForLog(value) : Number.isFinite(value) || typeof value === 'boolean' ? String(value) : 'null'}`;
        }
      }
      return `${line}}\n`;
    }
    let line = `${time} ${level.toUpperCase().padEnd(5)} ${escapeUnsafeCharacters(msg)}`;
    if (fields !== undefined) {
      for (const [key, value] of Object.entries(fields)) if (value !== undefined) line += ` ${key}=${typeof value === 'string' ? quoteForLog(value) : JSON.stringify(value)}`;
    }
    return `${line}\n`;
  };

  const push = (line: string | RequestRecord): void => {
    buffered.push(line);
    if (buffered.length >= MAX_BUFFERED_LINES) flush();
    else timer ??= setTimeout(flush, FLUSH_INTERVAL_MS);
  };

  const emit = (level: LogLevel, msg: string, fields: LogFields | undefined, isForced = false): void => {
    if (RANK[level] < threshold && !(isForced && threshold < RANK.silent)) return;
    push(format(level, msg, fields));
  };

  const isInfoEnabled = RANK.info >= threshold;
  const quoteMethod = lastValueQuoter();
  const quotePath = lastValueQuoter();
  const quoteAddress = lastValueQuoter();
  const request = (method: string, path: string, status: number, durationMs: number, address: string): void => {
    if (!isInfoEnabled) return;
    if (options.format !== 'json') {
      emit('info', 'request', { method, path, status, durationMs, address });
      return;
    }
    push({ timeMs: now(), method, path, status, durationMs, address });
  };
  const requestLine = (r: RequestRecord): string =>
    `{"time":"${timeOf(r.timeMs)}","level":"info","msg":"request","method":${quoteMethod(r.method)},"path":${quotePath(r.path)},"status":${r.status},"durationMs":${durationText(r.durationMs)},"address":${quoteAddress(r.address)}}\n`;

  return {
    request,
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    announce: (msg, fields) => emit('info', msg, fields, true),
    error(msg, cause, fields) {
      if (RANK.error < threshold) return;
      flush();
      options.stderr.write(format('error', msg, { ...fields, ...describeCause(cause) }));
    },
    flush,
    isEnabled: (level) => RANK[level] >= threshold,
  };
}

// Request durations are in hundredths of a millisecond and mostly under 10 ms: their text is made
// once (the same text String() gives) instead of formatting a double on every request.
const DURATION_TEXTS: readonly string[] = Array.from({ length: 1000 }, (_, hundredths) => String(hundredths / 100));

function durationText(durationMs: number): string {
  const hundredths = Math.round(durationMs * 100);
  return hundredths >= 0 && hundredths < 1000 && hundredths / 100 === durationMs ? (DURATION_TEXTS[hundredths] ?? String(durationMs)) : String(durationMs);
}

function describeCause(cause: unknown): LogFields {
  if (cause === undefined) return {};
  if (!(cause instanceof Error)) return { cause: typeof cause };
  const code = (cause as { code?: unknown }).code;
  const inner = cause.cause instanceof Error ? `; caused by ${cause.cause.name}: ${cause.cause.message}` : '';
  return {
    cause: `${cause.name}: ${cause.message}${inner}`,
    code: typeof code === 'string' ? code : undefined,
    stack: cause.stack?.split('\n').slice(1, 6).join(' | ').replace(/\s+/g, ' '),
  };
}
