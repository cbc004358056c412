import { AuthRequired, SecondFactorRequired, InvalidGroupFilter, NotAdministrator, NotInGroup, ServiceStopping, UnknownLevel } from '../errors.js';
import { toPublicError } from '../http/errors.js';
import { percentEncodeHeaderValue } from '../http/header-value.js';
import { prepareAnswer, sendPrepared, sendRawJson, sendStatic, type PreparedAnswer } from '../http/respond.js';
import { ANY_METHOD } from '../http/router.js';
import type { StoredUser } from '../store/users.js';
import { isAdministrator } from '../validate/level.js';
import type { Route, RequestContext } from './context.js';
import type { ForbiddenPage } from './forbidden-page.js';
import type { GateDecision, GateService } from './gate-service.js';

export { MAX_RD_LENGTH } from './login-redirect.js';

interface ForwardRouteDeps {
  /** The gate's decision (gate-service.ts). */
  readonly gate: GateService;
  /** The 403 page for a browser (Accept: text/html); without it every 403 is JSON. */
  readonly forbiddenPage?: ForbiddenPage;
}

/**
 * `{base}/api/auth/forward`: the decision for a reverse proxy's auth subrequest (nginx
 * auth_request, Caddy forward_auth, Traefik forwardAuth), for every method, from the headers
 * alone. Answers only 200, 401, 403, 503 while stopping, and 302 to a login page when asked:
 * nginx turns any other status into a 500. The gate service decides; this writes the answer.
 */
export function forwardRoutes(deps: ForwardRouteDeps): Route[] {
  const { gate } = deps;
  const unauthenticated = toPublicError(new AuthRequired());
  const secondFactorRequired = toPublicError(new SecondFactorRequired());
  const refusals = { 'no-session': unauthenticated, 'second-factor': secondFactorRequired };
  // The answers that carry nothing of the request, prepared once.
  const prepared: Record<Exclude<GateDecision['kind'], 'allowed' | 'unauthenticated' | 'forbidden'>, PreparedAnswer> = {
    // ?basic=1: clients that only speak Basic answer a challenge (RFC 7617), never a redirect.
    'basic-challenge': prepareAnswer(401, unauthenticated.json, { 'www-authenticate': 'Basic realm="Gatehouse"' }),
    'unknown-level': toPublicError(new UnknownLevel()).prepared,
    'invalid-group-filter': toPublicError(new InvalidGroupFilter()).prepared,
    stopping: toPublicError(new ServiceStopping()).prepared,
  };
  const notAdministrator = toPublicError(new NotAdministrator()).prepared;
  const notInGroup = toPublicError(new NotInGroup()).prepared;
  // The 200 with its encoded headers hangs off the (immutable) stored user: one for a session, one for a token.
  const allowedAnswers = {
    session: new WeakMap<StoredUser, PreparedAnswer>(),
    token: new WeakMap<StoredUser, PreparedAnswer>(),
  };

  const allowedAnswer = (user: StoredUser, auth: 'session' | 'token'): PreparedAnswer => {
    // After `token`, the shared snippets keep Authorization from the app (a Basic token has no pattern to spot).
    let answer = allowedAnswers[auth].get(user);
    if (answer === undefined) {
      answer = prepareAnswer(200, '{}', {
        'remote-user': percentEncodeHeaderValue(user.username),
        'remote-level': isAdministrator(user.level) ? 'ADMINISTRATOR' : 'USER',
        // Group names are a-z 0-9 _ - only: safe in a header as they are.
        'remote-groups': (user.groups ?? []).join(','),
        'remote-auth': auth,
      });
      allowedAnswers[auth].set(user, answer);
    }
    return answer;
  };

  const handler = (ctx: RequestContext): void => {
    const { res } = ctx;
    const decision = gate.decide({ query: ctx.query, headers: ctx.req.headers, credentials: ctx.credentials });
    switch (decision.kind) {
      case 'allowed':
        sendPrepared(res, allowedAnswer(decision.user, decision.via));
        return;
      case 'unauthenticated': {
        const refusal = refusals[decision.refusal];
        if (decision.location === undefined) sendPrepared(res, refusal.prepared);
        else sendRawJson(res, 302, refusal.json, { location: decision.location });
        return;
      }
      case 'forbidden': {
        const { user, missing, page } = decision;
        if (page !== undefined && deps.forbiddenPage !== undefined) {
          const written = deps.forbiddenPage({ username: user.username, missing, switchAccountUrl: page.switchAccountUrl });
          sendStatic(res, 403, written.body, written.headers);
        } else {
          sendPrepared(res, missing.isAdministratorNeeded === true ? notAdministrator : notInGroup);
        }
        return;
      }
      default:
        sendPrepared(res, prepared[decision.kind]);
    }
  };

  // The body is never read, never 413: nginx may pass on the original request's Content-Length
  // without sending a byte. The body policy closes the connection when one was announced.
  return [{ method: ANY_METHOD, path: '/api/auth/forward', access: 'forward', body: 'ignored', handler }];
}
