import { createTokenCodec, MIN_SECRET_BYTES } from '../auth/jwt.js';
import { checkUsername } from '../validate/auth.js';
import { parseFlags, wholeNumberFlag, type CliIo } from '../command-line/flags.js';
import { readGivenFile } from './read-input.js';
import { EXIT_OK, UsageError } from '../command-line/usage-error.js';
import { epochSeconds } from '../time.js';

export const FLOOD_TOKEN_HELP = `Usage: gatehouse flood-token --secret-file PATH [--username NAME] [--days N]

Prints a token for the jwt cookie of a Flood started with --auth none, signed with Flood's own
secret, for the proxy to send to Flood in place of the user's cookie (Flood 4.14 in that mode
still requires a jwt cookie it signed, for any username).

Flood keeps its secret in <rundir>/flood.secret (by default ~/.local/share/flood/flood.secret),
unless it was started with --secret; then put that value in a file of its own (mode 0600).

Options:
  --secret-file PATH   Flood's secret file; its exact bytes are the key, as Flood uses them
  --username NAME      the token's username, default gatehouse (Flood --auth none takes any)
  --days N             lifetime in days, from 1 to 36500, default 3650
  --help               show this help

Whoever holds the token can use that Flood as its administrator: keep it in the proxy's
configuration only, readable by the proxy alone, and let Flood listen only on loopback or a
Unix socket. Changing Flood's secret ends the token: mint a new one.
`;

const DEFAULT_USERNAME = 'gatehouse';
const DEFAULT_DAYS = 3650;
const MAX_DAYS = 36_500;
// Flood's own secret is 72 characters; anything this large is the wrong file.
const MAX_SECRET_FILE_BYTES = 4096;

/** `gatehouse flood-token`: writes one token line to stdout; a bad file or flag is a usage error (exit 2). */
export async function floodTokenCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(args, [], { 'secret-file': 'string', username: 'string', days: 'string' }, 0);
  if (values['help'] === true) {
    io.stdout.write(FLOOD_TOKEN_HELP);
    return EXIT_OK;
  }
  const path = values['secret-file'];
  if (typeof path !== 'string' || path === '') {
    throw new UsageError("flood-token needs --secret-file with the path of Flood's secret file");
  }
  const username = typeof values['username'] === 'string' ? values['username'] : DEFAULT_USERNAME;
  if (!checkUsername(username, 'username').ok) throw new UsageError('--username must be 1 to 256 characters without control characters');
  const days = wholeNumberFlag(values['days'], DEFAULT_DAYS, MAX_DAYS, `--days must be an integer from 1 to ${MAX_DAYS}`);
  const file = await readGivenFile(path, MAX_SECRET_FILE_BYTES, `the secret file ${path}`);
  const { mode } = file.stats;
  if ((mode & 0o077) !== 0) {
    io.stderr.write(`gatehouse: warning: ${path} is readable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}); Flood creates it 0600\n`);
  }
  // Flood reads the file as UTF-8 text, untrimmed, and its jsonwebtoken signs with that
  // string's UTF-8 bytes: the same conversion here gives the same key, byte for byte.
  const secret = Buffer.from(file.bytes.toString('utf8'), 'utf8');
  if (secret.length === 0) throw new UsageError(`${path} is empty`);
  if (secret.length < MIN_SECRET_BYTES) {
    // Flood accepts 30 characters; an HMAC-SHA256 key shorter than the hash is weaker (RFC 2104 section 3).
    throw new UsageError(`${path} holds ${secret.length} bytes; a secret of at least ${MIN_SECRET_BYTES} is needed (give Flood a longer one)`);
  }
  const iat = epochSeconds(Date.now());
  // Flood checks its cookie token against a strict {username, iat, exp}: no other claim.
  const token = createTokenCodec(secret).sign({ username, iat, exp: iat + days * 86_400 });
  io.stdout.write(`${token}\n`);
  return EXIT_OK;
}
