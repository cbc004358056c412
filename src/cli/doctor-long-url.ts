import { API_ACCEPT, BROWSER_ACCEPT, isRedirect, isSuccess, type Doctor } from './doctor-answers.js';
import { fixFor } from './doctor-proxy.js';
import { fail, ok, skip, type Outcome } from './doctor-report.js';

const LONG_URL_LENGTH = 4000;

/** What the same URL, short, got: the long one is judged only where the short one passed. */
interface ShortUrlResults {
  /** An API request without a session got 401. */
  readonly isRefused: boolean;
  /** Credential headers with which the short URL reached the app; undefined when it did not, or none. */
  readonly signedInHeaders: Record<string, string> | undefined;
  /** A credential was given (so a short URL not reached with it leaves part of this check unmade). */
  readonly hasCredential: boolean;
}

/**
 * long URL: the app's URL with a query that makes it LONG_URL_LENGTH characters, anonymous (browser and
 * API client), then with the credential. Only where the short URL passed, so that a failure here is the
 * length's, and its fix the proxy's own limit, in that proxy's terms.
 */
export async function longUrlOutcome(app: URL, short: ShortUrlResults, doctor: Doctor): Promise<Outcome> {
  const url = new URL(app.href);
  url.search = `${app.search === '' ? '?' : `${app.search}&`}gatehouse-doctor=`;
  url.search += 'x'.repeat(Math.max(0, LONG_URL_LENGTH - url.href.length));
  const length = url.href.length;
  if (!short.isRefused) return skip('not checked: the short URL does not get 401 without a session either (see api)');
  const anonymous = await doctor.ask(url, { accept: BROWSER_ACCEPT });
  if (typeof anonymous === 'string') return fail(`a ${length}-character URL: ${anonymous}`);
  const refused = (status: number, who: string): Outcome => fail(`${tooLong(length, status, who)} ${limitFix(status, doctor)}`);
  if (!isRedirect(anonymous.status) && anonymous.status !== 401) return refused(anonymous.status, 'a browser without a session');
  const api = await doctor.ask(url, { accept: API_ACCEPT });
  if (typeof api === 'string') return fail(`a ${length}-character URL: ${api}`);
  if (api.status !== 401) return refused(api.status, 'an API client without a session');
  if (short.signedInHeaders === undefined) {
    const text = `a ${length}-character URL gets the sign-in redirect and 401; not checked signed in`;
    return short.hasCredential ? skip(`${text}: the short URL was not reached either (see signed in)`) : ok(`${text} (no session)`);
  }
  const signed = await doctor.ask(url, { accept: BROWSER_ACCEPT, ...short.signedInHeaders });
  if (typeof signed === 'string') return fail(`a ${length}-character URL: ${signed}`);
  if (!isSuccess(signed.status)) return refused(signed.status, 'a signed-in browser');
  return ok(`a ${length}-character URL gets the sign-in redirect, 401 for an API client, and the app once signed in`);
}

const tooLong = (length: number, status: number, who: string): string =>
  `a ${length}-character URL from ${who} got ${status}, where the short one passed:`;

/** The proxy's own limit behind `status`, for the proxy in front only. */
function limitFix(status: number, doctor: Doctor): string {
  if (status === 414 || status === 431 || status === 400) {
    return `the proxy refuses a request line or headers that long. Fix: ${fixFor(doctor.proxy, {
      nginx: 'large_client_header_buffers 4 16k',
      Caddy: 'raise or remove max_header_size in the global servers options',
      Traefik: 'raise the entry point\'s transport limits',
    })}`;
  }
  if (status === 502) {
    return `the sign-in redirect (it carries the URL) or the check's headers overflow a buffer of the proxy. Fix: ${fixFor(doctor.proxy, {
      nginx: 'proxy_buffer_size 32k, proxy_buffers 4 32k and proxy_busy_buffers_size 32k where nginx asks Gatehouse for the redirect (@gatehouse_refused)',
      Caddy: 'Caddy\'s log says why the answer could not be passed on',
    })}`;
  }
  return 'the proxy, the gate or the app treats long URLs differently. Fix: the proxy\'s error log says which';
}
