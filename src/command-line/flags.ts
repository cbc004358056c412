import { parseArgs } from 'node:util';
import { buildConfig, isSwitch, SettingInvalid, type Config, type SettingSpec } from '../config.js';
import { UsageError } from './usage-error.js';

// How every command reads its flags: strictly, each a setting's flag or one of its own, and the
// settings from flags, else the environment (docs/architecture.md "The borders": the command line's
// helpers are the core's, so a feature's commands use them as src/cli/'s do).

export interface CliIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

export type ParsedValues = Record<string, string | boolean | string[] | undefined>;
/** A command: its arguments after its name, the terminal; resolves to the exit code. */
export type Command = (args: readonly string[], io: CliIo) => Promise<number>;

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
