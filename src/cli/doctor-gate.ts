import { randomBytes } from 'node:crypto';
import {
  API_ACCEPT, BASE_URI_FIX, BROWSER_ACCEPT, isGatehouseNotFound, isGatehouseVerify, isRedirect, isSuccess, refusalCode,
  notServedText, upgradeHeaders, type Doctor,
} from './doctor-answers.js';
import type { Exchange } from './doctor-http.js';
import { MAX_RD_LENGTH } from '../routes/forward.js';
import { fixFor, type ProxyKind } from './doctor-proxy.js';
import { fail, ok, placeOf, shown, skip, type Outcome } from './doctor-report.js';

const MAX_REDIRECTS = 10;
// A Location this long is a loop carrying the URL inside the URL (each hop encodes the last).
const MAX_LOCATION_LENGTH = 4096;

const LOOP_FIX = 'Fix: route the sign-in page and the api/auth/ path beside it to Gatehouse without forward auth';

/** The fix for a URL the gate does not cover, in the proxy's own terms. */
const notGatedFix = (proxy: ProxyKind): string => `Fix: ${fixFor(proxy, {
  nginx: 'include gatehouse/protect.conf in the location that serves this URL (a regular-expression location, such as one for static files, wins over the app\'s prefix location and needs it too)',
  Caddy: 'import gatehouse_protect in the handle block that serves this URL, and let nothing before it answer on its own (a file_server, a reverse_proxy for WebSockets)',
  Traefik: 'add the gatehouse middleware to the router that serves this URL',
})}`;

/** gate: the proxy answers the URL at all, and without a 5xx (the check itself reachable and understood). */
export async function gateOutcome(api: Exchange, app: URL, doctor: Doctor): Promise<Outcome> {
  if (api.status < 500) return ok(`${app.origin} answered ${api.status}`);
  const said = `the proxy answered ${api.status} to ${shown(app.href)}`;
  const verifyUrl = new URL('/api/auth/verify', app);
  const verify = await doctor.ask(verifyUrl, { accept: API_ACCEPT });
  if (typeof verify !== 'string' && isGatehouseNotFound(verify)) {
    return fail(`${said}, and Gatehouse answers its own 404 (nothing at this path) at ${verifyUrl.pathname}, where the proxy sends it: ${BASE_MISSING}`);
  }
  if (typeof verify !== 'string' && isGatehouseVerify(verify)) {
    return fail(`${said}, though Gatehouse answers at ${verifyUrl.pathname} through it: the check fails, and the proxy turns anything but 2xx, 401 and 403 from it into ${api.status}. Fix: the forward URL must be /api/auth/forward on that same Gatehouse (Gatehouse answers 404 to any other path, as when the forward URL has a --base-uri Gatehouse does not); ${fixFor(doctor.proxy, {
      nginx: 'error.log says "auth request unexpected status" and which',
      Caddy: 'Caddy\'s log says what forward_auth got',
    })}`);
  }
  return fail(`${said}: it cannot reach Gatehouse's forward endpoint or cannot use its answer. Fix: check the forward-auth address (curl http://GATEHOUSE/healthz from the proxy's host) and the proxy's error log (${fixFor(doctor.proxy, {
    nginx: 'nginx answers 500 for a check it cannot make, or that answers anything but 2xx, 401 and 403',
    Caddy: 'Caddy answers 502 when forward_auth cannot reach Gatehouse',
    Traefik: 'Traefik answers 500 when forwardAuth cannot reach Gatehouse',
  })})`);
}

// Gatehouse's own 404 at /api/auth/verify: it has a base, and the proxy sends paths without one.
const BASE_MISSING = 'Gatehouse runs with a --base-uri, and the proxy sends it paths without it (the forward URL /api/auth/forward, /login, /api/auth/). Fix: start Gatehouse without --base-uri (GATEHOUSE_BASE_URI), or begin every path the proxy sends it with that base (BASE/api/auth/forward, BASE/login, BASE/api/auth/)';

/** Gatehouse's own 404 came back as the check's answer (forward_auth passes it on): which side has the base. */
async function forwardNotFound(said: string, url: URL, doctor: Doctor): Promise<Outcome> {
  const verifyUrl = new URL('/api/auth/verify', url);
  const verify = await doctor.ask(verifyUrl, { accept: API_ACCEPT });
  const notFound = `${said} Gatehouse's own 404 (nothing at this path)`;
  if (typeof verify !== 'string' && isGatehouseNotFound(verify)) return fail(`${notFound}, and so does ${verifyUrl.pathname}: ${BASE_MISSING}`);
  if (typeof verify !== 'string' && isGatehouseVerify(verify)) {
    return fail(`${notFound}, though Gatehouse answers at ${verifyUrl.pathname}: it has no --base-uri, so its forward endpoint is /api/auth/forward, and the forward URL names another path. Fix: ${fixFor(doctor.proxy, {
      nginx: 'proxy_pass http://GATEHOUSE/api/auth/forward in the check location',
      Caddy: 'forward_auth GATEHOUSE { uri /api/auth/forward?... }',
      Traefik: 'forwardAuth address http://GATEHOUSE/api/auth/forward?...',
    })}, or start Gatehouse with the --base-uri the forward URL begins with`);
  }
  return fail(`${notFound}: the proxy's forward URL and Gatehouse's --base-uri disagree. ${BASE_URI_FIX}`);
}

/**
 * api, and behind the gate for each other URL: a request without a session gets the gate's 401, and
 * so does a WebSocket upgrade; neither may reach the app (2xx, 101).
 */
export async function anonymousOutcome(url: URL, plain: Exchange, doctor: Doctor): Promise<Outcome> {
  const refused = await plainRefusal(url, plain, doctor);
  const upgrade = await doctor.ask(url, { accept: API_ACCEPT, ...upgradeHeaders(randomBytes(16).toString('base64')) });
  const isUpgradeReached = typeof upgrade !== 'string' && (upgrade.status === 101 || isSuccess(upgrade.status));
  if (refused.status !== 'ok') {
    // Both facts, when both hold: the fix is the same, and the 101 shows what an attacker gets.
    if (!isUpgradeReached) return refused;
    const [said = '', fix = ''] = refused.text.split(/(?= Fix: )/);
    return fail(`${said.replace(/\.$/, '')}; a WebSocket upgrade without a session reached the app too (${upgrade.status}).${fix}`);
  }
  if (isUpgradeReached) {
    return fail(`a WebSocket upgrade without a session reached the app (${upgrade.status}): ${shown(url.href)} is not behind forward auth for WebSocket connections. ${notGatedFix(doctor.proxy)}`);
  }
  const upgraded = typeof upgrade === 'string' ? `no answer (${upgrade})` : String(upgrade.status);
  return ok(`${refused.text}; a WebSocket upgrade without a session got ${upgraded}, not the app`);
}

async function plainRefusal(url: URL, answer: Exchange, doctor: Doctor): Promise<Outcome> {
  const { status } = answer;
  const code = refusalCode(answer);
  const place = shown(url.href);
  if (status === 401) return ok(code === undefined ? '401 without a session (the body is the proxy\'s own, not Gatehouse\'s)' : '401 from Gatehouse without a session');
  if (isSuccess(status)) {
    return fail(`an API request without a session reached the app (${status}): ${place} is not behind forward auth. ${notGatedFix(doctor.proxy)}`);
  }
  if (status === 426) {
    return fail(`a request without a session got 426 Upgrade Required, the answer of a WebSocket server (the gate never gives it): ${place} is not behind forward auth. ${notGatedFix(doctor.proxy)}`);
  }
  if (isRedirect(status)) {
    return fail(`an API request without a session was redirected (${status} to ${shown(answer.headers.location ?? '')}) instead of answered 401, which API clients cannot follow. Fix: let Gatehouse choose, never a redirect of the proxy's own: ${fixFor(doctor.proxy, {
      nginx: 'error_page 401 to a location that asks the forward endpoint again with login=',
      Caddy: 'login= on forward_auth\'s uri, and no redir or handle_errors of your own for 401',
      Traefik: 'login= on the forwardAuth address',
    })}`);
  }
  if (status >= 500) return fail(`a request without a session got ${status} (see gate). Fix: see gate`);
  if (isGatehouseNotFound(answer)) return forwardNotFound(`a request without a session to ${place} got`, url, doctor);
  if (code === 'UNKNOWN_LEVEL') {
    return fail(`Gatehouse refuses everyone here (403 ${code}): the forward URL asks for a level that does not exist. Fix: level=ADMINISTRATOR or level=USER on the forward URL, or none`);
  }
  if (code === 'INVALID_GROUP_FILTER') {
    return fail(`Gatehouse refuses everyone here (403 ${code}): group= on the forward URL holds something other than group names. Fix: group=NAME or group=A,B, names of a-z, 0-9, _ and -`);
  }
  if (code !== undefined) return fail(`a request without a session got ${status} ${shown(code)} from Gatehouse, not 401. Fix: the forward URL must be Gatehouse's /api/auth/forward`);
  return fail(`a request without a session got ${status}, not the gate's 401: ${place} is not behind forward auth, or the proxy answers in the gate's place. ${notGatedFix(doctor.proxy)}`);
}

/** Where the redirects from an anonymous browser request end, and which URL was sent to the sign-in page. */
interface SignInPageFound {
  readonly outcome: Outcome;
  /** The sign-in page as the browser was sent to it, query (`rd`) included. */
  readonly loginPage?: URL;
  /** The last URL before the sign-in page: the one the user asked for, as the redirect should name it. */
  readonly redirectedFrom?: URL;
}

/** sign-in page: follows redirects by hand from an anonymous browser request for `start`, up to MAX_REDIRECTS. */
export async function followToSignIn(start: URL, doctor: Doctor): Promise<SignInPageFound> {
  const failed = (text: string): SignInPageFound => ({ outcome: fail(text) });
  let url = start;
  let previous = start;
  const visited = new Set<string>();
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    const answer = await doctor.ask(url, { accept: BROWSER_ACCEPT });
    if (typeof answer === 'string') return failed(answer);
    const location = answer.headers.location;
    if (isRedirect(answer.status) && location !== undefined) {
      if (location.length > MAX_LOCATION_LENGTH) {
        return failed(`a redirect loop: ${shown(url.href, 80)} sends the browser to a ${location.length}-character Location that carries the previous URLs inside it. ${LOOP_FIX}`);
      }
      if (!URL.canParse(location, url.href)) return failed(`${shown(url.href)} redirects to ${shown(location)}, which is not a URL`);
      const next = new URL(location, url);
      const place = `${next.origin}${next.pathname}`;
      if (visited.has(place) || next.href === url.href) {
        return failed(`a redirect loop through ${shown(place)}: the sign-in page is itself behind the gate. Fix: route it and the api/auth/ path beside it to Gatehouse without forward auth`);
      }
      visited.add(place);
      previous = url;
      url = next;
      continue;
    }
    if (hop === 0) return failed(await firstAnswerProblem(url, answer, doctor));
    if (answer.status === 401) {
      return failed(`the sign-in page ${placeOf(url)} is itself behind the gate (Gatehouse answered 401 there rather than redirect to it again). ${LOOP_FIX}`);
    }
    if (isGatehouseNotFound(answer)) return failed(`the browser was sent to ${placeOf(url)}: login= and the location routing it name a path Gatehouse does not serve; ${notServedText(placeOf(url))}`);
    if (answer.status !== 200) return failed(`the browser was sent to ${placeOf(url)}, which answered ${answer.status}. Fix: route the sign-in page to Gatehouse`);
    // Gatehouse's sign-in page calls api/auth/verify beside it: that answers as only Gatehouse does.
    const verify = await doctor.ask(new URL('api/auth/verify', url), { accept: API_ACCEPT });
    if (typeof verify === 'string') return failed(`the browser was sent to ${placeOf(url)}, but api/auth/verify beside it could not be asked`);
    if (!isGatehouseVerify(verify)) {
      return failed(`the browser was sent to ${placeOf(url)}, but that is not Gatehouse's sign-in page (api/auth/verify beside it answered ${verify.status}, not Gatehouse). Fix: route ${shown(url.pathname)} and the api/auth/ beside it to Gatehouse without forward auth`);
    }
    const outcome = ok(`a browser is sent to Gatehouse's sign-in page at ${placeOf(url)}${hop > 1 ? ` (${hop} redirects)` : ''}`);
    return { outcome, loginPage: url, redirectedFrom: previous };
  }
  return failed(`more than ${MAX_REDIRECTS} redirects from ${shown(start.href, 80)}: a redirect loop. ${LOOP_FIX}`);
}

async function firstAnswerProblem(url: URL, answer: Exchange, doctor: Doctor): Promise<string> {
  const { status } = answer;
  if (isSuccess(status)) return `a browser without a session got the app (${status}), not the sign-in page. ${notGatedFix(doctor.proxy)}`;
  if (status === 401) {
    return `a browser without a session gets 401, not the sign-in page. Fix: ask Gatehouse for the redirect: ${fixFor(doctor.proxy, {
      nginx: 'an error_page 401 to a location that asks the forward endpoint again with login=/login (the snippets\' @gatehouse_refused)',
      Caddy: 'login=/login on forward_auth\'s uri',
      Traefik: 'login=/login on the forwardAuth address',
    })}`;
  }
  if (isGatehouseNotFound(answer)) return (await forwardNotFound(`a browser without a session to ${shown(url.href)} got`, url, doctor)).text;
  return `a browser without a session got ${status}, not a redirect to the sign-in page (see ${status >= 500 ? 'gate' : 'api'}). Fix: see ${status >= 500 ? 'gate' : 'api'}`;
}

/**
 * return URL: the redirect to the sign-in page names, in `rd`, exactly the URL that was asked for,
 * scheme included, so the user comes back to it after signing in.
 */
export function returnUrlOutcome(found: SignInPageFound, proxy: ProxyKind): Outcome {
  const { loginPage, redirectedFrom: asked } = found;
  if (loginPage === undefined || asked === undefined) return skip('not checked: no sign-in page was reached (see sign-in page)');
  const rd = loginPage.searchParams.get('rd');
  const uriFix = fixFor(proxy, {
    nginx: 'proxy_set_header X-Forwarded-Uri $request_uri; (not $uri, which loses the query, nor a fixed path) in the location the 401 goes to, which asks Gatehouse for the redirect (@gatehouse_refused)',
    Caddy: 'forward_auth sends the URI as it stands then: put it before any rewrite, uri or handle_path that changes the path, and change no X-Forwarded-Uri',
    Traefik: 'Traefik sends X-Forwarded-Uri itself; trustForwardHeader: false',
  });
  // Gatehouse leaves out an rd longer than nginx's default buffer takes (forward.ts MAX_RD_LENGTH).
  if ((rd === null || rd === '') && encodeURIComponent(asked.href).length > MAX_RD_LENGTH) {
    return skip(`not checked: the URL is too long to come back in rd (${MAX_RD_LENGTH} characters once encoded); give a shorter one`);
  }
  if (rd === null || rd === '') {
    return fail(`the redirect to the sign-in page carries no rd, so after signing in the user lands on the home page, not on ${shown(asked.href)}: Gatehouse was given no URI. Fix: ${uriFix}`);
  }
  const back = URL.canParse(rd, loginPage.href) ? new URL(rd, loginPage) : undefined;
  if (back?.href === asked.href) return ok(`the sign-in redirect names the page asked for exactly (${shown(asked.href, 100)}), so the user returns to it`);
  const lost = `the sign-in redirect returns to ${shown(back?.href ?? rd, 100)}, not to ${shown(asked.href, 100)}, the page asked for`;
  if (back !== undefined && back.protocol !== asked.protocol && back.host === asked.host) {
    return fail(`${lost}: Gatehouse was told ${back.protocol.slice(0, -1)} in X-Forwarded-Proto, as when TLS ends in front of the proxy. Fix: ${fixFor(proxy, {
      nginx: `proxy_set_header X-Forwarded-Proto ${asked.protocol.slice(0, -1)}; in the check, the redirect (@gatehouse_refused) and Gatehouse's locations, where $scheme is what nginx itself got`,
      Caddy: `header_up X-Forwarded-Proto ${asked.protocol.slice(0, -1)} in forward_auth and in the reverse_proxy to Gatehouse, or trusted_proxies for the proxy in front so Caddy passes its header on`,
      Traefik: 'forwardedHeaders.trustedIPs on the entry point for the proxy in front',
    })}`);
  }
  if (back !== undefined && back.host !== asked.host) {
    return fail(`${lost}: Gatehouse was told the host ${shown(back.host)} (X-Forwarded-Host, else Host). Fix: ${fixFor(proxy, {
      nginx: 'proxy_set_header X-Forwarded-Host $http_host; in the redirect location (@gatehouse_refused)',
      Caddy: 'change no Host or X-Forwarded-Host toward forward_auth',
      Traefik: 'change no Host toward the forwardAuth middleware',
    })}`);
  }
  return fail(`${lost}: Gatehouse was given another URI than the one the browser asked for. Fix: ${uriFix}`);
}
