import { randomBytes } from 'node:crypto';
import { percentEncodeHeaderValue } from '../http/header-value.js';
import { isPlainObject } from '../validate/check.js';
import { API_ACCEPT, isForwardAllowed, isGatehouseNotFound, isSuccess, notServedText, type Doctor } from './doctor-answers.js';
import { fixFor } from './doctor-proxy.js';
import { fail, ok, shown, skip, type Outcome, type Report } from './doctor-report.js';
import { credentialHeaders, type Credential } from './doctor-session.js';

const FORGED_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['remoteUser', 'Remote-User'],
  ['remoteLevel', 'Remote-Level'],
  ['remoteGroups', 'Remote-Groups'],
];
const URI_HEADERS = ['X-Original-URI', 'X-Forwarded-Uri'] as const;

function stringsAt(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : [];
}

/** probe, forged headers, jwt cookie, forged URI: what the app gets once the gate lets the credential through. */
export async function runProbeChecks(app: URL, probeUrl: URL, credential: Credential, doctor: Doctor, report: Report): Promise<void> {
  const place = shown(probeUrl.pathname);
  const marker = `doctor-forged-${randomBytes(6).toString('hex')}`;
  const probe = await askProbe(probeUrl, credential, marker, doctor);
  if (typeof probe === 'string') {
    report('probe', fail(probe));
    report('forged headers', skip('the probe path did not answer (see probe)'));
    report('jwt cookie', skip('the probe path did not answer (see probe)'));
    report('forged URI', await forgedUriOutcome(app, credential, undefined, doctor));
    return;
  }
  report('probe', ok(`${place} reaches Gatehouse's probe behind the gate (401 without a session)`));
  report('forged headers', forgedHeadersOutcome(probe, credential, marker, doctor));
  const jwtCookie = probe['jwtCookie'] === false
    ? ok('the app does not receive the jwt cookie')
    : fail(`the app receives the user's jwt cookie, a bearer token for the whole session. Fix: ${fixFor(doctor.proxy, {
      nginx: 'proxy_set_header Cookie $gatehouse_app_cookie; in the app\'s location (gatehouse/protect.conf)',
      Caddy: 'the header_up Cookie lines of gatehouse_require in the app\'s reverse_proxy',
      Traefik: 'Traefik cannot remove one cookie (deploy/traefik says so): use nginx or Caddy for this app',
    })}`);
  report('jwt cookie', jwtCookie);
  const reachedApp = (key: string): boolean => stringsAt(probe, key).some((value) => value.includes(marker));
  report('forged URI', await forgedUriOutcome(
    app,
    credential,
    { original: reachedApp('xOriginalUri'), forwarded: reachedApp('xForwardedUri') },
    doctor,
  ));
}

/** What the app got through the probe path with forged headers (marked `marker`), or why the probe did not answer. */
async function askProbe(
  probeUrl: URL, credential: Credential, marker: string, doctor: Doctor,
): Promise<Record<string, unknown> | string> {
  const place = shown(probeUrl.pathname);
  const anonymous = await doctor.ask(probeUrl, { accept: API_ACCEPT });
  if (typeof anonymous === 'string') return anonymous;
  if (anonymous.status === 200) {
    return `the probe path ${place} answers without a session: it is not behind the gate, so it cannot show what the app gets. Fix: route it through the same forward auth, header and cookie rules as the app (docs/doctor.md)`;
  }
  // The check fails here as at the app: the cause is named there.
  if (anonymous.status >= 500) return `the probe path ${place} answered ${anonymous.status} without a session, as the app does (see gate). Fix: see gate`;
  if (isGatehouseNotFound(anonymous)) return `the probe path ${place} got the check's own 404 without a session, as the app does (see api). Fix: see api`;
  const given = credentialHeaders(credential);
  // With a machine token a made-up jwt cookie goes along: the token alone is judged, the cookie filter still shows.
  const jwt = credential.kind === 'session' ? credential.token : 'gatehouse-doctor-not-a-session';
  const headers: Record<string, string> = {
    accept: API_ACCEPT,
    ...given,
    cookie: `jwt=${jwt}; gatehouse-doctor=1`,
    'x-original-uri': `/${marker}`,
    'x-forwarded-uri': `/${marker}`,
  };
  for (const [, name] of FORGED_HEADERS) {
    headers[name.toLowerCase()] = marker;
    headers[name.toLowerCase().replace('-', '_')] = marker;
  }
  const answer = await doctor.ask(probeUrl, headers);
  if (typeof answer === 'string') return answer;
  if (isGatehouseNotFound(answer)) return `past the gate, the probe path ${place} is sent to a path Gatehouse does not serve: ${notServedText(place)}`;
  if (answer.status !== 200 || !isPlainObject(answer.json) || answer.json['probe'] !== 'gatehouse') {
    return `${credential.kind === 'session' ? 'signed in' : 'with the machine token'}, the probe path ${place} answered ${answer.status}, not Gatehouse's probe. Fix: route ${place} like the app but to Gatehouse's api/auth/probe (docs/doctor.md)`;
  }
  return answer.json;
}

function forgedHeadersOutcome(probe: Record<string, unknown>, credential: Credential, marker: string, doctor: Doctor): Outcome {
  const forgedNames: string[] = [];
  const problems: string[] = [];
  // A machine token's account is not known here: the gate's values must then be one each, and a level.
  const expected: Readonly<Record<string, string | undefined>> = credential.kind === 'session'
    ? { remoteUser: percentEncodeHeaderValue(credential.username), remoteLevel: credential.level }
    : { remoteUser: undefined, remoteLevel: undefined };
  for (const [key, name] of FORGED_HEADERS) {
    const values = stringsAt(probe, key);
    if (values.some((value) => value.includes(marker))) forgedNames.push(name);
    if (!(key in expected)) continue;
    const wanted = expected[key];
    const own = values.filter((value) => !value.includes(marker));
    if (own.length === 0 || own[0] === '') problems.push(`the app receives no ${name} from the gate`);
    else if (own.length > 1 || (wanted !== undefined && own[0] !== wanted)) {
      problems.push(`the app receives ${name} ${shown(own.join(', '), 80)}${wanted === undefined ? '' : `, not ${shown(wanted, 64)}`}`);
    } else if (key === 'remoteLevel' && own[0] !== 'ADMINISTRATOR' && own[0] !== 'USER') {
      problems.push(`the app receives ${name} ${shown(own[0] ?? '', 64)}, not a level`);
    }
  }
  if (forgedNames.length > 0) {
    return fail(`${forgedNames.join(', ')} sent by the client reached the app (spelled with - or _), so anyone can claim to be anyone. Fix: remove them from the client's request before forward auth (${fixFor(doctor.proxy, {
      nginx: 'proxy_set_header Remote-User $gatehouse_user and the same for each header, in the app\'s location (gatehouse/check.conf)',
      Caddy: 'request_header -Remote-* and -Remote_* first in the route, before forward_auth',
      Traefik: 'the gatehouse-strip middleware before the check',
    })})`);
  }
  if (problems.length > 0) {
    return fail(`${problems.join('; ')}. Fix: copy them from the gate's answer (${fixFor(doctor.proxy, {
      nginx: 'auth_request_set from $upstream_http_remote_user and proxy_set_header',
      Caddy: 'copy_headers Remote-User Remote-Level Remote-Groups in forward_auth',
      Traefik: 'authResponseHeaders: [Remote-User, Remote-Level, Remote-Groups]',
    })})`);
  }
  return ok(`the app gets Remote-User and Remote-Level from the gate only; forged ones sent by the client are dropped`);
}

/**
 * forged URI: a session token in the client's own X-Original-URI or X-Forwarded-Uri opens nothing (the
 * forward endpoint reads `?token=` from them), and neither reaches the app as sent. When one opens, the
 * answer tells where it got through: Gatehouse's own 200 (with Remote-User) comes back only from the
 * location that asks Gatehouse for the sign-in redirect (nginx's error_page location); through the
 * check, the app answers. `seenByApp`: whether the forged ones sent to the probe reached it.
 */
async function forgedUriOutcome(
  app: URL, credential: Credential, seenByApp: { original: boolean; forwarded: boolean } | undefined, doctor: Doctor,
): Promise<Outcome> {
  const control = await doctor.ask(app, { accept: API_ACCEPT });
  if (typeof control === 'string') return fail(control);
  if (isSuccess(control.status)) return skip('not checked: the app answers without any session (see api)');
  const byCheck: string[] = [];
  const byRedirect: string[] = [];
  if (credential.kind === 'session') {
    for (const header of URI_HEADERS) {
      const answer = await doctor.ask(app, { accept: API_ACCEPT, [header.toLowerCase()]: `/?token=${encodeURIComponent(credential.token)}` });
      if (typeof answer === 'string') return fail(answer);
      if (isSuccess(answer.status)) (isForwardAllowed(answer.headers) ? byRedirect : byCheck).push(header);
    }
  }
  if (byRedirect.length > 0) {
    const nginxLines = byRedirect.map((header) => header === 'X-Forwarded-Uri' ? 'proxy_set_header X-Forwarded-Uri $request_uri;' : 'proxy_set_header X-Original-URI "";');
    return fail(`a token in the client's own ${byRedirect.join(' and ')} opened the gate without a cookie, and the answer was Gatehouse's own 200, not the app's: the location that asks Gatehouse for the sign-in redirect passes the client's header on because it does not set its own. Fix: ${fixFor(doctor.proxy, {
      nginx: `${nginxLines.join(' ')} in the location the 401 goes to (error_page 401 = @gatehouse_refused)`,
      Caddy: 'request_header -X-Original-URI before forward_auth',
      Traefik: 'leave X-Original-URI and X-Forwarded-Uri out of authRequestHeaders',
    })}`);
  }
  if (byCheck.length > 0) {
    return fail(`a token in the client's own ${byCheck.join(' and ')} opened the gate without a cookie: the proxy passes it to the check. Fix: set the check's URI headers in the proxy (${fixFor(doctor.proxy, {
      nginx: 'proxy_set_header X-Original-URI $request_uri; proxy_set_header X-Forwarded-Uri ""; in the check location (auth_request\'s)',
      Caddy: 'request_header -X-Original-URI and request_header -X-Forwarded-Uri before forward_auth, which sets X-Forwarded-Uri itself',
      Traefik: 'leave X-Original-URI out of authRequestHeaders and keep trustForwardHeader: false',
    })})`);
  }
  const reached = [
    seenByApp?.original === true ? 'X-Original-URI' : '',
    seenByApp?.forwarded === true ? 'X-Forwarded-Uri' : '',
  ].filter((name) => name !== '');
  if (reached.length > 0) {
    return fail(`the client's own ${reached.join(' and ')} reached the app as sent. Fix: set or remove them on the way to the app (${fixFor(doctor.proxy, {
      nginx: 'proxy_set_header X-Original-URI ""; proxy_set_header X-Forwarded-Uri ""; in the app\'s location',
      Caddy: 'request_header -X-Original-URI and -X-Forwarded-Uri in the app\'s route',
      Traefik: 'customRequestHeaders X-Original-URI: "" in the gatehouse-strip middleware',
    })})`);
  }
  const appPart = seenByApp === undefined ? '' : ', and neither reaches the app as sent';
  if (credential.kind === 'token') {
    return skip(`not checked in full: a machine token is never read from a URL, so a token in the client's own X-Original-URI or X-Forwarded-Uri was not tried (sign in with a password and TOTP code to try it)${appPart}`);
  }
  return ok(`a token in the client's own X-Original-URI or X-Forwarded-Uri opens nothing${appPart}`);
}
