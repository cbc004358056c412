import { SETTINGS, type Config, type SettingSpec } from '../config.js';
import { ValidationFailed } from '../errors.js';
import { escapeUnsafeCharacters } from '../log/terminal-safe.js';
import { guardWrites, openDataDir } from '../store/data-dir.js';
import { realFileSystem, type StoreFileSystem } from '../store/file-system.js';
import { DataDirLockLost } from '../store/lock.js';
import type { StoredUser, UserStore } from '../store/users.js';
import type { Checker } from '../validate/check.js';
import { configFrom, parseFlags, type CliIo, type FlagTypes, type ParsedFlags } from './flags.js';
import { UsageError } from './usage-error.js';

// Offline administration works on the data directory directly, holding its lock, so it
// refuses while a service runs there. It goes through the same validators and store rules.
export const OFFLINE_SETTINGS = SETTINGS.filter((spec) => ['data-dir', 'scrypt', 'min-password-length'].includes(spec.flag));

export const DATA_DIR_SETTINGS = OFFLINE_SETTINGS.filter((spec) => spec.flag === 'data-dir');

/** Flags, else the environment: the service's settings (even invalid ones) are not the offline commands' to check. */
export function offlineConfig({ values }: ParsedFlags, env: CliIo['env']): Config {
  return configFrom(values, Object.fromEntries(OFFLINE_SETTINGS.map((spec) => [spec.env, env[spec.env]])));
}

export function valid<T>(check: Checker<T>, input: unknown, what: string): T {
  const result = check(input, what);
  if (!result.ok) throw new UsageError(new ValidationFailed(result.problems).message);
  return result.value;
}

/** A command whose subcommands work on the data directory: each one's number of arguments and own flags. */
interface OfflineGroup {
  readonly name: string;
  readonly help: string;
  readonly settings: readonly SettingSpec[];
  readonly commands: Readonly<Record<string, { readonly arity: number; readonly flags?: FlagTypes }>>;
}

type OfflineCall = ParsedFlags & { readonly command: string };

/** Parses `NAME COMMAND [options]` against `group`; undefined when the help was asked for (and printed). */
export function parseOffline(args: readonly string[], io: CliIo, group: OfflineGroup): OfflineCall | undefined {
  const [command, ...rest] = args;
  const { name } = group;
  if (command === '--help' || command === 'help') {
    io.stdout.write(group.help);
    return undefined;
  }
  const shape = command !== undefined && Object.hasOwn(group.commands, command) ? group.commands[command] : undefined;
  if (command === undefined || shape === undefined) {
    if (command === undefined || name !== 'users') io.stderr.write(group.help);
    if (command !== undefined) throw new UsageError(`unknown ${name} command ${JSON.stringify(command)}`);
    const names = Object.keys(group.commands).join(', ').replace(/, ([^,]*)$/, ' or $1');
    throw new UsageError(`${name} needs a command: ${names}`);
  }
  const parsed = parseFlags(rest, group.settings, shape.flags ?? {}, shape.arity);
  if (parsed.values['help'] !== true) return { ...parsed, command };
  io.stdout.write(group.help);
  return undefined;
}

/**
 * Runs `work` holding the data directory's lock (renewed meanwhile, a password prompt included), waiting for a
 * stale one; every write is refused once the lease is lost, and the command then fails even if it wrote nothing.
 */
export async function withDataDir<T>(
  dataDir: string, purpose: string, io: Pick<CliIo, 'stderr'>, work: (fileSystem: StoreFileSystem) => Promise<T>,
): Promise<T> {
  const { lock } = await openDataDir(dataDir, {
    purpose,
    onWait: (message) => io.stderr.write(`gatehouse: ${message}\n`),
  });
  const lostLease = (): DataDirLockLost => new DataDirLockLost(dataDir, 'its lease ran out or was taken over while the command ran');
  try {
    let result: T;
    try {
      result = await work(guardWrites(realFileSystem, lock, dataDir));
    } catch (error) {
      // The store reports a refused write as "not saved": say why.
      throw lock.isHeld() ? error : lostLease();
    }
    if (!lock.isHeld()) throw lostLease();
    return result;
  } finally {
    await lock.release();
  }
}

export function existingUser(store: UserStore, name: string): StoredUser {
  const user = store.find(name);
  if (user === undefined) throw new Error(`no user is named ${escapeUnsafeCharacters(JSON.stringify(name))}`);
  return user;
}


/** A subcommand a feature adds to `users` (src/invitations/link-commands.ts): its arguments and flags, and what it runs. */
interface OfflineSubcommand {
  readonly arity: number;
  readonly flags?: FlagTypes;
  run(call: OfflineCall, io: CliIo): Promise<number>;
}

/** The subcommands features add to `users`, with the lines they add to its help. */
export interface UsersExtension {
  readonly helpLines: string;
  readonly commands: Readonly<Record<string, OfflineSubcommand>>;
}
