import { parseFlags, wholeNumberFlag, type CliIo } from '../command-line/flags.js';
import { runChecks } from './doctor-checks.js';
import { exchange, ExchangeFailed } from './doctor-http.js';
import {
  appUrlOf, connectTargetOf, machineTokenOf, MAX_PATHS_FILE_BYTES, MAX_TOKEN_FILE_BYTES, MAX_URLS, otherUrlOf,
  pathsFileText, pathsFileUrls, signInOf, type SignIn,
} from './doctor-input.js';
import type { Ask } from './doctor-answers.js';
import { createReport, PROBE_LIMIT_NOTE, shown } from './doctor-report.js';
import { readAllText, readGivenFile } from './read-input.js';
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../command-line/usage-error.js';

export const DOCTOR_HELP = `Usage: gatehouse doctor URL [URL...] [options]

Checks from outside, through the proxy, that the app at the first URL is wired to Gatehouse
correctly, and says in one line per check what is wrong and how to fix it:

  gate            the proxy answers at URL
  api             a request without a session gets 401, and so does a WebSocket upgrade
  sign-in page    a browser without a session is sent to Gatehouse's sign-in page (no loop, not the app)
  return URL      that redirect names exactly the page asked for, scheme and query included
  client address  sign-ins count against the client's address, not the proxy's nor one it made up
  cookie          the session cookie would be kept by a browser and sent to URL (Secure on https)
  signed in       with that cookie, the app is reached
  probe           the probe path reaches Gatehouse, behind the same gate as the app
  forged headers  Remote-User, Remote-Level, Remote-Groups sent by the client do not reach the app
  jwt cookie      the app never receives the jwt cookie
  forged URI      a token in the client's own X-Original-URI or X-Forwarded-Uri opens nothing
  public URL      Gatehouse reached by a name that is not loopback runs with --public-url, its own site
  account API     on each URL's origin Gatehouse's account and administration API does not answer
                  (NOT_GATEHOUSE_ORIGIN, or the app's own answer); a URL on Gatehouse's own origin is
                  named in a warning: that app's scripts act with the signed-in person's powers
  long URL        a 4,000-character URL fits the proxy's limits
  sign-out        the sign-out page beside the sign-in page clears the cookie and returns to it
  behind the gate each further URL (and each line of --paths FILE): a request and a WebSocket
                  upgrade without a session get no 2xx and no 101 from the app

To sign in it reads a username line and a password line from standard input, and a third line
with the current TOTP code when the account has a second factor; use an account that may open URL:
  printf '%s\\n%s\\n' alice 'her password' | gatehouse doctor https://app.example.com/
Or, instead, --token-file with a machine token of such an account. The doctor signs out again at
the end. The probe sees only its own location: name the app's other locations (a WebSocket path,
static files) as further URLs. See docs/doctor.md.

Options:
  --paths FILE        further URLs to check are behind the gate, one per line: a path (/ws) on
                      URL's origin, or a URL; blank lines and lines starting with # are skipped
  --token-file FILE   a machine token (gh_...) for the checks that need an account, instead of
                      signing in
  --probe-path PATH   the probe route of the proxy configuration (default /.well-known/gatehouse/probe)
  --timeout SECONDS   the longest one request may take, 1 to 120 (default 10)
  --connect HOST:PORT send the requests for URL's origin to this address (as curl --connect-to),
                      to check a site before its name points at the proxy
  --help              show this help

Exit codes: 0 every check passed, 1 a check failed, warned or was skipped, 2 usage error.
`;

const DEFAULT_PROBE_PATH = '/.well-known/gatehouse/probe';
// Whatever answers may be hostile: bodies are read up to this and cut.
const MAX_BODY_BYTES = 64 * 1024;
const MAX_CREDENTIAL_BYTES = 8 * 1024;

export async function doctorCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    [],
    { 'probe-path': 'string', timeout: 'string', connect: 'string', paths: 'string', 'token-file': 'string' },
    { atLeast: 1 },
  );
  if (values['help'] === true) {
    io.stdout.write(DOCTOR_HELP);
    return EXIT_OK;
  }
  const app = appUrlOf(positionals[0] ?? '');
  const others = positionals.slice(1).map((text, index) => otherUrlOf(text, app, `URL ${index + 2}`));
  const pathsFile = values['paths'];
  if (typeof pathsFile === 'string') {
    const { bytes } = await readGivenFile(pathsFile, MAX_PATHS_FILE_BYTES, `--paths ${JSON.stringify(pathsFile)}`);
    others.push(...pathsFileUrls(pathsFileText(bytes, pathsFile), app));
  }
  if (others.length + 1 > MAX_URLS) throw new UsageError(`at most ${MAX_URLS} URLs in all (got ${others.length + 1})`);
  const probePath = typeof values['probe-path'] === 'string' ? values['probe-path'] : DEFAULT_PROBE_PATH;
  if (!/^\/[\x21-\x7e]*$/.test(probePath)) throw new UsageError('--probe-path must be a path starting with /');
  const timeoutSeconds = wholeNumberFlag(values['timeout'], 10, 120, '--timeout must be a whole number of seconds from 1 to 120');
  const connectTo = typeof values['connect'] === 'string' ? connectTargetOf(values['connect'], app) : undefined;
  const tokenFile = values['token-file'];
  const machineToken = typeof tokenFile === 'string'
    ? machineTokenOf((await readGivenFile(tokenFile, MAX_TOKEN_FILE_BYTES, `--token-file ${JSON.stringify(tokenFile)}`)).bytes, tokenFile)
    : undefined;
  const signIn = await readSignIn(io.stdin);
  if (signIn !== undefined && machineToken !== undefined) {
    throw new UsageError('give either a sign-in on standard input or --token-file, not both');
  }

  const { report, summary, isClean } = createReport((text) => io.stdout.write(text));
  const ask: Ask = async (url, headers, extra = {}) => {
    try {
      return await exchange(url, {
        headers, timeoutMs: timeoutSeconds * 1000, maxBodyBytes: MAX_BODY_BYTES, connectTo, ...extra,
      });
    } catch (error) {
      if (error instanceof ExchangeFailed) return `${url.origin} could not be asked (${shown(error.message)})`;
      throw error;
    }
  };
  await runChecks({ app, others, probePath, signIn, machineToken }, ask, report);
  io.stdout.write(`${summary()}\n${PROBE_LIMIT_NOTE}\n`);
  return isClean() ? EXIT_OK : EXIT_FAILURE;
}

/** The sign-in lines from standard input, or undefined when it is a terminal or holds nothing. */
async function readSignIn(stdin: CliIo['stdin']): Promise<SignIn | undefined> {
  if (stdin.isTTY === true) return undefined;
  const tooLarge = `standard input holds more than ${MAX_CREDENTIAL_BYTES} bytes; give a username line and a password line`;
  return signInOf(await readAllText(stdin, MAX_CREDENTIAL_BYTES, tooLarge));
}
