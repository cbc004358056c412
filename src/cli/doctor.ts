import { randomBytes } from 'node:crypto';
import { percentEncodeHeaderValue } from '../http/header-value.js';
import { isPlainObject } from '../validate/check.js';
import { parseFlags, wholeNumberFlag, type CliIo } from './commands.js';
import { cookieProblem, parseSetCookie } from './doctor-cookie.js';
import { exchange, ExchangeFailed, type Exchange } from './doctor-http.js';
import { readAllText } from './read-input.js';
import { EXIT_FAILURE, EXIT_OK, UsageError } from './usage-error.js';

export const DOCTOR_HELP = `Usage: gatehouse doctor URL [options]

Checks from outside, through the proxy, that the app at URL is wired to Gatehouse correctly,
and says in one line per check what is wrong and how to fix it:

  gate          the proxy answers at URL
  api           an API request without a session gets 401
  sign-in page  a browser without a session is sent to Gatehouse's sign-in page (no loop, not the app)
  cookie        the session cookie would be kept by a browser and sent to URL
  signed in     with that cookie, the app is reached
  probe         the probe path reaches Gatehouse, behind the same gate as the app
  forged headers  Remote-User, Remote-Level, Remote-Groups sent by the client do not reach the app
  jwt cookie    the app never receives the jwt cookie
  forged URI    a token in the client's own X-Original-URI or X-Forwarded-Uri opens nothing
  long URL      a 4,000-character URL fits the proxy's buffers
  sign-out      the sign-out page beside the sign-in page clears the cookie and returns to it

To sign in it reads a username and a password, one line each, from standard input; use an
account without a second factor that may open URL:
  printf '%s\\n%s\\n' alice 'her password' | gatehouse doctor https://app.example.com/

The doctor signs out again at the end. See docs/doctor.md for the probe route.

Options:
  --probe-path PATH   the probe route of the proxy configuration (default /.well-known/gatehouse/probe)
  --timeout SECONDS   the longest one request may take, 1 to 120 (default 10)
  --connect HOST:PORT send the requests for URL's origin to this address (as curl --connect-to),
                      to check a site before its name points at the proxy
  --help              show this help

Exit codes: 0 every check passed, 1 a check failed or could not be made, 2 usage error.
`;

const DEFAULT_PROBE_PATH = '/.well-known/gatehouse/probe';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const API_ACCEPT = 'application/json';
// Whatever answers may be hostile: bodies are read up to this and cut.
const MAX_BODY_BYTES = 64 * 1024;
const MAX_REDIRECTS = 10;
// A Location this long is a loop carrying the URL inside the URL (each hop encodes the last).
const MAX_LOCATION_LENGTH = 4096;
const LONG_URL_LENGTH = 4000;
const MAX_CREDENTIAL_BYTES = 8 * 1024;
const SIGNED_IN_CHECKS = ['signed in', 'probe', 'forged headers', 'jwt cookie', 'forged URI'];

type Outcome = { readonly status: 'ok' | 'FAIL' | 'skip'; readonly text: string };
const ok = (text: string): Outcome => ({ status: 'ok', text });
const fail = (text: string): Outcome => ({ status: 'FAIL', text });
const skip = (text: string): Outcome => ({ status: 'skip', text });

interface Credentials {
  readonly username: string;
  readonly password: string;
}

export async function doctorCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args, [], { 'probe-path': 'string', timeout: 'string', connect: 'string' }, 1,
  );
  if (values['help'] === true) {
    io.stdout.write(DOCTOR_HELP);
    return EXIT_OK;
  }
  const app = appUrlOf(positionals[0] ?? '');
  const probePath = typeof values['probe-path'] === 'string' ? values['probe-path'] : DEFAULT_PROBE_PATH;
  if (!/^\/[\x21-\x7e]*$/.test(probePath)) throw new UsageError('--probe-path must be a path starting with /');
  const timeoutSeconds = wholeNumberFlag(values['timeout'], 10, 120, '--timeout must be a whole number of seconds from 1 to 120');
  const connectTo = typeof values['connect'] === 'string' ? connectTargetOf(values['connect'], app) : undefined;
  const credentials = await readCredentials(io.stdin);

  let failures = 0;
  const report: Report = (name, outcome) => {
    if (outcome.status !== 'ok') failures += 1;
    io.stdout.write(`${outcome.status.padEnd(5)} ${name}: ${outcome.text}\n`);
  };
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
  await runChecks(app, new URL(probePath, app), credentials, ask, report);
  io.stdout.write(failures === 0 ? 'Every check passed.\n' : `${failures} check(s) did not pass.\n`);
  return failures === 0 ? EXIT_OK : EXIT_FAILURE;
}

function appUrlOf(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${JSON.stringify(text)} is not an absolute URL (for example https://app.example.com/)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('the URL must be http or https');
  if (url.username !== '' || url.password !== '') {
    throw new UsageError('give credentials on standard input, not in the URL');
  }
  url.hash = '';
  return url;
}

function connectTargetOf(text: string, app: URL): { origin: string; host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !(port >= 1 && port <= 65535)) {
    throw new UsageError(`--connect must be HOST:PORT (got ${JSON.stringify(text)})`);
  }
  return { origin: app.origin, host: match[1] ?? match[2] ?? '', port };
}

/** Two lines from standard input, or undefined when it is a terminal or holds nothing. */
async function readCredentials(stdin: CliIo['stdin']): Promise<Credentials | undefined> {
  if (stdin.isTTY === true) return undefined;
  const tooLarge = `standard input holds more than ${MAX_CREDENTIAL_BYTES} bytes; give a username line and a password line`;
  const text = await readAllText(stdin, MAX_CREDENTIAL_BYTES, tooLarge);
  if (text === '') return undefined;
  const [username = '', password = ''] = text.split('\n').map((line) => line.replace(/\r$/, ''));
  if (username === '' || password === '') {
    throw new UsageError('standard input must hold a username line and a password line');
  }
  return { username, password };
}

/** Printable ASCII only, cut short: text from the network goes to a terminal. */
function shown(text: string, max = 160): string {
  const safe = text.replace(/[^\x20-\x7e]/g, '?');
  return safe.length > max ? `${safe.slice(0, max)}...` : safe;
}

const placeOf = (url: URL): string => shown(url.origin + url.pathname);

/** Gatehouse's refusal body: `{code, message}`. */
function refusalCode(answer: Exchange): string | undefined {
  const body = answer.json;
  return isPlainObject(body) && typeof body['code'] === 'string' && typeof body['message'] === 'string'
    ? body['code']
    : undefined;
}

const isRedirect = (status: number): boolean =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
const isSuccess = (status: number): boolean => status >= 200 && status < 300;

type Report = (name: string, outcome: Outcome) => void;
/** One request through the proxy; a string says why it could not be made. */
type Ask = (
  url: URL, headers: Record<string, string>, extra?: { method?: string; body?: string },
) => Promise<Exchange | string>;

/** The checks in the order of the help, each skipped (and counted) when what it needs is missing. */
async function runChecks(
  app: URL, probeUrl: URL, credentials: Credentials | undefined, ask: Ask, report: Report,
): Promise<void> {
  const api = await ask(app, { accept: API_ACCEPT });
  if (typeof api === 'string') {
    report('gate', fail(`${api}. Fix: check the URL, and that the proxy is running and reachable from here`));
    const rest = ['api', 'sign-in page', 'cookie', ...SIGNED_IN_CHECKS, 'long URL', 'sign-out'];
    for (const name of rest) report(name, skip('the proxy could not be reached'));
    return;
  }
  if (api.status >= 500) {
    report('gate', fail(`the proxy answered ${api.status} to ${shown(app.href)}: it cannot reach Gatehouse's forward endpoint or cannot use its answer (nginx turns anything but 2xx, 401 and 403 into 500). Fix: check the forward-auth address (curl http://GATEHOUSE/healthz from the proxy's host) and the proxy's error log`));
  } else {
    report('gate', ok(`${app.origin} answered ${api.status}`));
  }
  report('api', apiOutcome(api, app));

  const signIn = await followToSignIn(app, ask);
  report('sign-in page', signIn.outcome);
  // Without a page found, the sign-in API is looked for where the default routes put it.
  const loginPage = signIn.loginPage ?? new URL('/login', app);

  const signedIn = credentials === undefined
    ? undefined
    : await signInAt(new URL('api/auth/authenticate', loginPage), credentials, app, ask);
  const session = signedIn?.session;
  if (signedIn === undefined) {
    const why = "no credentials on standard input (printf '%s\\n%s\\n' NAME PASSWORD | gatehouse doctor URL)";
    for (const name of ['cookie', ...SIGNED_IN_CHECKS]) report(name, skip(why));
  } else {
    report('cookie', signedIn.outcome);
    if (session === undefined) for (const name of SIGNED_IN_CHECKS) report(name, skip('not signed in (see cookie)'));
  }
  const cookie = session === undefined ? undefined : `jwt=${session.token}`;
  try {
    if (session !== undefined) await runSignedInChecks(app, probeUrl, session, ask, report);
    report('long URL', await checkLongUrl(app, cookie, ask));
    report('sign-out', await checkSignOut(loginPage, cookie, ask));
  } finally {
    // The doctor's own session ends (and is revoked where the service revokes on logout), also
    // when the sign-out page is not routed: the API's logout beside the sign-in page.
    if (cookie !== undefined) await ask(new URL('api/auth/logout', loginPage), { accept: API_ACCEPT, cookie });
  }
}

function apiOutcome(api: Exchange, app: URL): Outcome {
  if (api.status === 401) {
    return ok(refusalCode(api) === undefined
      ? '401 without a session (the body is the proxy\'s own, not Gatehouse\'s)'
      : '401 from Gatehouse without a session');
  }
  if (isSuccess(api.status)) {
    return fail(`an API request without a session reached the app (${api.status}): ${shown(app.pathname)} is not behind the gate. Fix: put every route of the app behind forward auth (the snippet's lines for this app)`);
  }
  if (isRedirect(api.status)) {
    return fail(`an API request without a session was redirected (${api.status} to ${shown(api.headers.location ?? '')}) instead of answered 401, which API clients cannot follow. Fix: let Gatehouse choose: login= on the forward URL (Caddy, Traefik) or error_page 401 to a location asking for it (nginx), never a redirect of the proxy's own`);
  }
  if (api.status < 500) {
    return fail(`an API request without a session got ${api.status}, not 401. Fix: the forward-auth answer must reach the client as it is (401)`);
  }
  return fail(`an API request got ${api.status} (see gate)`);
}

/** Follows redirects by hand from an anonymous browser request, up to MAX_REDIRECTS, and judges where they end. */
async function followToSignIn(app: URL, ask: Ask): Promise<{ outcome: Outcome; loginPage?: URL }> {
  const failed = (text: string): { outcome: Outcome } => ({ outcome: fail(text) });
  let url = app;
  const visited = new Set<string>();
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    const answer = await ask(url, { accept: BROWSER_ACCEPT });
    if (typeof answer === 'string') return failed(answer);
    const location = answer.headers.location;
    if (isRedirect(answer.status) && location !== undefined) {
      if (location.length > MAX_LOCATION_LENGTH) {
        return failed(`a redirect loop: ${shown(url.href, 80)} sends the browser to a ${location.length}-character Location that carries the previous URLs inside it. Fix: route the sign-in page and the api/auth/ path beside it to Gatehouse without forward auth`);
      }
      if (!URL.canParse(location, url.href)) return failed(`${shown(url.href)} redirects to ${shown(location)}, which is not a URL`);
      const next = new URL(location, url);
      const place = `${next.origin}${next.pathname}`;
      if (visited.has(place) || next.href === url.href) {
        return failed(`a redirect loop through ${shown(place)}: the sign-in page is itself behind the gate. Fix: route it and the api/auth/ path beside it to Gatehouse without forward auth`);
      }
      visited.add(place);
      url = next;
      continue;
    }
    if (hop === 0) {
      if (isSuccess(answer.status)) return failed(`a browser without a session got the app (${answer.status}), not the sign-in page. Fix: put the app behind forward auth`);
      if (answer.status === 401) {
        return failed("a browser without a session gets 401, not the sign-in page. Fix: ask Gatehouse for the redirect: login=/login on the forward URL (Caddy, Traefik), or in nginx an error_page 401 to a location that asks the forward endpoint again with login=/login (the snippets' @gatehouse_refused)");
      }
      return failed(`a browser without a session got ${answer.status}, not a redirect to the sign-in page`);
    }
    if (answer.status === 401) {
      return failed(`the sign-in page ${placeOf(url)} is itself behind the gate (Gatehouse answered 401 there rather than redirect to it again). Fix: route it and the api/auth/ path beside it to Gatehouse without forward auth`);
    }
    if (answer.status !== 200) return failed(`the browser was sent to ${placeOf(url)}, which answered ${answer.status}. Fix: route the sign-in page to Gatehouse`);
    // Gatehouse's sign-in page calls api/auth/verify beside it: that answers as only Gatehouse does.
    const verify = await ask(new URL('api/auth/verify', url), { accept: API_ACCEPT });
    if (typeof verify === 'string') return failed(`the browser was sent to ${placeOf(url)}, but api/auth/verify beside it could not be asked`);
    if (!isPlainObject(verify.json) || !isPlainObject(verify.json['configs'])) {
      return failed(`the browser was sent to ${placeOf(url)}, but that is not Gatehouse's sign-in page (api/auth/verify beside it answered ${verify.status}, not Gatehouse). Fix: route ${shown(url.pathname)} and the api/auth/ beside it to Gatehouse without forward auth`);
    }
    return { outcome: ok(`a browser is sent to Gatehouse's sign-in page at ${placeOf(url)}${hop > 1 ? ` (${hop} redirects)` : ''}`), loginPage: url };
  }
  return failed(`more than ${MAX_REDIRECTS} redirects from ${shown(app.href, 80)}: a redirect loop. Fix: route the sign-in page and the api/auth/ path beside it to Gatehouse without forward auth`);
}

interface Session {
  readonly token: string;
  readonly username: string;
  readonly level: 'ADMINISTRATOR' | 'USER';
}

async function signInAt(
  url: URL, credentials: Credentials, app: URL, ask: Ask,
): Promise<{ outcome: Outcome; session?: Session }> {
  const answer = await ask(
    url,
    { accept: API_ACCEPT, 'content-type': 'application/json' },
    { method: 'POST', body: JSON.stringify(credentials) },
  );
  if (typeof answer === 'string') return { outcome: fail(`signing in: ${answer}`) };
  const code = refusalCode(answer);
  if (answer.status !== 200) {
    if (code === 'SECOND_FACTOR_REQUIRED') return { outcome: fail('the account asks for a second factor, which the doctor cannot give. Fix: run it with an account without one') };
    if (answer.status === 401 && code !== undefined) {
      return { outcome: fail(`the sign-in was refused (${shown(code)}). Fix: check the username and password lines on standard input`) };
    }
    if (answer.status === 429) return { outcome: fail(`too many failed sign-ins; wait ${shown(String(answer.headers['retry-after'] ?? 'a while'))} seconds`) };
    return { outcome: fail(`POST ${placeOf(url)} answered ${answer.status}${code === undefined ? ', not Gatehouse' : ` ${shown(code)}`}. Fix: route ${shown(url.pathname.replace(/authenticate$/, ''))} to Gatehouse without forward auth`) };
  }
  const body = isPlainObject(answer.json) ? answer.json : {};
  const username = typeof body['username'] === 'string' ? body['username'] : credentials.username;
  const level = body['level'] === 10 || body['level'] === 'ADMINISTRATOR' ? 'ADMINISTRATOR' : 'USER';
  const cookie = (answer.headers['set-cookie'] ?? [])
    .map(parseSetCookie)
    .find((set) => set?.name === 'jwt' && set.value !== '');
  if (cookie === undefined) {
    return { outcome: fail('the sign-in succeeded but no jwt cookie came back through the proxy. Fix: pass Gatehouse\'s Set-Cookie on the api/auth/ path to the browser (do not hide Set-Cookie there)') };
  }
  const session = { token: cookie.value, username, level } as const;
  const problem = cookieProblem(cookie, url, app);
  if (problem !== undefined) return { outcome: fail(problem), session };
  return { outcome: ok(`signed in as ${shown(username, 64)}; a browser keeps the session cookie and sends it to ${placeOf(app)}`), session };
}

const FORGED_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['remoteUser', 'Remote-User'],
  ['remoteLevel', 'Remote-Level'],
  ['remoteGroups', 'Remote-Groups'],
];

function stringsAt(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : [];
}

/** signed in, probe, forged headers, jwt cookie, forged URI: what the app gets once the gate lets a session through. */
async function runSignedInChecks(app: URL, probeUrl: URL, session: Session, ask: Ask, report: Report): Promise<void> {
  const reached = await ask(app, { accept: BROWSER_ACCEPT, cookie: `jwt=${session.token}` });
  report('signed in', signedInOutcome(reached, session.username));
  const place = shown(probeUrl.pathname);
  const marker = `doctor-forged-${randomBytes(6).toString('hex')}`;
  const probe = await askProbe(probeUrl, session, marker, ask);
  if (typeof probe === 'string') {
    report('probe', fail(probe));
    report('forged headers', skip('the probe path did not answer (see probe)'));
    report('jwt cookie', skip('the probe path did not answer (see probe)'));
    report('forged URI', await checkForgedUri(app, session.token, undefined, ask));
    return;
  }
  report('probe', ok(`${place} reaches Gatehouse's probe behind the gate (401 without a session)`));
  report('forged headers', forgedHeadersOutcome(probe, session, marker));
  const jwtCookie = probe['jwtCookie'] === false
    ? ok('the app does not receive the jwt cookie')
    : fail("the app receives the user's jwt cookie, a bearer token for the whole session. Fix: remove jwt from the Cookie header sent to the app (the snippet's cookie filter)");
  report('jwt cookie', jwtCookie);
  const reachedApp = (key: string): boolean => stringsAt(probe, key).some((value) => value.includes(marker));
  report('forged URI', await checkForgedUri(
    app,
    session.token,
    { original: reachedApp('xOriginalUri'), forwarded: reachedApp('xForwardedUri') },
    ask,
  ));
}

function signedInOutcome(answer: Exchange | string, username: string): Outcome {
  if (typeof answer === 'string') return fail(answer);
  if (isSuccess(answer.status)) return ok(`signed in, the app answered ${answer.status}`);
  if (answer.status === 403) {
    return fail(`signed in as ${shown(username, 64)}, the gate answers 403: the account lacks the level or group this URL asks for. Fix: run the doctor with an account that may open it`);
  }
  if (answer.status === 401 || isRedirect(answer.status)) {
    return fail(`signed in, the gate still refuses (${answer.status}${answer.headers.location === undefined ? '' : ` to ${shown(answer.headers.location, 80)}`}). Fix: the check must receive the request's Cookie header (nginx: do not clear Cookie in the auth_request location) and go to the Gatehouse that signed in`);
  }
  return fail(`signed in, the app answered ${answer.status}`);
}

/** What the app got through the probe path with forged headers (marked `marker`), or why the probe did not answer. */
async function askProbe(
  probeUrl: URL, session: Session, marker: string, ask: Ask,
): Promise<Record<string, unknown> | string> {
  const place = shown(probeUrl.pathname);
  const anonymous = await ask(probeUrl, { accept: API_ACCEPT });
  if (typeof anonymous === 'string') return anonymous;
  if (anonymous.status === 200) {
    return `the probe path ${place} answers without a session: it is not behind the gate, so it cannot show what the app gets. Fix: route it through the same forward auth, header and cookie rules as the app (docs/doctor.md)`;
  }
  const headers: Record<string, string> = {
    accept: API_ACCEPT,
    cookie: `jwt=${session.token}; gatehouse-doctor=1`,
    'x-original-uri': `/${marker}`,
    'x-forwarded-uri': `/${marker}`,
  };
  for (const [, name] of FORGED_HEADERS) {
    headers[name.toLowerCase()] = marker;
    headers[name.toLowerCase().replace('-', '_')] = marker;
  }
  const answer = await ask(probeUrl, headers);
  if (typeof answer === 'string') return answer;
  if (answer.status !== 200 || !isPlainObject(answer.json) || answer.json['probe'] !== 'gatehouse') {
    return `signed in, the probe path ${place} answered ${answer.status}, not Gatehouse's probe. Fix: route ${place} like the app but to Gatehouse's api/auth/probe (docs/doctor.md)`;
  }
  return answer.json;
}

function forgedHeadersOutcome(probe: Record<string, unknown>, session: Session, marker: string): Outcome {
  const forgedNames: string[] = [];
  const problems: string[] = [];
  const expected: Readonly<Record<string, string>> = {
    remoteUser: percentEncodeHeaderValue(session.username),
    remoteLevel: session.level,
  };
  for (const [key, name] of FORGED_HEADERS) {
    const values = stringsAt(probe, key);
    if (values.some((value) => value.includes(marker))) forgedNames.push(name);
    const wanted = expected[key];
    if (wanted === undefined) continue;
    const own = values.filter((value) => !value.includes(marker));
    if (own.length === 0) problems.push(`the app receives no ${name} from the gate`);
    else if (own.length > 1 || own[0] !== wanted) {
      problems.push(`the app receives ${name} ${shown(own.join(', '), 80)}, not ${shown(wanted, 64)}`);
    }
  }
  if (forgedNames.length > 0) {
    return fail(`${forgedNames.join(', ')} sent by the client reached the app (spelled with - or _), so anyone can claim to be anyone. Fix: remove them from the client's request before forward auth (Caddy: request_header -Remote-User, -Remote_User, ... first in the route; nginx: proxy_set_header Remote-User $gatehouse_user and the same for each header)`);
  }
  if (problems.length > 0) {
    return fail(`${problems.join('; ')}. Fix: copy them from the gate's answer (Caddy: copy_headers Remote-User Remote-Level Remote-Groups; nginx: auth_request_set from $upstream_http_remote_user and proxy_set_header)`);
  }
  return ok(`the app gets Remote-User and Remote-Level from the gate only; forged ones sent by the client are dropped`);
}

/** `seenByApp`: whether the forged URI headers sent to the probe reached the app, when the probe answered. */
async function checkForgedUri(
  app: URL, token: string, seenByApp: { original: boolean; forwarded: boolean } | undefined, ask: Ask,
): Promise<Outcome> {
  const control = await ask(app, { accept: API_ACCEPT });
  if (typeof control === 'string') return fail(control);
  if (isSuccess(control.status)) return skip('not checked: the app answers without any session (see api)');
  const opened: string[] = [];
  for (const header of ['X-Original-URI', 'X-Forwarded-Uri']) {
    const answer = await ask(app, {
      accept: API_ACCEPT,
      [header.toLowerCase()]: `/?token=${encodeURIComponent(token)}`,
    });
    if (typeof answer === 'string') return fail(answer);
    if (isSuccess(answer.status)) opened.push(header);
  }
  if (opened.length > 0) {
    return fail(`a token in the client's own ${opened.join(' and ')} opened the gate without a cookie: the proxy passes it to the check. Fix: set the check's URI headers in the proxy (nginx: proxy_set_header X-Original-URI $request_uri; proxy_set_header X-Forwarded-Uri ""; Caddy: header_up -X-Original-URI in forward_auth)`);
  }
  const reached = [
    seenByApp?.original === true ? 'X-Original-URI' : '',
    seenByApp?.forwarded === true ? 'X-Forwarded-Uri' : '',
  ].filter((name) => name !== '');
  if (reached.length > 0) {
    return fail(`the client's own ${reached.join(' and ')} reached the app as sent. Fix: set or remove them on the way to the app (nginx: proxy_set_header X-Original-URI ""; Caddy: request_header -X-Original-URI)`);
  }
  return ok(`a token in the client's own X-Original-URI or X-Forwarded-Uri opens nothing${seenByApp === undefined ? '' : ', and neither reaches the app as sent'}`);
}

/** The app's URL with a query that makes it LONG_URL_LENGTH characters: anonymous, as an API client, then signed in. */
async function checkLongUrl(app: URL, cookie: string | undefined, ask: Ask): Promise<Outcome> {
  const url = new URL(app.href);
  url.search = `${app.search === '' ? '?' : `${app.search}&`}gatehouse-doctor=`;
  url.search += 'x'.repeat(Math.max(0, LONG_URL_LENGTH - url.href.length));
  const length = url.href.length;
  const anonymous = await ask(url, { accept: BROWSER_ACCEPT });
  if (typeof anonymous === 'string') return fail(`a ${length}-character URL: ${anonymous}`);
  const refused = (status: number, who: string): Outcome =>
    status === 414 || status === 431 || status === 400
      ? fail(`the proxy refused a ${length}-character URL from ${who} (${status}). Fix: nginx: large_client_header_buffers 4 16k`)
      : fail(`a ${length}-character URL from ${who} got ${status}: the sign-in redirect (it carries the URL) or the check's headers overflow a proxy buffer. Fix: nginx: proxy_buffer_size 32k, proxy_buffers 4 32k and proxy_busy_buffers_size 32k where the proxy asks Gatehouse for the redirect`);
  if (isSuccess(anonymous.status)) return skip('not checked: the app answers without any session (see api)');
  if (!isRedirect(anonymous.status) && anonymous.status !== 401) {
    return refused(anonymous.status, 'a browser without a session');
  }
  const api = await ask(url, { accept: API_ACCEPT });
  if (typeof api === 'string') return fail(`a ${length}-character URL: ${api}`);
  if (api.status !== 401) return refused(api.status, 'an API client without a session');
  if (cookie === undefined) return ok(`a ${length}-character URL gets the sign-in redirect and 401 (not checked signed in)`);
  const signed = await ask(url, { accept: BROWSER_ACCEPT, cookie });
  if (typeof signed === 'string') return fail(`a ${length}-character URL: ${signed}`);
  if (signed.status === 403) return skip(`a ${length}-character URL gets the sign-in redirect and 401; not checked signed in: the account may not open URL (see signed in)`);
  if (!isSuccess(signed.status)) return refused(signed.status, 'a signed-in browser');
  return ok(`a ${length}-character URL gets the sign-in redirect, 401 for an API client, and the app once signed in`);
}

/** `logout` beside the sign-in page: a redirect back to the sign-in page that clears the `jwt` cookie. */
async function checkSignOut(loginPage: URL, cookie: string | undefined, ask: Ask): Promise<Outcome> {
  const url = new URL('logout', loginPage);
  const answer = await ask(url, { accept: BROWSER_ACCEPT, ...(cookie === undefined ? {} : { cookie }) });
  if (typeof answer === 'string') return fail(`signing out: ${answer}`);
  const { location } = answer.headers;
  const target = location !== undefined && URL.canParse(location, url.href) ? new URL(location, url) : undefined;
  const isCleared = (answer.headers['set-cookie'] ?? [])
    .map(parseSetCookie)
    .some((set) => set?.name === 'jwt' && set.value === '');
  if (
    isRedirect(answer.status) &&
    target?.origin === loginPage.origin &&
    target.pathname === loginPage.pathname &&
    isCleared
  ) {
    return ok(`${placeOf(url)} signs out and returns to the sign-in page`);
  }
  return fail(`${placeOf(url)} answered ${answer.status}${target === undefined ? '' : ` to ${shown(target.pathname, 80)}`}, not Gatehouse's sign-out (a redirect to the sign-in page that clears the cookie); a sign-out link would not sign out. Fix: route ${shown(url.pathname)} to Gatehouse without forward auth, like the sign-in page`);
}
