#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import type { CliIo } from './command-line/flags.js';
import { COMMANDS } from './commands.js';
import { EXIT_FAILURE, EXIT_USAGE, UsageError } from './command-line/usage-error.js';

const HELP = `Usage: gatehouse COMMAND [options]

An account and authentication service speaking the Flood auth API.

Commands:
  serve           run the service (gatehouse serve --help for its options)
  users           administer accounts offline (list, add, set, passwd, set-level, groups, remove)
  tokens          machine tokens offline (add, list, revoke)
  secret rotate   replace the signing secret (every session ends)
  clients         apps that sign users in through Gatehouse (OpenID Connect) offline (add, list, remove, secret)
  keys rotate     replace the OpenID Connect signing keys (old ones stay in the JWKS for an hour)
  flood-token     print a token for a Flood run with --auth none behind the gate
  doctor URL      check through the proxy that the app at URL is wired to Gatehouse correctly

  --version       print the version
  --help          show this help

Exit codes: 0 ok, 1 failure, 2 usage error.
`;

/** The version, written in by the one-file build (dist/gatehouse.mjs has no package.json beside it). */
declare const GATEHOUSE_BUNDLED_VERSION: string | undefined;

function version(): string {
  if (typeof GATEHOUSE_BUNDLED_VERSION === 'string') return GATEHOUSE_BUNDLED_VERSION;
  const manifest: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return typeof manifest === 'object' && manifest !== null && 'version' in manifest
    ? String(manifest.version)
    : 'unknown';
}

async function main(io: CliIo): Promise<number> {
  // npm 7 and later pass the \`--\` of \`npx gatehouse -- --help\` on to the command (older ones keep it):
  // a leading one is npm's, never ours.
  const [command, ...rest] = io.argv[0] === '--' ? io.argv.slice(1) : io.argv;
  const run = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (run !== undefined) return run(rest, io);
  if (command === '--version' || command === '-v') {
    io.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(HELP);
    return 0;
  }
  io.stderr.write(HELP);
  throw new UsageError(command === undefined ? 'a command is needed' : `unknown command ${JSON.stringify(command)}`);
}

// A reader of our output that goes away (`serve | head -1`, a log shipper restarting) makes writes
// fail with EPIPE, which node throws as an unhandled 'error' event. The service must go on
// answering without its log rather than stop: say so once on stderr, then drop what cannot be written.
let isStdoutLost = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (isStdoutLost) return;
  isStdoutLost = true;
  process.stderr.write(`gatehouse: standard output is closed (${error.code ?? error.name}); log lines written there are dropped from now on\n`);
});
process.stderr.on('error', () => {});

const io: CliIo = {
  argv: process.argv.slice(2), env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr,
};
main(io).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const isUsage = error instanceof UsageError;
    io.stderr.write(`gatehouse: ${error instanceof Error ? error.message : String(error)}\n${isUsage ? "Run 'gatehouse --help' for usage.\n" : ''}`);
    process.exitCode = isUsage ? EXIT_USAGE : EXIT_FAILURE;
  },
);
