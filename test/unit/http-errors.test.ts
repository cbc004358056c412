import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthRequired, MethodNotAllowed, NotAdministrator, RouteNotFound, StoreWriteFailed, TokenInvalid, TooManyAttempts, TooManyChallenges, ValidationFailed } from '../../src/errors.js';
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
