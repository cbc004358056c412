import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthRequired, StoreWriteFailed, TokenInvalid } from '../../src/errors.js';
import { isExpectedError, toPublicError } from '../../src/http/errors.js';

describe('toPublicError', () => {
  it('gives a refused token 401, not 500, should a route ever let TokenInvalid through', () => {
    const answer = toPublicError(new TokenInvalid('expired'));
    assert.equal(answer.status, 401);
    assert.equal(answer.body.code, 'AUTH_TOKEN_INVALID');
    assert.equal(isExpectedError(new TokenInvalid('expired')), true);
  });

  it('maps AuthRequired to 401 and treats it as expected', () => {
    assert.equal(toPublicError(new AuthRequired()).status, 401);
    assert.equal(isExpectedError(new AuthRequired()), true);
  });

  it('never echoes an unknown error, and logs it as unexpected', () => {
    const answer = toPublicError(new Error('secret detail'));
    assert.equal(answer.status, 500);
    assert.equal(answer.body.code, 'INTERNAL_ERROR');
    assert.doesNotMatch(answer.body.message, /secret detail/);
    assert.equal(isExpectedError(new Error('x')), false);
  });

  it('answers a failed store write 503 but logs it (the operator must see it)', () => {
    const error = new StoreWriteFailed({ cause: new Error('EIO') });
    assert.equal(toPublicError(error).status, 503);
    assert.equal(isExpectedError(error), false);
  });
});
