import { escapeUnsafeCharacters, quoteForLog } from './terminal-safe.js';
import type { EpochMs } from '../time.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];
type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;
export type Logger = ReturnType<typeof createLogger>;

/** The arguments of logger.request with the time: a request line until its batch is written. */
type RequestRecord = readonly [timeMs: number, ...Parameters<Logger['request']>];

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

// stdout lines are batched and written this often (or sooner, when this many are waiting): in a
// profile at 64 connections, a write per event-loop turn cost as much as building the lines.
const FLUSH_INTERVAL_MS = 10;
const MAX_BUFFERED_LINES = 1024;

/** `make` of a value, remembering the last one: a request's time, method, path and address mostly repeat. */
function lastValueText<T>(make: (value: T) => string): (value: T) => string {
  let last: T | undefined;
  let text = '';
  return (value) => {
    if (value !== last) {
      last = value;
      text = make(value);
    }
    return text;
  };
}

/** A field's value: strings through quoteForLog, numbers that are not finite as null. */
function valueText(value: string | number | boolean): string {
  if (typeof value === 'string') return quoteForLog(value);
  return Number.isFinite(value) || typeof value === 'boolean' ? String(value) : 'null';
}

/**
 * One line per event. stdout lines are batched for up to FLUSH_INTERVAL_MS, so the request log
 * on the hot path costs one write per batch rather than one per request; flush() writes at once.
 */
export function createLogger(options: {
  level: LogLevel;
  format: LogFormat;
  stdout: LogSink;
  stderr: LogSink;
  now?: () => EpochMs;
}) {
  const now = options.now ?? Date.now;
  const threshold = RANK[options.level];
  const isJson = options.format === 'json';
  // Request lines wait as records and become text only when their batch is written.
  let buffered: Array<string | RequestRecord> = [];
  let timer: NodeJS.Timeout | undefined;

  // Values go through quoteForLog: JSON.stringify, so input cannot break a line, plus the escapes
  // of what JSON leaves raw but a terminal acts on (bidi overrides, C1 controls).
  const timeOf = lastValueText((ms: number) => new Date(ms).toISOString());
  const format = (level: LogLevel, msg: string, fields: LogFields = {}, timeMs = now()): string => {
    let line = isJson
      ? `{"time":"${timeOf(timeMs)}","level":"${level}","msg":${quoteForLog(msg)}`
      : `${timeOf(timeMs)} ${level.toUpperCase().padEnd(5)} ${escapeUnsafeCharacters(msg)}`;
    for (const key in fields) {
      const value = fields[key];
      if (value === undefined || (isJson && (key === 'time' || key === 'level' || key === 'msg'))) continue;
      line += isJson ? `,"${key}":${valueText(value)}` : ` ${key}=${valueText(value)}`;
    }
    return isJson ? `${line}}\n` : `${line}\n`;
  };

  // The request line is built from our own field names, not by JSON.stringify of a fresh object.
  const quoteMethod = lastValueText(quoteForLog);
  const quotePath = lastValueText(quoteForLog);
  const quoteAddress = lastValueText(quoteForLog);
  const requestLine = ([timeMs, method, path, status, durationMs, address]: RequestRecord): string =>
    isJson
      ? `{"time":"${timeOf(timeMs)}","level":"info","msg":"request","method":${quoteMethod(method)},"path":${quotePath(path)},"status":${status},"durationMs":${durationText(durationMs)},"address":${quoteAddress(address)}}\n`
      : format('info', 'request', { method, path, status, durationMs, address }, timeMs);

  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (buffered.length === 0) return;
    const lines = buffered;
    buffered = [];
    let text = '';
    for (const line of lines) text += typeof line === 'string' ? line : requestLine(line);
    options.stdout.write(text);
  };

  const push = (line: string | RequestRecord): void => {
    buffered.push(line);
    if (buffered.length >= MAX_BUFFERED_LINES) flush();
    else timer ??= setTimeout(flush, FLUSH_INTERVAL_MS);
  };

  const lineAt = (level: LogLevel, isForced = false) => (msg: string, fields?: LogFields): void => {
    if (RANK[level] >= threshold || (isForced && threshold < RANK.silent)) push(format(level, msg, fields));
  };

  const isInfoEnabled = RANK.info >= threshold;
  return {
    info: lineAt('info'),
    warn: lineAt('warn'),
    /** An info line shown at every level but silent (the listening address). */
    announce: lineAt('info', true),
    /** The info line for one answered request (fixed shape: it is written for every request). */
    request(method: string, path: string, status: number, durationMs: number, address: string): void {
      if (isInfoEnabled) push([now(), method, path, status, durationMs, address]);
    },
    /** Goes to stderr with the cause's name, code and stack (never the request that caused it). */
    error(msg: string, cause?: unknown, fields?: LogFields): void {
      if (RANK.error < threshold) return;
      flush();
      options.stderr.write(format('error', msg, { ...fields, ...describeCause(cause) }));
    },
    /** Writes out what is buffered, synchronously enough for an exit right after. */
    flush,
    isEnabled: (level: LogLevel): boolean => RANK[level] >= threshold,
  };
}

interface LogSink {
  write(text: string): unknown;
}

// Request durations are in hundredths of a millisecond and mostly under 10 ms: their text is made
// once (the same text String() gives) instead of formatting a double on every request.
const DURATION_TEXTS: readonly string[] = Array.from({ length: 1000 }, (_, hundredths) => String(hundredths / 100));

function durationText(durationMs: number): string {
  const hundredths = Math.round(durationMs * 100);
  return hundredths >= 0 && hundredths < 1000 && hundredths / 100 === durationMs
    ? (DURATION_TEXTS[hundredths] ?? String(durationMs))
    : String(durationMs);
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
