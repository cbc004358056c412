import { isLoopbackHost } from '../http/client-address.js';
import { isPlainObject } from '../validate/check.js';
import { API_ACCEPT, refusalCode, type Doctor } from './doctor-answers.js';
import type { Exchange } from './doctor-http.js';
import { fixFor } from './doctor-proxy.js';
import { fail, ok, shown, skip, warn, type Outcome } from './doctor-report.js';
import { credentialHeaders, type Credential } from './doctor-session.js';

// docs/contract/own-origin.md: Gatehouse answers accounts and administration on its own origin
// only. The doctor asks each origin it is given where Gatehouse thinks it is (the probe beside the
// sign-in page), then whether the account and administration API answers there.

/** What Gatehouse's probe says of the origin it was asked on. */
export interface OriginSeen {
  /** --public-url, base included; null without it (then every loopback address is Gatehouse's own). */
  readonly publicUrl: string | null;
  /** How Gatehouse judged the origin: its own, a Flood web client's (--flood-url), or an app's. */
  readonly originKind: 'home' | 'flood' | 'app';
}

export function originSeenOf(json: unknown): OriginSeen | undefined {
  if (!isPlainObject(json) || json['probe'] !== 'gatehouse') return undefined;
  const { publicUrl, originKind } = json;
  if (publicUrl !== null && (typeof publicUrl !== 'string' || !URL.canParse(publicUrl))) return undefined;
  if (originKind !== 'home' && originKind !== 'flood' && originKind !== 'app') return undefined;
  return { publicUrl, originKind };
}

/** One origin the doctor was given (the first URL's, then each further URL's), with the probe's answer there. */
export interface OriginAsked {
  /** Gatehouse's base on that origin: where api/auth/ and gatehouse/ are, as beside the sign-in page. */
  readonly base: URL;
  readonly seen: OriginSeen | undefined;
}

/** Asks the probe at `base` (api/auth/probe, routed to Gatehouse beside the sign-in page). */
export async function askOrigin(base: URL, doctor: Doctor): Promise<OriginAsked> {
  const answer = await doctor.ask(new URL('api/auth/probe', base), { accept: API_ACCEPT });
  return { base, seen: typeof answer === 'string' ? undefined : originSeenOf(answer.json) };
}

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Host and port as Gatehouse compares origins: the scheme not compared, ports 80 and 443 dropped. */
const comparableOf = (url: URL): string => `${url.hostname}${url.port === '' || url.port === '80' || url.port === '443' ? '' : `:${url.port}`}`;

/**
 * public URL: Gatehouse reached by a name that is not loopback runs with --public-url. Without it
 * its own origin is only localhost and loopback addresses, so on a real deployment the account and
 * users pages answer nowhere a person can reach, and every app's account link leads to a page that
 * says so.
 */
export function publicUrlOutcome(asked: readonly OriginAsked[]): Outcome {
  const known = asked.find((each) => each.seen !== undefined)?.seen;
  if (known === undefined) {
    const place = shown(new URL('api/auth/probe', asked[0]?.base ?? 'http://invalid/').href);
    return skip(`not checked: the probe beside the sign-in page (${place}) does not say where Gatehouse's own origin is (a Gatehouse older than this doctor, or api/auth/probe not routed to it), so this deployment cannot be called healthy`);
  }
  if (known.publicUrl !== null) return ok(`Gatehouse's own origin is ${shown(new URL(known.publicUrl).origin)} (--public-url)`);
  const named = asked.map((each) => each.base).find((base) => !isLoopbackHost(hostOf(base)));
  if (named === undefined) {
    return ok('Gatehouse runs without --public-url and is reached here on loopback only, where every loopback address is its own origin (a fresh install, an SSH tunnel)');
  }
  return fail(`Gatehouse runs without --public-url, and is reached here as ${shown(named.host)}, a name that is not loopback: its own origin is then only localhost and loopback addresses, so its account and users pages answer nowhere a browser reaches it by name. Fix: give Gatehouse a site of its own that sends everything to it (auth.example.com in deploy/) and start it with --public-url https://THAT-SITE (GATEHOUSE_PUBLIC_URL); docs/deploy.md`);
}

/** How Gatehouse's account (or users) route answered, as far as an answer tells. */
type Answer = 'refused' | 'answered' | 'unclear' | 'other';

/**
 * `refused`: NOT_GATEHOUSE_ORIGIN. `answered`: the route's own answer as on Gatehouse's origin (the
 * account; the list of users). `unclear`: a 401 AUTH_REQUIRED or 403 NOT_ADMINISTRATOR, which the gate
 * in front of an app gives too. `other`: the app's or the proxy's own answer.
 */
function answerOf(route: 'account' | 'users', exchange: Exchange): Answer {
  const code = refusalCode(exchange);
  if (code === 'NOT_GATEHOUSE_ORIGIN') return 'refused';
  if (exchange.status === 200) {
    const { json } = exchange;
    const isAnswered = route === 'account'
      ? isPlainObject(json) && typeof json['username'] === 'string'
      : Array.isArray(json) && json.every((user) => isPlainObject(user) && typeof user['username'] === 'string');
    if (isAnswered) return 'answered';
  }
  if ((exchange.status === 401 && code === 'AUTH_REQUIRED') || (exchange.status === 403 && code === 'NOT_ADMINISTRATOR')) return 'unclear';
  return 'other';
}

const POWERS = 'read the account, sign it out everywhere, and with an administrator\'s session make administrators and set any account\'s password';

/**
 * account API, for one origin: GET api/auth/account and api/auth/users there, with the doctor's
 * credential, get NOT_GATEHOUSE_ORIGIN or the app's own answer, never the routes' answers as on
 * Gatehouse's own origin. An origin Gatehouse takes for its own is named in a warning instead: no
 * rule keeps that app's scripts out (with --public-url whatever the answers; without it, where every
 * loopback address is Gatehouse's own, when the API answers there). On a Flood origin the users list
 * answers by design (--flood-url).
 */
export async function accountApiOutcome(asked: OriginAsked, credential: Credential | undefined, doctor: Doctor): Promise<Outcome> {
  const { base, seen } = asked;
  const headers = { accept: API_ACCEPT, ...(credential === undefined ? {} : credentialHeaders(credential)) };
  const answers: Array<[string, Answer, number]> = [];
  for (const route of ['account', 'users'] as const) {
    const url = new URL(`api/auth/${route}`, base);
    const answer = await doctor.ask(url, headers);
    if (typeof answer === 'string') return fail(answer);
    answers.push([url.pathname, answerOf(route, answer), answer.status]);
  }
  const origin = shown(base.origin);
  const said = answers.map(([path, answer, status]) => `${shown(path, 80)}: ${answer === 'refused' ? '403 NOT_GATEHOUSE_ORIGIN' : status}`).join(', ');
  const answered = answers.filter(([, answer]) => answer === 'answered').map(([path]) => shown(path, 80));
  // With --public-url, Gatehouse's own origin is that one alone, whatever Gatehouse was told of this
  // request's host; without it, every loopback address, as Gatehouse judged the request.
  const publicUrl = seen?.publicUrl ?? null;
  const isHome = publicUrl === null ? seen?.originKind === 'home' : comparableOf(base) === comparableOf(new URL(publicUrl));
  if (isHome && (publicUrl !== null || answered.length > 0)) {
    const why = publicUrl === null ? 'without --public-url every loopback address is' : 'it is --public-url\'s';
    return warn(`${origin} is Gatehouse's own origin (${why}), where its account and administration API answers (${said}): that app's scripts act with the signed-in person's powers (${POWERS}), and no rule can keep them out. Fix: give Gatehouse a site of its own and this app another host name (docs/deploy.md), or keep here only apps you trust as much as Gatehouse`);
  }
  if (answered.length > 0 && !(seen?.originKind === 'flood' && !answered.some((path) => path.endsWith('/account')))) {
    const told = seen?.originKind === 'home' && publicUrl !== null
      ? ` Gatehouse took it for its own origin, ${shown(new URL(publicUrl).origin)}: the proxy tells it that host instead of the browser's.`
      : '';
    return fail(`${origin} is an app's origin, yet Gatehouse's account and administration API answers there as on its own origin (${answered.join(', ')}): a script on any page of the app can ${POWERS}.${told} Fix: ${fixFor(doctor.proxy, {
      nginx: 'include gatehouse/site.conf of deploy/ (only /login, /logout and the sign-in paths of /api/auth/ go to Gatehouse on an app\'s site), with proxy_set_header X-Forwarded-Host $http_host; toward Gatehouse, never its own name',
      Caddy: 'import gatehouse_site of deploy/caddy/gatehouse.caddy (only /login, /logout and the sign-in paths of /api/auth/ go to Gatehouse on an app\'s site), with no header_up Host or X-Forwarded-Host toward Gatehouse',
      Traefik: 'the gatehouse router of deploy/traefik/gatehouse.yml, which sends only the sign-in paths to Gatehouse on an app\'s host',
    })}; and run a Gatehouse that answers accounts only on its own origin (this version)`);
  }
  if (answered.length > 0) return ok(`${origin} is a Flood web client's origin (--flood-url): Flood's users endpoint answers there as its web client needs, the account API does not (${said})`);
  if (answers.every(([, answer]) => answer === 'unclear')) {
    return skip(`not checked: ${origin} answered ${said}, as the gate in front of an app answers and as Gatehouse's own routes do. ${credential === undefined ? 'Give a username and password on standard input' : 'Sign in with a username and password on standard input instead of a machine token'} to tell them apart`);
  }
  const refused = answers.every(([, answer]) => answer === 'refused');
  return ok(`${origin}: the account and administration API does not answer there (${said}${refused ? '' : ', not Gatehouse\'s'})`);
}
