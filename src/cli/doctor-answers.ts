import type { IncomingHttpHeaders } from 'node:http';
import { isPlainObject } from '../validate/check.js';
import type { Exchange } from './doctor-http.js';
import type { ProxyKind } from './doctor-proxy.js';

export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
export const API_ACCEPT = 'application/json';

/** One request through the proxy; a string says why it could not be made. */
export type Ask = (
  url: URL, headers: Record<string, string>, extra?: { method?: string; body?: string },
) => Promise<Exchange | string>;

/** What every check is given: the way to ask, and the proxy the answers named (its fixes only). */
export interface Doctor {
  readonly ask: Ask;
  readonly proxy: ProxyKind;
}

export const isRedirect = (status: number): boolean =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
export const isSuccess = (status: number): boolean => status >= 200 && status < 300;

/** Gatehouse's refusal body: exactly `{code, message}`, both strings. */
export function refusalCode(answer: Exchange): string | undefined {
  const body = answer.json;
  if (!isPlainObject(body) || Object.keys(body).length !== 2) return undefined;
  return typeof body['code'] === 'string' && typeof body['message'] === 'string' ? body['code'] : undefined;
}

/** Gatehouse's own 404: no route at the path it was sent, which is how a --base-uri mismatch shows. */
export const isGatehouseNotFound = (answer: Exchange): boolean =>
  answer.status === 404 && refusalCode(answer) === 'NOT_FOUND';

/** The base-uri rule, for every place where Gatehouse answered its own 404 to a path the proxy sent it. */
export const BASE_URI_FIX = 'Fix: make them agree: with --base-uri BASE every path to Gatehouse begins with BASE (BASE/api/auth/forward, BASE/login, BASE/api/auth/), without it they are /api/auth/forward, /login and /api/auth/ (GATEHOUSE_BASE_URI)';

/** `place` reached Gatehouse, which serves nothing there: the proxy's paths and --base-uri disagree. */
export const notServedText = (place: string): string =>
  `Gatehouse answers its own 404 (nothing at this path) at ${place}: the paths the proxy sends it and its --base-uri disagree. ${BASE_URI_FIX}`;

/** Gatehouse's verify answer, which only it gives: 200 or 401 with `configs`. */
export const isGatehouseVerify = (answer: Exchange): boolean =>
  isPlainObject(answer.json) && isPlainObject(answer.json['configs']);

/** The forward endpoint's 200 itself, passed to the client: only Gatehouse's check answers with Remote-User. */
export const isForwardAllowed = (headers: IncomingHttpHeaders): boolean =>
  typeof headers['remote-user'] === 'string' && typeof headers['remote-level'] === 'string';

/** A WebSocket opening handshake (RFC 6455 section 4.1), without a session: only whether a 101 comes matters. */
export function upgradeHeaders(key: string): Record<string, string> {
  return { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': key };
}
