import { hashPassword } from '../auth/password.js';
import { SECRET_FILE, writeNewSecret } from '../auth/secret.js';
import { addUser, changeUser, newAccount, refuseTakenName, removeUser, type UserChanges } from '../store/account-rules.js';
import { escapeUnsafeCharacters } from '../log/terminal-safe.js';
import type { FeatureFieldChecks } from '../store/stored-fields.js';
import { openUserStore } from '../store/users.js';
import { checkNewUsername, checkUsername, passwordChecker } from '../validate/auth.js';
import { checkClientSettings, type ClientSettings } from '../validate/client-settings.js';
import { checkGroups } from '../validate/groups.js';
import { checkAccessLevel, type AccessLevel } from '../validate/level.js';
import { checkDisplayName, checkEmail } from '../validate/profile.js';
import { settingsHelp, type CliIo, type Command, type ParsedFlags } from '../command-line/flags.js';
import {
  DATA_DIR_SETTINGS, existingUser, offlineConfig, OFFLINE_SETTINGS, parseOffline, valid, withDataDir, type UsersExtension,
} from '../command-line/offline.js';
import { readClientInput, readNewPassword } from './read-input.js';
import { EXIT_OK, UsageError } from '../command-line/usage-error.js';
import { epochSeconds } from '../time.js';

/** `users`' help, with the lines of the subcommands features add. */
export const usersHelp = (extension: UsersExtension): string => `Usage: gatehouse users COMMAND [options]

Administers accounts while the service is stopped.

Commands:
  list                          print every username and level
  add NAME --level LEVEL [--client-file PATH]
                                add a user (LEVEL: ADMINISTRATOR or USER). Without a client flag
                                the account has no torrent-client settings (for apps behind the
                                gate). PATH: a file holding the client settings as JSON; or
                                --client-stdin: standard input holds the password on its first
                                line, then the JSON; or --client JSON (visible in ps and shell
                                history: avoid)
  groups NAME GROUPS            set the groups of NAME (comma-separated names of a-z 0-9 _ -,
                                at most 32; '' removes them all). Sessions stay valid
  set NAME [--email ADDRESS] [--name 'DISPLAY NAME']
                                set the e-mail address (counted as verified) and display name
                                apps signed in through Gatehouse receive; '' removes one
  passwd NAME                   set a new password (every session of NAME ends)
  set-level NAME LEVEL          change a level (every session of NAME ends)
  reset NAME [--totp] [--passkeys] [--tokens]
                                take ways in away: TOTP and its recovery codes, every passkey
                                (either ends every session of NAME), every machine token
  remove NAME                   delete a user
${extension.helpLines}

Passwords are read from a prompt without echo, or from standard input with --password-stdin
(or, with --client-stdin, from its first line); never from the command line.

Options:
${settingsHelp(OFFLINE_SETTINGS)}
  --password-stdin               read the password from standard input
  --email ADDRESS, --name NAME   (set) the e-mail address and display name
  --client-file PATH             (add) read the client settings (JSON) from a file
  --client-stdin                 (add) read the password, then on the next lines the client
                                 settings (JSON), from standard input
  --totp, --passkeys, --tokens   (reset) what to take away; at least one
  --help                         show this help
`;

export const SECRET_HELP = `Usage: gatehouse secret rotate [options]

Replaces the signing secret in the data directory. Every session ends: users log in again.
Authenticator apps keep working: TOTP seeds are sealed with seal.key, which this leaves alone.

Options:
${settingsHelp(DATA_DIR_SETTINGS)}
  --help                         show this help
`;

function parseLevel(text: string | undefined): AccessLevel {
  return valid(checkAccessLevel, text === '10' || text === '5' ? Number(text) : text, 'level');
}

/** `gatehouse users`, reading accounts with the features' checks (`fields`), with the subcommands features add. */
export const usersCommand = (fields: FeatureFieldChecks, extension: UsersExtension): Command => async (args, io) => {
  const call = parseOffline(args, io, {
    name: 'users',
    help: usersHelp(extension),
    settings: OFFLINE_SETTINGS,
    commands: {
      list: { arity: 0 },
      add: {
        arity: 1,
        flags: {
          level: 'string', client: 'string', 'client-file': 'string',
          'client-stdin': 'boolean', 'password-stdin': 'boolean',
        },
      },
      passwd: { arity: 1, flags: { 'password-stdin': 'boolean' } },
      set: { arity: 1, flags: { email: 'string', name: 'string' } },
      'set-level': { arity: 2 },
      groups: { arity: 2 },
      reset: { arity: 1, flags: { totp: 'boolean', passkeys: 'boolean', tokens: 'boolean' } },
      remove: { arity: 1 },
      ...extension.commands,
    },
  });
  if (call === undefined) return EXIT_OK;
  const { command, values, positionals } = call;
  const added = Object.hasOwn(extension.commands, command) ? extension.commands[command] : undefined;
  if (added !== undefined) return added.run(call, io);
  const config = offlineConfig(call, io.env);
  // A new name may not be "." or ".."; an existing one (from an older users file) can still be named, and removed.
  const name = positionals[0] === undefined
    ? ''
    : valid(command === 'add' ? checkNewUsername : checkUsername, positionals[0], 'NAME');
  const shown = escapeUnsafeCharacters(name);
  const nowSeconds = epochSeconds(Date.now());
  const hashOf = async (password: string): Promise<string> =>
    hashPassword(valid(passwordChecker(config.passwordMinimums.gatehouse), password, 'password'), config.scryptCost);
  const newPassword = (): Promise<string> => readNewPassword(io, values['password-stdin'] === true);

  return withDataDir(config.dataDir, `users ${command}`, io, async (fileSystem) => {
    const store = await openUserStore(config.dataDir, fileSystem, fields);
    if (command !== 'list' && command !== 'add') existingUser(store, name);
    switch (command) {
      case 'list':
        // Names are shown with bidi controls, C1 controls and line separators as \uXXXX, so none can disguise itself.
        for (const user of store.list()) {
          io.stdout.write(`${escapeUnsafeCharacters(user.username)}\t${String(user.level)}\n`);
        }
        return EXIT_OK;
      case 'add': {
        if (typeof values['level'] !== 'string') throw new UsageError('users add needs --level ADMINISTRATOR or --level USER');
        if (values['client-stdin'] === true && values['password-stdin'] === true) {
          throw new UsageError('--client-stdin already reads the password from the first line of standard input: leave out --password-stdin');
        }
        const level = parseLevel(values['level']);
        // Before the password is asked for: a taken name would otherwise be refused only after it was typed twice.
        refuseTakenName({ has: (other) => store.find(other) !== undefined, values: () => store.list() }, name);
        // No client flag: an account for the apps behind the gate, without torrent-client settings.
        const input = await readClientInput(values, io.stdin);
        let client: ClientSettings | undefined;
        if (input !== undefined) {
          let clientJson: unknown;
          try {
            clientJson = JSON.parse(input.json);
          } catch {
            throw new UsageError('the client settings are not valid JSON');
          }
          client = valid(checkClientSettings, clientJson, 'client');
        }
        const passwordHash = await hashOf(input?.password ?? (await newPassword()));
        const fields = { username: name, level, passwordHash, ...(client === undefined ? {} : { client }) };
        await store.change((view) => addUser(view, newAccount(fields, nowSeconds)));
        io.stdout.write(`added ${shown}\n`);
        return EXIT_OK;
      }
      case 'passwd': {
        const passwordHash = await hashOf(await newPassword());
        await store.change((view) => changeUser(view, name, { passwordHash }, nowSeconds));
        io.stdout.write(`changed the password of ${shown}; their sessions have ended\n`);
        return EXIT_OK;
      }
      case 'set': {
        const changes = profileChanges(values);
        await store.change((view) => changeUser(view, name, changes, nowSeconds));
        const email = store.find(name)?.email;
        const displayName = store.find(name)?.name;
        io.stdout.write(`${shown}: e-mail ${email === undefined ? 'none' : escapeUnsafeCharacters(email)}, name ${displayName === undefined ? 'none' : escapeUnsafeCharacters(displayName)}\n`);
        return EXIT_OK;
      }
      case 'set-level': {
        const level = parseLevel(positionals[1]);
        await store.change((view) => changeUser(view, name, { level }, nowSeconds));
        io.stdout.write(`${shown} is now ${String(level)}\n`);
        return EXIT_OK;
      }
      case 'reset': {
        const taken = (['totp', 'passkeys', 'tokens'] as const).filter((what) => values[what] === true);
        if (taken.length === 0) throw new UsageError('users reset needs --totp, --passkeys or --tokens');
        const changes = {
          removeTotp: taken.includes('totp'),
          removePasskeys: taken.includes('passkeys'),
          removeTokens: taken.includes('tokens'),
        };
        await store.change((view) => changeUser(view, name, changes, nowSeconds));
        const ended = changes.removeTotp || changes.removePasskeys ? '; their sessions have ended' : '';
        io.stdout.write(`took ${taken.join(', ')} away from ${shown}${ended}\n`);
        return EXIT_OK;
      }
      case 'groups': {
        const text = positionals[1] ?? '';
        const groups = valid(checkGroups, text === '' ? [] : text.split(','), 'GROUPS');
        await store.change((view) => changeUser(view, name, { groups }, nowSeconds));
        io.stdout.write(groups.length === 0
          ? `${shown} is in no group now\n`
          : `${shown} is now in ${groups.join(', ')}\n`);
        return EXIT_OK;
      }
      default:
        await store.change((view) => removeUser(view, name));
        io.stdout.write(`removed ${shown}\n`);
        return EXIT_OK;
    }
  });
};

/** `users set`'s changes: an address set offline is an administrator's, so verified; '' removes. */
function profileChanges(values: ParsedFlags['values']): UserChanges {
  const { email, name } = values;
  if (typeof email !== 'string' && typeof name !== 'string') throw new UsageError('users set needs --email or --name (or both)');
  return {
    ...(typeof email === 'string'
      ? { email: email === '' ? null : { address: valid(checkEmail, email, '--email'), isVerified: true } }
      : {}),
    ...(typeof name === 'string' ? { name: name === '' ? null : valid(checkDisplayName, name, '--name') } : {}),
  };
}

export async function secretCommand(args: readonly string[], io: CliIo): Promise<number> {
  const commands = { rotate: { arity: 0 } };
  const call = parseOffline(args, io, { name: 'secret', help: SECRET_HELP, settings: DATA_DIR_SETTINGS, commands });
  if (call === undefined) return EXIT_OK;
  for (const name of ['GATEHOUSE_SECRET', 'GATEHOUSE_SECRET_FILE']) {
    if (io.env[name] !== undefined && io.env[name] !== '') {
      throw new Error(`${name} is set, so the secret file in the data directory is not used: change ${name === 'GATEHOUSE_SECRET' ? 'GATEHOUSE_SECRET' : 'the file it names'} instead and restart the service.`);
    }
  }
  const config = offlineConfig(call, io.env);
  await withDataDir(config.dataDir, 'secret rotate', io, (fileSystem) => writeNewSecret(fileSystem, config.dataDir));
  io.stdout.write(`replaced the signing secret in ${config.dataDir}/${SECRET_FILE}: every session has ended, users must log in again\n`);
  return EXIT_OK;
}
