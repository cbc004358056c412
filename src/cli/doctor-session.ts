import { isPlainObject } from '../validate/check.js';
import {
  API_ACCEPT, BROWSER_ACCEPT, isGatehouseNotFound, isRedirect, isSuccess, notServedText, refusalCode, type Doctor,
} from './doctor-answers.js';
import { cookieProblem, parseSetCookie } from './doctor-cookie.js';
import type { Exchange } from './doctor-http.js';
import type { SignIn } from './doctor-input.js';
import { fixFor } from './doctor-proxy.js';
import { fail, ok, placeOf, shown, skip, warn, type Outcome } from './doctor-report.js';

/** What the checks that need an account send: a session signed in through the proxy, or a machine token. */
export type Credential =
  | { readonly kind: 'session'; readonly token: string; readonly username: string; readonly level: 'ADMINISTRATOR' | 'USER' }
  | { readonly kind: 'token'; readonly token: string };

/** The headers that carry `credential` (a machine token passes the gate in Authorization only). */
export function credentialHeaders(credential: Credential): Record<string, string> {
  return credential.kind === 'session' ? { cookie: `jwt=${credential.token}` } : { authorization: `Bearer ${credential.token}` };
}

const SECOND_FACTOR_HOWTO = "give the account's current TOTP code as a third line of standard input (printf '%s\\n%s\\n%s\\n' NAME PASSWORD CODE | gatehouse doctor URL), or a machine token with --token-file";

/** cookie: signs in at `url` (api/auth/authenticate beside the sign-in page) and judges the session cookie as a browser would. */
export async function signInAt(
  url: URL, signIn: SignIn, app: URL, doctor: Doctor,
): Promise<{ outcome: Outcome; session?: Credential }> {
  const answer = await doctor.ask(
    url,
    { accept: API_ACCEPT, 'content-type': 'application/json' },
    { method: 'POST', body: JSON.stringify(signIn) },
  );
  if (typeof answer === 'string') return { outcome: fail(`signing in: ${answer}`) };
  const code = refusalCode(answer);
  if (answer.status !== 200) return { outcome: refusedSignIn(answer, code, url) };
  const body = isPlainObject(answer.json) ? answer.json : {};
  const username = typeof body['username'] === 'string' ? body['username'] : signIn.username;
  const level = body['level'] === 10 || body['level'] === 'ADMINISTRATOR' ? 'ADMINISTRATOR' : 'USER';
  const cookie = (answer.headers['set-cookie'] ?? [])
    .map(parseSetCookie)
    .find((set) => set?.name === 'jwt' && set.value !== '');
  if (cookie === undefined) {
    return { outcome: fail('the sign-in succeeded but no jwt cookie came back through the proxy. Fix: pass Gatehouse\'s Set-Cookie on the api/auth/ path to the browser (do not hide Set-Cookie there)') };
  }
  const session: Credential = { kind: 'session', token: cookie.value, username, level };
  const problem = cookieProblem(cookie, url, app);
  if (problem !== undefined) return { outcome: fail(problem), session };
  const kept = `signed in as ${shown(username, 64)}; a browser keeps the session cookie and sends it to ${placeOf(app)}`;
  if (!cookie.isSecure && (url.protocol === 'https:' || app.protocol === 'https:')) {
    return {
      outcome: warn(`${kept}, but on this https site it is not marked Secure, so a browser would also send it over plain http to the same host, where anyone on the way can read it. Fix: start Gatehouse with --secure-cookie (GATEHOUSE_SECURE_COOKIE), or have the proxy send X-Forwarded-Proto: https to Gatehouse's api/auth/ from an address in --trust-proxy`),
      session,
    };
  }
  return { outcome: ok(kept), session };
}

function refusedSignIn(answer: Exchange, code: string | undefined, url: URL): Outcome {
  if (code === 'SECOND_FACTOR_REQUIRED') return skip(`not checked: the account has a second factor; ${SECOND_FACTOR_HOWTO}`);
  if (code === 'INVALID_SECOND_FACTOR') {
    return fail('the TOTP code on the third line was refused (INVALID_SECOND_FACTOR). Fix: give the current code; each one signs in once, within its 30 seconds');
  }
  if (answer.status === 401 && code !== undefined) {
    return fail(`the sign-in was refused (${shown(code)}). Fix: check the username and password lines on standard input`);
  }
  if (answer.status === 429) return fail(`too many failed sign-ins; wait ${shown(String(answer.headers['retry-after'] ?? 'a while'))} seconds`);
  if (isGatehouseNotFound(answer)) return fail(`signing in: ${notServedText(placeOf(url))}`);
  return fail(`POST ${placeOf(url)} answered ${answer.status}${code === undefined ? ', not Gatehouse' : ` ${shown(code)}`}. Fix: route ${shown(url.pathname.replace(/authenticate$/, ''))} to Gatehouse without forward auth`);
}

/** signed in: with the credential, the app is reached. Refused for two factors is not made, not failed. */
export function signedInOutcome(answer: Exchange | string, credential: Credential, doctor: Doctor): Outcome {
  if (typeof answer === 'string') return fail(answer);
  if (isSuccess(answer.status)) return ok(`${credential.kind === 'token' ? 'with the machine token' : 'signed in'}, the app answered ${answer.status}`);
  const who = credential.kind === 'session' ? `signed in as ${shown(credential.username, 64)}` : 'with the machine token';
  if (answer.status >= 500) return fail(`${who}, the proxy answered ${answer.status} (see gate). Fix: see gate`);
  if (isGatehouseNotFound(answer)) return fail(`${who}, the check's answer came back: Gatehouse's own 404 (see api). Fix: see api`);
  if (answer.status === 403) {
    return fail(`${who}, the gate answers 403: the account lacks the level or group this URL asks for. Fix: run the doctor with an account that may open it`);
  }
  const { location } = answer.headers;
  const asksTwoFactors = refusalCode(answer) === 'SECOND_FACTOR_REQUIRED' ||
    (location !== undefined && URL.canParse(location, 'http://x') && new URL(location, 'http://x').searchParams.has('mfa'));
  if (asksTwoFactors) {
    return skip(credential.kind === 'session'
      ? `not checked: the URL asks for two factors (mfa=1) and this session has one: ${SECOND_FACTOR_HOWTO}`
      : 'not checked: the URL asks for two factors (mfa=1) and lets no machine token pass (it would say tokens=1): sign in with a TOTP code instead');
  }
  if (answer.status === 401 || isRedirect(answer.status)) {
    const header = credential.kind === 'session' ? 'Cookie' : 'Authorization';
    return fail(`${who}, the gate still refuses (${answer.status}${location === undefined ? '' : ` to ${shown(location, 80)}`}). Fix: the check must receive the request's ${header} header and go to the Gatehouse that ${credential.kind === 'session' ? 'signed in' : 'made the token'} (${fixFor(doctor.proxy, {
      nginx: `do not clear ${header} in the auth_request location`,
      Caddy: `no header_up -${header} in forward_auth`,
      Traefik: `${header} in authRequestHeaders`,
    })})`);
  }
  return fail(`${who}, the app answered ${answer.status}`);
}

/** sign-out: `logout` beside the sign-in page, a redirect back to the sign-in page that clears the `jwt` cookie. */
export async function signOutOutcome(loginPage: URL, cookie: string | undefined, doctor: Doctor): Promise<Outcome> {
  const url = new URL('logout', loginPage);
  const answer = await doctor.ask(url, { accept: BROWSER_ACCEPT, ...(cookie === undefined ? {} : { cookie }) });
  if (typeof answer === 'string') return fail(`signing out: ${answer}`);
  const { location } = answer.headers;
  const target = location !== undefined && URL.canParse(location, url.href) ? new URL(location, url) : undefined;
  const isCleared = (answer.headers['set-cookie'] ?? [])
    .map(parseSetCookie)
    .some((set) => set?.name === 'jwt' && set.value === '');
  if (isGatehouseNotFound(answer)) return fail(`signing out: ${notServedText(placeOf(url))}`);
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
