import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AuthRequired, BodyTooLarge, MethodNotAllowed, NotAdministrator, OAuthRefused, RouteNotFound, StoreWriteFailed, TokenInvalid, TooManyAttempts,
  TooManyChallenges, ValidationFailed,
} from '../../src/errors.js';
import { toPublicError } from '../../src/http/errors.js';

describe('toPublicError', () => {
  it('gives a refused token 401, not 500, should a route ever let TokenInvalid through', () => {
    const answer = toPublicError(new TokenInvalid('expired'));
    assert.equal(answer.status, 401);
    assert.equal(answer.body.code, 'AUTH_TOKEN_INVALID');
    assert.equal(toPublicError(new TokenInvalid('expired')).isLogged, false);
  });

  it('maps AuthRequired to 401 and treats it as expected', () => {
    assert.equal(toPublicError(new AuthRequired()).status, 401);
    assert.equal(toPublicError(new AuthRequired()).isLogged, false);
  });

  it('never echoes an unknown error, and logs it as unexpected', () => {
    const answer = toPublicError(new Error('secret detail'));
    assert.equal(answer.status, 500);
    assert.equal(answer.body.code, 'INTERNAL_ERROR');
    assert.doesNotMatch(answer.body.message, /secret detail/);
    assert.equal(toPublicError(new Error('x')).isLogged, true);
  });

  it('answers a failed store write 503 but logs it (the operator must see it)', () => {
    const error = new StoreWriteFailed({ cause: new Error('EIO') });
    assert.equal(toPublicError(error).status, 503);
    assert.equal(toPublicError(error).isLogged, true);
  });
});

describe('toPublicError, once per answer', () => {
  it('carries the body as JSON, and the same answer object for every error of a fixed kind', () => {
    for (const make of [() => new AuthRequired(), () => new NotAdministrator(), () => new RouteNotFound(), () => new StoreWriteFailed()]) {
      const first = toPublicError(make());
      assert.equal(first.json, JSON.stringify(first.body));
      assert.equal(toPublicError(make()), first, `${first.body.code} was built again`);
    }
  });

  it('builds the answer of an error whose message varies from that message', () => {
    const a = toPublicError(new ValidationFailed([{ path: 'a', message: 'is required' }]));
    const b = toPublicError(new ValidationFailed([{ path: 'b', message: 'is required' }]));
    assert.deepEqual(JSON.parse(a.json), a.body);
    assert.equal(a.body.message, 'a: is required');
    assert.equal(b.body.message, 'b: is required');
  });

  it('builds the headers of each error that has its own (Allow, Retry-After)', () => {
    assert.equal(toPublicError(new MethodNotAllowed(['GET'])).headers['allow'], 'GET');
    assert.equal(toPublicError(new MethodNotAllowed(['GET', 'PATCH'])).headers['allow'], 'GET, PATCH');
    assert.equal(toPublicError(new TooManyAttempts(30)).headers['retry-after'], '30');
    assert.equal(toPublicError(new TooManyAttempts(5)).headers['retry-after'], '5');
    const challenges = toPublicError(new TooManyChallenges(240));
    assert.deepEqual([challenges.status, challenges.body.code, challenges.headers['retry-after']], [503, 'TOO_MANY_CHALLENGES', '240']);
  });

  it('says whether the operator must see the error (logged with its stack)', () => {
    assert.equal(toPublicError(new AuthRequired()).isLogged, false);
    assert.equal(toPublicError(new StoreWriteFailed()).isLogged, true);
    assert.equal(toPublicError(new Error('bug')).isLogged, true);
  });
});

describe('toPublicError in the OAuth form (the OpenID Connect endpoints an app calls)', () => {
  it('answers an OAuth refusal as RFC 6749 section 5.2 does: 400, {error, error_description}, never cached', () => {
    const answer = toPublicError(new OAuthRefused('invalid_grant', 'The code is unknown, used or expired.'), 'oauth');
    assert.equal(answer.status, 400);
    assert.deepEqual(JSON.parse(answer.json), { error: 'invalid_grant', error_description: 'The code is unknown, used or expired.' });
    assert.deepEqual(answer.headers, { 'cache-control': 'no-store', pragma: 'no-cache' });
    assert.equal(answer.prepared.headers['pragma'], 'no-cache');
    assert.equal(answer.isLogged, false);
  });

  it('answers invalid_client 401 with a Basic challenge', () => {
    const answer = toPublicError(new OAuthRefused('invalid_client', 'The client is unknown or its secret is wrong.'), 'oauth');
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['www-authenticate'], 'Basic realm="Gatehouse", charset="UTF-8"');
    assert.equal(answer.headers['cache-control'], 'no-store');
  });

  it('answers the throttle 429 temporarily_unavailable with Retry-After', () => {
    const answer = toPublicError(new TooManyAttempts(30), 'oauth');
    assert.equal(answer.status, 429);
    assert.equal((JSON.parse(answer.json) as { error: string }).error, 'temporarily_unavailable');
    assert.equal(answer.headers['retry-after'], '30');
    assert.equal(answer.headers['pragma'], 'no-cache');
  });

  it('answers any other error as on every route, and an OAuth refusal elsewhere in Gatehouse\'s form', () => {
    assert.equal(toPublicError(new BodyTooLarge(16), 'oauth'), toPublicError(new BodyTooLarge(16)));
    assert.equal(toPublicError(new AuthRequired(), 'oauth'), toPublicError(new AuthRequired()));
    assert.equal(toPublicError(new Error('secret detail'), 'oauth').status, 500);
    const elsewhere = toPublicError(new OAuthRefused('invalid_request', 'x'));
    assert.deepEqual([elsewhere.status, elsewhere.body.code], [400, 'OAUTH_INVALID_REQUEST']);
    assert.equal(toPublicError(new TooManyAttempts(5)).body.code, 'TOO_MANY_ATTEMPTS');
  });
});
