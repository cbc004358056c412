// The commands of `gatehouse`, listed once: the command line's own (src/cli/) and those features add
// (src/oidc/cli/, src/invitations/link-commands.ts), each given what it may not import: the service to
// run, and the checks of the fields features keep in an account (src/features.ts).
import type { Command } from './command-line/flags.js';
import { doctorCommand } from './cli/doctor.js';
import { floodTokenCommand } from './cli/flood-token.js';
import { secretCommand, usersCommand, usersHelp } from './cli/offline.js';
import { serveCommand } from './cli/serve.js';
import { tokensCommand } from './cli/tokens.js';
import { FEATURE_FIELDS } from './features.js';
import { linkSubcommands } from './invitations/link-commands.js';
import { clientsCommand } from './oidc/cli/clients-command.js';
import { keysCommand } from './oidc/cli/keys-command.js';
import { startServer } from './server.js';

const USERS_EXTENSION = linkSubcommands(FEATURE_FIELDS);

/** `gatehouse users --help`. */
export const USERS_HELP = usersHelp(USERS_EXTENSION);

export const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand(startServer),
  users: usersCommand(FEATURE_FIELDS, USERS_EXTENSION),
  secret: secretCommand,
  tokens: tokensCommand(FEATURE_FIELDS),
  clients: clientsCommand(FEATURE_FIELDS),
  keys: keysCommand,
  'flood-token': floodTokenCommand,
  doctor: doctorCommand,
};
