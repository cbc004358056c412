import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkAuthenticateBody,
  checkNewUsername,
  checkPathUsername,
  checkUsername,
  MAX_PASSWORD_LENGTH,
  MAX_USERNAME_LENGTH,
  passwordChecker,
  registerBodyChecker,
  updateBodyChecker,
} from '../../src/validate/auth.js';
import type { Checked } from '../../src/validate/check.js';
import { checkAccessLevel, isAdministrator, roleOf } from '../../src/validate/level.js';

const EMOJI = '\u{1F600}';
const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/run/rtorrent.sock' };

function value<T>(result: Checked<T>): T {
  assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.problems));
  return result.value;
}

function paths(result: Checked<unknown>): string[] {
  assert.equal(result.ok, false, 'expected a refusal');
  return result.ok ? [] : result.problems.map((p) => p.path);
}

describe('usernames', () => {
  const accepted: ReadonlyArray<[string, string]> = [
    ['one character', 'a'],
    ['256 ASCII characters', 'a'.repeat(MAX_USERNAME_LENGTH)],
    ['256 emoji (512 UTF-16 units)', EMOJI.repeat(256)],
    ['leading and trailing spaces, kept as sent', '  bob  '],
    ['a decomposed accent, not normalized', 'Jose\u0301'],
    ['an email address', 'alice@example.com'],
    ['a slash (only path usernames refuse it)', 'a/b'],
    ['a dot', '.'],
    ['U+0080 (outside the refused range)', 'a\u0080'],
  ];
  for (const [name, input] of accepted) {
    it(`accepts ${name}`, () => assert.equal(value(checkUsername(input, 'username')), input));
  }

  const refused: ReadonlyArray<[string, unknown]> = [
    ['the empty string', ''],
    ['257 ASCII characters', 'a'.repeat(MAX_USERNAME_LENGTH + 1)],
    ['257 emoji', EMOJI.repeat(257)],
    ['U+0000', 'a\u0000b'],
    ['U+001F', 'a\u001fb'],
    ['U+007F', 'a\u007fb'],
    ['a tab', 'a\tb'],
    ['a newline', 'alice\n'],
    ['a carriage return', 'alice\r'],
    ['a number', 42],
    ['null', null],
    ['an array', ['alice']],
    ['an object', { username: 'alice' }],
  ];
  for (const [name, input] of refused) {
    it(`refuses ${name}`, () => assert.deepEqual(paths(checkUsername(input, 'username')), ['username']));
  }

  it('has the limits of the interface: 256 characters', () => {
    assert.equal(MAX_USERNAME_LENGTH, 256);
  });
});

describe('passwords', () => {
  const check = passwordChecker(1);

  const accepted: ReadonlyArray<[string, string]> = [
    ['one character', 'x'],
    ['1,024 characters', 'p'.repeat(MAX_PASSWORD_LENGTH)],
    ['1,024 emoji', EMOJI.repeat(MAX_PASSWORD_LENGTH)],
    ['U+0000', 'a\u0000b'],
    ['U+001F', 'a\u001fb'],
    ['U+007F', 'a\u007fb'],
    ['a tab and a newline', 'pass\tword\n'],
    ['only spaces', '   '],
  ];
  for (const [name, input] of accepted) {
    it(`accepts a password with ${name}`, () => assert.equal(value(check(input, 'password')), input));
  }

  const refused: ReadonlyArray<[string, unknown]> = [
    ['the empty string', ''],
    ['1,025 characters', 'p'.repeat(MAX_PASSWORD_LENGTH + 1)],
    ['1,025 emoji', EMOJI.repeat(MAX_PASSWORD_LENGTH + 1)],
    ['a number', 123456],
    ['null', null],
  ];
  for (const [name, input] of refused) {
    it(`refuses a password that is ${name}`, () => assert.deepEqual(paths(check(input, 'password')), ['password']));
  }

  it('applies a configured minimum length, counted in characters', () => {
    const check8 = passwordChecker(8);
    assert.deepEqual(paths(check8('1234567', 'password')), ['password']);
    assert.equal(value(check8('12345678', 'password')), '12345678');
    assert.equal(value(check8(EMOJI.repeat(8), 'password')), EMOJI.repeat(8));
    assert.deepEqual(paths(check8(EMOJI.repeat(7), 'password')), ['password']);
  });

  it('never lets a configured minimum below 1 accept the empty password', () => {
    assert.deepEqual(paths(passwordChecker(0)('', 'password')), ['password']);
  });
});

describe('access levels', () => {
  for (const level of [10, 5, 'ADMINISTRATOR', 'USER'] as const) {
    it(`accepts ${JSON.stringify(level)} and keeps its form`, () => assert.equal(value(checkAccessLevel(level, 'level')), level));
  }
  for (const level of [0, 1, 6, 11, '10', '5', 'admin', 'Administrator', 'user', null, true]) {
    it(`refuses ${JSON.stringify(level)}`, () => assert.deepEqual(paths(checkAccessLevel(level, 'level')), ['level']));
  }

  const roles: ReadonlyArray<[10 | 5 | 'ADMINISTRATOR' | 'USER', 'administrator' | 'user']> = [
    [10, 'administrator'],
    ['ADMINISTRATOR', 'administrator'],
    [5, 'user'],
    ['USER', 'user'],
  ];
  for (const [level, role] of roles) {
    it(`treats ${JSON.stringify(level)} as ${role}`, () => {
      assert.equal(roleOf(level), role);
      assert.equal(isAdministrator(level), role === 'administrator');
    });
  }
});

describe('checkAuthenticateBody', () => {
  it('accepts a username and password and strips unknown top-level keys', () => {
    const body = value(checkAuthenticateBody({ username: 'alice', password: 'pw', remember: true, level: 10 }, ''));
    assert.deepEqual(body, { username: 'alice', password: 'pw' });
  });

  it('builds an output free of a __proto__ key sent in the body', () => {
    const body = value(checkAuthenticateBody(JSON.parse('{"username":"a","password":"b","__proto__":{"level":10}}'), ''));
    assert.deepEqual(Object.keys(body), ['username', 'password']);
    assert.equal(Object.getPrototypeOf(body), Object.prototype);
    assert.equal((body as unknown as Record<string, unknown>)['level'], undefined);
  });

  it('accepts any password up to the absolute bound, whatever the configured minimum', () => {
    assert.deepEqual(value(checkAuthenticateBody({ username: 'a', password: 'x' }, '')), { username: 'a', password: 'x' });
  });

  const refused: ReadonlyArray<{ name: string; input: unknown; paths: string[] }> = [
    { name: 'an empty object', input: {}, paths: ['username', 'password'] },
    { name: 'a missing password', input: { username: 'a' }, paths: ['password'] },
    { name: 'an empty username', input: { username: '', password: 'x' }, paths: ['username'] },
    { name: 'an empty password', input: { username: 'a', password: '' }, paths: ['password'] },
    { name: 'a too-long password', input: { username: 'a', password: 'x'.repeat(1025) }, paths: ['password'] },
    { name: 'an array body', input: [], paths: [''] },
    { name: 'a null body', input: null, paths: [''] },
    { name: 'a string body', input: 'username=a&password=b', paths: [''] },
  ];
  for (const { name, input, paths: expected } of refused) {
    it(`refuses ${name}`, () => assert.deepEqual(paths(checkAuthenticateBody(input, '')), expected));
  }
});

describe('registerBodyChecker', () => {
  const check = registerBodyChecker(1);
  const complete = { username: 'alice', password: 'pw', client: CLIENT, level: 10 };

  it('accepts a complete body', () => {
    assert.deepEqual(value(check(complete, '')), complete);
  });

  it('strips unknown top-level keys', () => {
    assert.deepEqual(value(check({ ...complete, isAdmin: true, token: 'x' }, '')), complete);
  });

  it('rejects unknown keys inside client, with their path', () => {
    assert.deepEqual(paths(check({ ...complete, client: { ...CLIENT, extra: 1 } }, '')), ['client.extra']);
  });

  it('keeps the level in the form it was sent', () => {
    assert.equal(value(check({ ...complete, level: 'USER' }, '')).level, 'USER');
    assert.equal(value(check({ ...complete, level: 5 }, '')).level, 5);
  });

  it('applies the configured minimum password length', () => {
    const strict = registerBodyChecker(12);
    assert.deepEqual(paths(strict({ ...complete, password: 'short' }, '')), ['password']);
    assert.equal(value(strict({ ...complete, password: 'long enough pw' }, '')).password, 'long enough pw');
  });

  for (const key of ['username', 'password', 'client', 'level'] as const) {
    it(`refuses a body without ${key}`, () => {
      const input: Record<string, unknown> = { ...complete };
      delete input[key];
      assert.deepEqual(paths(check(input, '')), [key]);
    });
  }

  const refused: ReadonlyArray<{ name: string; input: unknown; paths: string[] }> = [
    { name: 'a bad level', input: { ...complete, level: 7 }, paths: ['level'] },
    { name: 'a username with a control character', input: { ...complete, username: 'a\u0000' }, paths: ['username'] },
    { name: 'a client that is not an object', input: { ...complete, client: 'rTorrent' }, paths: ['client'] },
    { name: 'several problems at once', input: { username: '', password: '', client: {}, level: 'root' }, paths: ['username', 'password', 'client.client', 'level'] },
  ];
  for (const { name, input, paths: expected } of refused) {
    it(`refuses ${name}`, () => assert.deepEqual(paths(check(input, '')), expected));
  }
});

describe('updateBodyChecker', () => {
  const check = updateBodyChecker(1);

  it('accepts an empty update', () => assert.deepEqual(value(check({}, '')), {}));

  const partial: ReadonlyArray<Record<string, unknown>> = [
    { username: 'renamed' },
    { password: 'new' },
    { level: 'USER' },
    { client: CLIENT },
    { username: 'b', password: 'c', level: 5, client: CLIENT },
  ];
  for (const input of partial) {
    it(`accepts only ${Object.keys(input).join(', ')}`, () => assert.deepEqual(value(check(input, '')), input));
  }

  it('strips unknown top-level keys', () => {
    assert.deepEqual(value(check({ level: 5, credentialsChangedAt: 0, passwordHash: 'x' }, '')), { level: 5 });
  });

  it('rejects unknown keys inside client', () => {
    assert.deepEqual(paths(check({ client: { ...CLIENT, host: 'x' } }, '')), ['client.host']);
  });

  it('checks each field that is present', () => {
    assert.deepEqual(paths(check({ username: '' }, '')), ['username']);
    assert.deepEqual(paths(check({ level: 'GOD' }, '')), ['level']);
    assert.deepEqual(paths(check({ password: '' }, '')), ['password']);
    assert.deepEqual(paths(check({ username: null }, '')), ['username']);
  });

  it('applies the configured minimum password length', () => {
    assert.deepEqual(paths(updateBodyChecker(4)({ password: 'abc' }, '')), ['password']);
  });

  it('refuses a body that is not an object', () => assert.deepEqual(paths(check([], '')), ['']));
});

describe('checkPathUsername', () => {
  for (const name of ['alice', 'a.b', '...', '.hidden', 'a%2Fb', 'a\\b', EMOJI, '/', 'a/b', '/alice', 'alice/', '../x', './x', 'x/..']) {
    it(`accepts ${JSON.stringify(name)}`, () => assert.equal(value(checkPathUsername(name, 'username')), name));
  }
  for (const name of ['.', '..', '', 'a\u0000', 'x'.repeat(257)]) {
    it(`refuses ${JSON.stringify(name)}`, () => assert.deepEqual(paths(checkPathUsername(name, 'username')), ['username']));
  }
});

describe('checkNewUsername', () => {
  for (const name of ['alice', 'a/b', '../x', '...', '.hidden', '/', 'a.', '. ']) {
    it(`accepts ${JSON.stringify(name)}`, () => assert.equal(value(checkNewUsername(name, 'username')), name));
  }
  for (const name of ['.', '..']) {
    it(`refuses ${JSON.stringify(name)} and says it is a dot segment`, () => {
      const result = checkNewUsername(name, 'username');
      assert.deepEqual(paths(result), ['username']);
      assert.match(result.ok ? '' : (result.problems[0]?.message ?? ''), /dot segment/);
    });
  }

  it('leaves checkUsername (stored users, logins, offline names) accepting "." and ".."', () => {
    assert.equal(value(checkUsername('.', 'username')), '.');
    assert.equal(value(checkUsername('..', 'username')), '..');
  });

  it('is the rule for the username of register and update bodies', () => {
    const body = { username: '..', password: 'pw', client: { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' }, level: 5 };
    assert.deepEqual(paths(registerBodyChecker(1)(body, '')), ['username']);
    assert.deepEqual(paths(updateBodyChecker(1)({ username: '.' }, '')), ['username']);
  });
});
