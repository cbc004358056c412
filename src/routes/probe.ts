import type { IncomingMessage } from 'node:http';
import type { ProxyTrust } from '../http/client-address.js';
import type { OriginReader } from '../http/request-origin.js';
import { sendJson } from '../http/respond.js';
import type { RequestContext, Route } from './context.js';

// What the doctor needs to see, and no more: a header repeated more often than this, or a value
// longer, is cut (and says so) so the answer stays small whatever the request held.
const MAX_VALUES_PER_HEADER = 8;
const MAX_VALUE_LENGTH = 512;

type ReportedKey = 'remoteUser' | 'remoteLevel' | 'remoteGroups' | 'xOriginalUri' | 'xForwardedUri';
/** The headers reported (also spelled with `_`), by the key they are reported under. */
const REPORTED: ReadonlyMap<string, ReportedKey> = new Map([
  ['remote-user', 'remoteUser'],
  ['remote-level', 'remoteLevel'],
  ['remote-groups', 'remoteGroups'],
  ['x-original-uri', 'xOriginalUri'],
  ['x-forwarded-uri', 'xForwardedUri'],
]);

/**
 * `{base}/api/auth/probe`: what an app behind the proxy received, for `gatehouse doctor`. The
 * proxy routes a probe path through the same protections as the app (forward auth, header
 * stripping, cookie filters) to here, so the answer shows what got through: every Remote-User,
 * Remote-Level and Remote-Groups header as it arrived (also spelled with `_`, which some
 * frameworks read as the same header), every X-Original-URI and X-Forwarded-Uri with the query
 * values dropped (a `?token=` is a credential), and whether a `jwt` cookie arrived (never its
 * value). Beside the sign-in page (`{base}/api/auth/` is routed straight to Gatehouse) it also
 * shows the client address a sign-in there counts against, and whether X-Forwarded-For was read
 * for it. It also says --public-url (null without it) and how Gatehouse judged the origin it was
 * asked on (docs/contract/own-origin.md "Doctor"): what any browser learns from an app's account
 * link anyway. It judges nothing and needs no session.
 */
export function probeRoutes(proxyTrust: ProxyTrust, origins: OriginReader): Route[] {
  return [{
    method: 'GET',
    path: '/api/auth/probe',
    access: 'probe',
    body: 'none',
    handler: (ctx) => sendJson(ctx.res, 200, {
      ...probeReportOf(ctx.req),
      ...addressReportOf(ctx, proxyTrust),
      publicUrl: origins.homeUrl ?? null,
      originKind: origins.kindOf(ctx.req),
    }),
  }];
}

/**
 * The address Gatehouse settled on (the login throttle's), and where from: `absent` when no
 * X-Forwarded-For came, `ignored` when one came from a peer not in --trust-proxy (the address is
 * the peer's), `used` when it was read. The caller learns its own address as Gatehouse sees it,
 * or the proxy's when Gatehouse misreads it, which is what the doctor needs to name the fix.
 */
function addressReportOf(ctx: RequestContext, proxyTrust: ProxyTrust): object {
  const header = ctx.req.headers['x-forwarded-for'];
  // An empty header names no hop: the address is the peer's, as with none.
  const hasHop = typeof header === 'string' && header.split(',').some((hop) => hop.trim() !== '');
  const forwardedFor = !hasHop ? 'absent' : proxyTrust.isFromTrustedProxy(ctx.req) ? 'used' : 'ignored';
  return { clientAddress: ctx.address, forwardedFor };
}

function probeReportOf(req: IncomingMessage): object {
  const found: Record<ReportedKey, string[]> = {
    remoteUser: [],
    remoteLevel: [],
    remoteGroups: [],
    xOriginalUri: [],
    xForwardedUri: [],
  };
  let truncated = false;
  let jwtCookie = false;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase().replaceAll('_', '-');
    const value = raw[i + 1] ?? '';
    if (name === 'cookie') jwtCookie ||= hasJwtCookie(value);
    const key = REPORTED.get(name);
    if (key === undefined) continue;
    const values = found[key];
    if (values.length >= MAX_VALUES_PER_HEADER) {
      truncated = true;
      continue;
    }
    const shown = key === 'xOriginalUri' || key === 'xForwardedUri' ? withoutQueryValues(value) : value;
    if (shown.length > MAX_VALUE_LENGTH) truncated = true;
    values.push(shown.slice(0, MAX_VALUE_LENGTH));
  }
  return { probe: 'gatehouse', ...found, jwtCookie, truncated };
}

/**
 * True when a Cookie header holds a pair named `jwt` (any value, even empty; any spacing). Looser than
 * readCookie on purpose: it asks whether some app's parser (many trim all whitespace) could see one.
 */
function hasJwtCookie(header: string): boolean {
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals >= 0 && pair.slice(0, equals).trim() === 'jwt') return true;
  }
  return false;
}

/** The URI with every query value removed (`/p?a=&token=`): the names show what was there, no value can leak. */
function withoutQueryValues(uri: string): string {
  const queryStart = uri.indexOf('?');
  if (queryStart < 0) return uri;
  return `${uri.slice(0, queryStart)}?${uri.slice(queryStart + 1).replace(/=[^&;]*/g, '=').replaceAll(';', '&')}`;
}
