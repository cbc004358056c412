import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as errors from '../../src/errors.js';
import { toPublicError } from '../../src/http/errors.js';

// One instance of every concrete error class; a class missing here fails the first test.
const SAMPLES: Readonly<Record<string, () => errors.GatehouseError>> = {
  ValidationFailed: () => new errors.ValidationFailed([{ path: 'username', message: 'is required' }]),
  InvalidJson: () => new errors.InvalidJson(),
  BodyTooLarge: () => new errors.BodyTooLarge(1024),
  UnsupportedMediaType: () => new errors.UnsupportedMediaType(),
  InvalidPathParameter: () => new errors.InvalidPathParameter(),
  AuthRequired: () => new errors.AuthRequired(),
  InvalidCredentials: () => new errors.InvalidCredentials(),
  NotAdministrator: () => new errors.NotAdministrator(),
  NotGatehouseOrigin: () => new errors.NotGatehouseOrigin('https://auth.example.org/gatehouse/account'),
  UnknownLevel: () => new errors.UnknownLevel(),
  NotInGroup: () => new errors.NotInGroup(),
  InvalidGroupFilter: () => new errors.InvalidGroupFilter(),
  TooManyMachineTokens: () => new errors.TooManyMachineTokens(),
  MachineTokenNotFound: () => new errors.MachineTokenNotFound(),
  PasskeyRefused: () => new errors.PasskeyRefused('signature'),
  PasskeyInvalid: () => new errors.PasskeyInvalid('origin'),
  PasskeyNotFound: () => new errors.PasskeyNotFound(),
  TooManyPasskeys: () => new errors.TooManyPasskeys(),
  PasskeyTaken: () => new errors.PasskeyTaken(),
  PasskeysOff: () => new errors.PasskeysOff(),
  TooManyChallenges: () => new errors.TooManyChallenges(120),
  UsernameLookAlike: () => new errors.UsernameLookAlike(),
  RouteNotFound: () => new errors.RouteNotFound(),
  MethodNotAllowed: () => new errors.MethodNotAllowed(['GET']),
  UsernameTaken: () => new errors.UsernameTaken(),
  UserNotFound: () => new errors.UserNotFound(),
  LastAdministrator: () => new errors.LastAdministrator(),
  TooManyAttempts: () => new errors.TooManyAttempts(30),
  ServerBusy: () => new errors.ServerBusy(),
  StoreWriteFailed: () => new errors.StoreWriteFailed({ cause: new Error('EIO') }),
  StoreOutcomeUnknown: () => new errors.StoreOutcomeUnknown({ cause: new Error('EIO') }),
  StoreClosed: () => new errors.StoreClosed(),
  ServiceStopping: () => new errors.ServiceStopping(),
  ClientAborted: () => new errors.ClientAborted(),
  ProxyRequired: () => new errors.ProxyRequired(),
  HostNotAllowed: () => new errors.HostNotAllowed('stop the service, then run: gatehouse users add admin --level ADMINISTRATOR'),
  TokenInvalid: () => new errors.TokenInvalid('expired'),
  SecondFactorRequired: () => new errors.SecondFactorRequired(),
  InvalidSecondFactor: () => new errors.InvalidSecondFactor(),
  WrongPassword: () => new errors.WrongPassword(),
  WrongCode: () => new errors.WrongCode(),
  SecondFactorSessionRequired: () => new errors.SecondFactorSessionRequired(),
  CrossSiteRequest: () => new errors.CrossSiteRequest(),
  TotpAlreadyEnabled: () => new errors.TotpAlreadyEnabled(),
  TotpNotPending: () => new errors.TotpNotPending(),
  InvitationInvalid: () => new errors.InvitationInvalid('expired'),
  ResetLinkInvalid: () => new errors.ResetLinkInvalid('spent'),
  SessionNotFound: () => new errors.SessionNotFound(),
  InvitationNotFound: () => new errors.InvitationNotFound(),
  TooManyInvitations: () => new errors.TooManyInvitations(),
  TooManyResetLinks: () => new errors.TooManyResetLinks(),
  ClientNotFound: () => new errors.ClientNotFound(),
  TooManyClients: () => new errors.TooManyClients(),
  ClientNameTaken: () => new errors.ClientNameTaken(),
  PublicClientSecret: () => new errors.PublicClientSecret(),
  OAuthRefused: () => new errors.OAuthRefused('invalid_grant', 'The code is unknown, used or expired.'),
};

// The errors an operator must see: logged, with their stack.
const LOGGED = new Set(['StoreWriteFailed', 'StoreOutcomeUnknown']);

const hasFrames = (error: Error): boolean => error.stack?.includes('\n    at ') === true;

describe('error classes', () => {
  it('has a sample for every concrete error class', () => {
    const classes = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof errors.GatehouseError)
      .map(([name]) => name)
      .filter((name) => name !== 'Refusal');
    assert.deepEqual(classes.sort(), Object.keys(SAMPLES).sort());
  });

  for (const [name, make] of Object.entries(SAMPLES)) {
    if (LOGGED.has(name)) {
      it(`builds ${name} with a stack trace and has it logged`, () => {
        const error = make();
        assert.equal(error instanceof errors.Refusal, false);
        assert.ok(hasFrames(error), String(error.stack));
        assert.equal(toPublicError(error).isLogged, true);
      });
    } else {
      it(`builds ${name} as a refusal without a stack trace, never logged`, () => {
        const error = make();
        assert.ok(error instanceof errors.Refusal);
        assert.ok(error instanceof errors.GatehouseError);
        assert.equal(hasFrames(error), false, String(error.stack));
        assert.equal(error.stack, `${error.name}: ${error.message}`);
        assert.equal(toPublicError(error).isLogged, false);
        assert.equal(toPublicError(error).body.code, error.code, 'a refusal missing from the table would be answered INTERNAL_ERROR and never logged');
      });
    }
  }

  it('keeps the name, message, code and cause of a refusal', () => {
    const cause = new Error('inner');
    const error = new errors.TokenInvalid('expired');
    assert.equal(error.name, 'Error');
    assert.equal(error.code, 'AUTH_TOKEN_INVALID');
    assert.equal(error.message, 'Token refused: expired.');
    assert.equal(new errors.StoreWriteFailed({ cause }).cause, cause);
  });

  it('restores Error.stackTraceLimit after building a refusal, so other errors keep their stacks', () => {
    const before = Error.stackTraceLimit;
    Error.stackTraceLimit = 7;
    try {
      new errors.RouteNotFound();
      assert.equal(Error.stackTraceLimit, 7);
      assert.ok(hasFrames(new Error('after a refusal')));
      assert.ok(hasFrames(new errors.StoreWriteFailed()));
    } finally {
      Error.stackTraceLimit = before;
    }
  });
});
