import { parseArgs } from 'node:util';
import {
  buildConfig, isSwitch, printableConfig, SETTINGS, SettingInvalid, type Config, type SettingSpec,
} from '../config.js';
import { createLogger } from '../log/logger.js';
import { secretFromEnvironment } from '../auth/secret.js';
import { startServer, type RunningServer } from '../server.js';
import { offlineInstruction, processFacts } from './offline-command.js';
import { UsageError, EXIT_FAILURE, EXIT_OK } from './usage-error.js';

export interface CliIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

export type ParsedValues = Record<string, string | boolean | string[] | undefined>;
/** A flag's type; 'strings' is a string flag that may be given more than once. */
export type FlagTypes = Record<string, 'string' | 'boolean' | 'strings'>;
export type ParsedFlags = { values: ParsedValues; positionals: string[] };

/** Parses `args` strictly: unknown flags and stray arguments are usage errors. */
export function parseFlags(
  args: readonly string[], settings: readonly SettingSpec[], extra: FlagTypes,
  positionals: number | { readonly atLeast: number },
): ParsedFlags {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = { help: { type: 'boolean' } };
  for (const spec of settings) {
    if (spec.flag !== '') {
      options[spec.flag] = spec.isRepeatable === true ? { type: 'string', multiple: true } : { type: isSwitch(spec) ? 'boolean' : 'string' };
    }
  }
  for (const [name, type] of Object.entries(extra)) {
    options[name] = type === 'strings' ? { type: 'string', multiple: true } : { type };
  }
  try {
    const parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
    const count = parsed.positionals.length;
    if (typeof positionals !== 'number') {
      if (parsed.values['help'] !== true && count < positionals.atLeast) {
        throw new UsageError(`expected at least ${positionals.atLeast} argument(s), got ${count}`);
      }
    } else if (parsed.values['help'] !== true && count !== positionals) {
      throw new UsageError(positionals === 0
        ? `unexpected argument ${JSON.stringify(parsed.positionals[0])}`
        : `expected ${positionals} argument(s), got ${count}`);
    }
    return { values: parsed.values as ParsedValues, positionals: parsed.positionals };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = error instanceof Error ? error.message.replace(/\. To specify.*$/s, '') : String(error);
    // The secret never goes on a command line (ps would show it): say where it goes instead.
    throw new UsageError(message.includes("'--secret'")
      ? `${message}: the signing secret is read from GATEHOUSE_SECRET only`
      : message);
  }
}

/** A flag's whole number from 1 to `max`, `fallback` when it is not given; else a UsageError saying `rule`. */
export function wholeNumberFlag(
  value: string | boolean | string[] | undefined, fallback: number, max: number, rule: string,
): number {
  const text = typeof value === 'string' ? value : String(fallback);
  const number = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(number >= 1 && number <= max)) throw new UsageError(`${rule} (got ${JSON.stringify(text)})`);
  return number;
}

/** Flag value, else environment value, else the setting's default; throws UsageError on a bad value. */
export function configFrom(values: ParsedValues, env: CliIo['env']): Config {
  try {
    return buildConfig((spec) => {
      const flag = spec.flag === '' ? undefined : values[spec.flag];
      // A repeatable flag's values are one list, as its environment variable's commas make one.
      if (Array.isArray(flag)) return flag.join(',');
      if (flag !== undefined) return typeof flag === 'string' ? flag : String(flag);
      return env[spec.env];
    });
  } catch (error) {
    if (error instanceof SettingInvalid) throw new UsageError(error.message);
    throw error;
  }
}

export function settingsHelp(settings: readonly SettingSpec[]): string {
  return settings
    .map((spec) => {
      const name = spec.flag === '' ? `(env only)` : `--${spec.flag}${isSwitch(spec) ? '' : spec.isRepeatable === true ? ' VALUE…' : ' VALUE'}`;
      return `  ${name.padEnd(30)} ${spec.help}\n  ${''.padEnd(30)} env ${spec.env}${spec.fallback === '' ? '' : `, default ${spec.fallback}`}`;
    })
    .join('\n');
}

export const SERVE_HELP = `Usage: gatehouse serve [options]

Runs the service. Every option can also come from its environment variable; the flag wins.

Options:
${settingsHelp(SETTINGS)}
  --print-config                 print the effective configuration (secret redacted) and exit
  --help                         show this help
`;

/** `gatehouse serve`: resolves when the service has stopped after SIGTERM or SIGINT. */
export async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(args, SETTINGS, { 'print-config': 'boolean' }, 0);
  if (values['help'] === true) {
    io.stdout.write(SERVE_HELP);
    return EXIT_OK;
  }
  const config = configFrom(values, io.env);
  if (values['print-config'] === true) {
    if (config.secret !== undefined) secretFromEnvironment(config.secret);
    io.stdout.write(`${JSON.stringify(printableConfig(config), null, 2)}\n`);
    return EXIT_OK;
  }
  const logger = createLogger({
    level: config.logLevel, format: config.logFormat, stdout: io.stdout, stderr: io.stderr,
  });
  // Signal handlers go in before anything is announced: a supervisor may send SIGTERM the
  // moment it sees the listening line, and that must still be a clean stop.
  // A stop during start-up (the lock wait can take 10 s, Docker kills 10 s after SIGTERM) aborts it.
  const startUp = new AbortController();
  const stopRequested = new Promise<string>((resolve) => {
    startUp.signal.addEventListener('abort', () => resolve(String(startUp.signal.reason)));
  });
  const onSignal = (signal: NodeJS.Signals): void => startUp.abort(signal);
  // Lines still batched when the process dies (an uncaught exception) go out on the way: writes
  // to a file or pipe are synchronous there.
  const flushOnExit = (): void => logger.flush();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('exit', flushOnExit);
  try {
    let running: RunningServer;
    try {
      const facts = processFacts();
      running = await startServer(config, {
        logger,
        signal: startUp.signal,
        offlineInstruction: (offlineArgs) => offlineInstruction(facts, config.dataDir, offlineArgs),
      });
    } catch (error) {
      if (!startUp.signal.aborted) throw error;
      logger.info('stopped while waiting for the data directory lock; nothing was started', { signal: await stopRequested });
      logger.flush();
      return EXIT_OK;
    }
    logger.announce(`listening on ${running.url}`, {
      url: running.url, dataDir: config.dataDir, authMethod: config.authMethod,
    });
    logger.flush();
    const reason = await Promise.race([
      stopRequested.then((signal) => ({ signal })),
      running.lockLost.then((lost) => ({ lost })),
    ]);
    if ('lost' in reason) logger.error(`stopping: ${reason.lost.message}`, undefined, { exitCode: EXIT_FAILURE });
    else logger.info('stopping', { signal: reason.signal });
    const isClean = await running.close();
    return isClean && !('lost' in reason) ? EXIT_OK : EXIT_FAILURE;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('exit', flushOnExit);
  }
}
