// Invitations and reset links (docs/contract/links-and-sessions.md "Invitations", "Reset links") over real HTTP:
// administrators make, list and withdraw them; a link's secret works once, even under parallel use;
// expired, used, withdrawn and unknown secrets get 401 with one message each, throttled like sign-ins.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeBase32 } from '../../src/totp/base32.js';
import { createTokenCodec } from '../../src/auth/jwt.js';
import { totpCode } from '../../src/totp/codes.js';
import { InvitationInvalid, ResetLinkInvalid } from '../../src/errors.js';
import { MAX_OPEN_LINKS } from '../../src/invitations/link-file.js';
import { BUILT_SCRIPTS } from '../../src/pages/built-scripts.js';
import { claimsOf, createUser, login, startPopulatedServer, uniqueName, verify, type TestUser } from '../helpers/api.js';
import { addPasskey, HEADERS, newAuthenticator, signIn as passkeySignIn } from '../helpers/passkeys.js';
import { startTestServer, TEST_SECRET, type TestResponse, type TestServer } from '../helpers/server.js';

const DAY = 86_400;
const codeOf = (response: TestResponse): unknown => (response.json as { code?: unknown } | undefined)?.code;
const messageOf = (response: TestResponse): unknown => (response.json as { message?: unknown } | undefined)?.message;

function post(server: TestServer, path: string, body: unknown, token?: string, headers?: Record<string, string>): Promise<TestResponse> {
  return server.request({ method: 'POST', path, body, ...(token === undefined ? {} : { token }), ...(headers === undefined ? {} : { headers }) });
}

interface Made {
  id: string;
  url: string;
  expiresAt: number;
  secret: string;
}

async function invite(server: TestServer, token: string, body: Record<string, unknown> = { level: 'USER' }): Promise<Made> {
  const response = await post(server, '/api/auth/invites', body, token);
  assert.equal(response.status, 200, response.text);
  const made = response.json as Omit<Made, 'secret'>;
  assert.deepEqual(Object.keys(made).sort(), ['expiresAt', 'id', 'url']);
  const secret = /#([A-Za-z0-9_-]{43})$/.exec(made.url)?.[1];
  assert.ok(secret !== undefined, made.url);
  return { ...made, secret };
}

function assertLinkRefused(response: TestResponse, code: string, message: string, what: string): void {
  assert.equal(response.status, 401, `${what}: ${response.text}`);
  assert.deepEqual(response.json, { code, message }, what);
}

describe('invitations', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    // Every request comes from 127.0.0.1: the tests here guess wrong more often than the throttle
    // lets one client, and join in parallel more often than the hash queue lets one client wait.
    ({ server, root } = await startPopulatedServer({
      GATEHOUSE_THROTTLE_ADDRESS: '1000', GATEHOUSE_THROTTLE_USER: '1000', GATEHOUSE_HASH_QUEUE_PER_CLIENT: '64', GATEHOUSE_HASH_QUEUE_PER_NETWORK: '64',
    }));
  });
  after(() => server.close());

  it('makes a one-time link with the secret in its fragment, stored only as a digest, good for 7 days by default', async () => {
    const made = await invite(server, root.token);
    assert.match(made.url, /^http:\/\/127\.0\.0\.1:\d+\/gatehouse\/join#[A-Za-z0-9_-]{43}$/);
    assert.equal(made.expiresAt, (Math.floor(server.clock.now() / 1000) + 7 * DAY) * 1000);
    assert.doesNotMatch(await readFile(join(server.dataDir, 'invitations.json'), 'utf8'), new RegExp(made.secret));
    const listed = await server.request({ path: '/api/auth/invites', token: root.token });
    const entry = (listed.json as Array<Record<string, unknown>>).find((item) => item['id'] === made.id);
    assert.deepEqual(entry, {
      id: made.id, kind: 'invitation', username: null, level: 'USER', groups: [], createdAt: Math.floor(server.clock.now() / 1000) * 1000,
      expiresAt: made.expiresAt, createdBy: root.username,
    });
  });

  it('joins with a fixed name: the account is made with its level and groups, signed in, the link spent', async () => {
    const name = uniqueName('invited');
    const made = await invite(server, root.token, { username: name, level: 'USER', groups: ['media', 'family'], days: 2 });
    const checked = await post(server, '/api/auth/join/check', { secret: made.secret });
    assert.equal(checked.status, 200, checked.text);
    assert.deepEqual(checked.json, { username: name, level: 'USER', expiresAt: made.expiresAt });
    const joined = await post(server, '/api/auth/join', { secret: made.secret, password: 'my-own-password' });
    assert.equal(joined.status, 200, joined.text);
    assert.deepEqual(joined.json, { success: true, username: name, level: 'USER' });
    assert.ok(joined.cookieToken !== undefined);
    assert.equal((await verify(server, joined.cookieToken)).status, 200);
    const account = await server.request({ path: '/api/auth/account', token: joined.cookieToken });
    assert.deepEqual((account.json as { groups: unknown }).groups, ['media', 'family']);
    assert.equal((await login(server, name, 'my-own-password')).status, 200);
    const sessions = await server.request({ path: '/api/auth/account/sessions', token: joined.cookieToken });
    assert.equal((sessions.json as unknown[]).length, 2, 'the join and the sign-in are sessions');
    const spent = new InvitationInvalid('spent').message;
    assertLinkRefused(await post(server, '/api/auth/join', { secret: made.secret, password: 'again-password' }), 'INVITATION_INVALID', spent, 'join again');
    assertLinkRefused(await post(server, '/api/auth/join/check', { secret: made.secret }), 'INVITATION_INVALID', spent, 'check again');
    const listed = await server.request({ path: '/api/auth/invites', token: root.token });
    assert.ok(!(listed.json as Array<{ id: string }>).some((item) => item.id === made.id));
  });

  it('joins with a chosen name when the invitation fixes none; a taken name leaves the link open', async () => {
    const made = await invite(server, root.token, { level: 10 });
    const missing = await post(server, '/api/auth/join', { secret: made.secret, password: 'pw-1234567890' });
    assert.equal(missing.status, 400, missing.text);
    const taken = await post(server, '/api/auth/join', { secret: made.secret, username: root.username, password: 'pw-1234567890' });
    assert.equal(taken.status, 500);
    assert.equal(codeOf(taken), 'USERNAME_TAKEN');
    const name = uniqueName('chosen');
    const joined = await post(server, '/api/auth/join', { secret: made.secret, username: name, password: 'pw-1234567890' });
    assert.equal(joined.status, 200, joined.text);
    assert.deepEqual(joined.json, { success: true, username: name, level: 10 });
  });

  it('refuses a different name than the one the invitation fixes', async () => {
    const made = await invite(server, root.token, { username: uniqueName('fixed'), level: 'USER' });
    const response = await post(server, '/api/auth/join', { secret: made.secret, username: uniqueName('other'), password: 'pw-1234567890' });
    assert.equal(response.status, 400, response.text);
    assert.equal((await post(server, '/api/auth/join/check', { secret: made.secret })).status, 200, 'the link is still open');
  });

  it('lets exactly one of many parallel joins use a link', async () => {
    const made = await invite(server, root.token);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, index) =>
      post(server, '/api/auth/join', { secret: made.secret, username: uniqueName(`racer${index}`), password: 'pw-1234567890' })));
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, ...Array(11).fill(401)]);
    for (const answer of answers.filter((item) => item.status === 401)) {
      assert.equal(messageOf(answer), new InvitationInvalid('spent').message);
    }
  });

  it('says expired, withdrawn and unknown apart, each a 401 INVITATION_INVALID', async () => {
    const expiring = await invite(server, root.token, { level: 'USER', days: 1 });
    const withdrawn = await invite(server, root.token);
    const out = await server.request({ method: 'DELETE', path: `/api/auth/invites/${withdrawn.id}`, token: root.token });
    assert.equal(out.status, 200, out.text);
    const again = await server.request({ method: 'DELETE', path: `/api/auth/invites/${withdrawn.id}`, token: root.token });
    assert.equal(again.status, 404);
    assert.equal(codeOf(again), 'INVITATION_NOT_FOUND');
    server.clock.advanceSeconds(DAY);
    const cases: ReadonlyArray<[string, string, 'expired' | 'withdrawn' | 'unknown']> = [
      ['expired', expiring.secret, 'expired'],
      ['withdrawn', withdrawn.secret, 'withdrawn'],
      ['unknown', randomBytes(32).toString('base64url'), 'unknown'],
      ['malformed', 'not a secret at all', 'unknown'],
      ['cut short', withdrawn.secret.slice(0, 20), 'unknown'],
    ];
    for (const [what, secret, problem] of cases) {
      const message = new InvitationInvalid(problem).message;
      assertLinkRefused(await post(server, '/api/auth/join/check', { secret }), 'INVITATION_INVALID', message, `${what} (check)`);
      assertLinkRefused(await post(server, '/api/auth/join', { secret, username: uniqueName('late'), password: 'pw-1234567890' }), 'INVITATION_INVALID', message, `${what} (join)`);
    }
    const messages = new Set(['expired', 'spent', 'withdrawn', 'unknown'].map((problem) => new InvitationInvalid(problem as 'spent').message));
    assert.equal(messages.size, 4, 'one message each');
  });

  it('answers bad bodies with 400, never a 500', async () => {
    for (const body of [{}, { level: 'KING' }, { level: 'USER', days: 0 }, { level: 'USER', days: 31 }, { level: 'USER', days: 1.5 },
      { level: 'USER', groups: ['Bad Name'] }, { level: 'USER', username: '..' }, { level: 'USER', username: 'a\u0000b' }]) {
      const response = await post(server, '/api/auth/invites', body, root.token);
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
    }
    for (const body of [{}, { secret: 5 }, { secret: 'x'.repeat(257) }, { secret: 'x', password: '' }, [], 'text']) {
      const response = await post(server, '/api/auth/join', body);
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
    }
    const taken = await post(server, '/api/auth/invites', { level: 'USER', username: root.username }, root.token);
    assert.equal(taken.status, 500);
    assert.equal(codeOf(taken), 'USERNAME_TAKEN');
  });

  it('lets only administrators make, list and withdraw invitations, with a session cookie from this site', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await post(server, '/api/auth/invites', { level: 'USER' }, user.token)).status, 403);
    assert.equal((await post(server, '/api/auth/invites', { level: 'USER' })).status, 401);
    assert.equal((await post(server, `/api/auth/invites?token=${root.token}`, { level: 'USER' })).status, 401);
    assert.equal((await post(server, '/api/auth/invites', { level: 'USER' }, root.token, { 'sec-fetch-site': 'cross-site' })).status, 403);
    assert.equal((await server.request({ path: '/api/auth/invites', token: user.token })).status, 403);
    const made = await invite(server, root.token);
    assert.equal((await server.request({ method: 'DELETE', path: `/api/auth/invites/${made.id}`, token: user.token })).status, 403);
    assert.equal((await post(server, '/api/auth/join/check', { secret: made.secret })).status, 200);
  });

  it('refuses a cross-site join', async () => {
    const made = await invite(server, root.token);
    const response = await post(server, '/api/auth/join', { secret: made.secret, username: uniqueName('x'), password: 'pw-1234567890' }, undefined, { 'sec-fetch-site': 'cross-site' });
    assert.equal(response.status, 403);
    assert.equal((await post(server, '/api/auth/join/check', { secret: made.secret })).status, 200);
  });

  it('serves the join and reset pages on the shared shell with its CSP', async () => {
    for (const path of ['/gatehouse/join', '/gatehouse/reset']) {
      const page = await server.request({ path, headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'sha256-/);
      assert.match(page.text, /<main>/);
    }
  });

  it('runs on the join and reset pages the scripts built from invitations/browser/, allowed by their build-time hashes', async () => {
    for (const [path, built] of [['/gatehouse/join', BUILT_SCRIPTS['invitations/join']], ['/gatehouse/reset', BUILT_SCRIPTS['invitations/reset']]] as const) {
      const page = await server.request({ path, headers: { accept: 'text/html' } });
      assert.deepEqual([...page.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]), [built.code], path);
      assert.match(String(page.headers['content-security-policy']), new RegExp(`; script-src '${built.hash.replace(/[+/]/g, '\\$&')}'; `), path);
    }
    const join = await server.request({ path: '/gatehouse/join', headers: { accept: 'text/html' } });
    assert.match(join.text, /<script type="application\/json" id="page-data">\{"passkeysOffered":true\}<\/script>/);
  });
});

describe('invitation limits and guessing', () => {
  it(`holds at most ${MAX_OPEN_LINKS} open invitations: 409 TOO_MANY_INVITATIONS beyond, room again after a withdrawal`, async () => {
    const { server, root } = await startPopulatedServer();
    try {
      let last: Made | undefined;
      for (let index = 0; index < MAX_OPEN_LINKS; index++) last = await invite(server, root.token);
      const beyond = await post(server, '/api/auth/invites', { level: 'USER' }, root.token);
      assert.equal(beyond.status, 409);
      assert.equal(codeOf(beyond), 'TOO_MANY_INVITATIONS');
      await server.request({ method: 'DELETE', path: `/api/auth/invites/${last?.id ?? ''}`, token: root.token });
      await invite(server, root.token);
    } finally {
      await server.close();
    }
  });

  it('throttles guessed secrets like failed sign-ins: 429 with Retry-After, even for the right secret then', async () => {
    const { server, root } = await startPopulatedServer({ GATEHOUSE_THROTTLE_ADDRESS: '5' });
    try {
      const made = await invite(server, root.token);
      for (let attempt = 0; attempt < 5; attempt++) {
        const guess = await post(server, '/api/auth/join/check', { secret: randomBytes(32).toString('base64url') });
        assert.equal(guess.status, 401);
      }
      const throttled = await post(server, '/api/auth/join', { secret: made.secret, username: uniqueName('late'), password: 'pw-1234567890' });
      assert.equal(throttled.status, 429);
      assert.ok(Number(throttled.headers['retry-after']) > 0);
      assert.equal((await post(server, '/api/auth/reset', { secret: 'x', password: 'pw-1234567890' })).status, 429);
    } finally {
      await server.close();
    }
  });

  it('prints links under --public-url when it is set', async () => {
    const server = await startTestServer({ GATEHOUSE_PUBLIC_URL: 'https://auth.example.org/gate' });
    try {
      const admin = await createUser(server, undefined, { level: 10 });
      const made = await invite(server, admin.token);
      assert.match(made.url, /^https:\/\/auth\.example\.org\/gate\/gatehouse\/join#[A-Za-z0-9_-]{43}$/);
    } finally {
      await server.close();
    }
  });
});

describe('reset links', () => {
  let server: TestServer;
  let root: TestUser;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
  });
  after(() => server.close());

  const resetLink = async (username: string, token = root.token): Promise<Made> => {
    const response = await post(server, `/api/auth/users/${encodeURIComponent(username)}/reset-link`, {}, token);
    assert.equal(response.status, 200, response.text);
    const made = response.json as { id: string; url: string; expiresAt: number };
    assert.deepEqual(Object.keys(made).sort(), ['expiresAt', 'id', 'url']);
    const secret = /\/gatehouse\/reset#([A-Za-z0-9_-]{43})$/.exec(made.url)?.[1];
    assert.ok(secret !== undefined, made.url);
    return { ...made, secret };
  };

  it('sets a new password once: every session of the account ends, it does not sign in, the second factor stays', async () => {
    const user = await createUser(server, root.token);
    // TOTP on the account: the reset must leave it.
    const begun = await post(server, '/api/auth/account/totp', { password: user.password }, user.token);
    const seed = decodeBase32((begun.json as { secret: string }).secret);
    assert.ok(seed !== undefined);
    const confirmed = await post(server, '/api/auth/account/totp/confirm', { code: totpCode(seed, server.clock.now()) }, user.token);
    assert.equal(confirmed.status, 200, confirmed.text);
    const session = confirmed.cookieToken ?? '';
    const made = await resetLink(user.username);
    assert.equal(made.expiresAt, (Math.floor(server.clock.now() / 1000) + DAY) * 1000);
    assert.equal((await verify(server, session)).status, 200, 'making the link ends nothing yet');
    const checked = await post(server, '/api/auth/reset/check', { secret: made.secret });
    assert.deepEqual(checked.json, { username: user.username, expiresAt: made.expiresAt });
    const reset = await post(server, '/api/auth/reset', { secret: made.secret, password: 'brand-new-password' });
    assert.equal(reset.status, 200, reset.text);
    assert.deepEqual(reset.json, { username: user.username });
    assert.equal(reset.headers['set-cookie'], undefined);
    assert.equal((await verify(server, session)).status, 401);
    assert.equal((await server.request({ path: `/api/auth/forward?token=${session}` })).status, 401);
    assert.equal((await login(server, user.username, user.password)).status, 401);
    const withNew = await login(server, user.username, 'brand-new-password');
    assert.equal(withNew.status, 401);
    assert.equal(codeOf(withNew), 'SECOND_FACTOR_REQUIRED');
    assertLinkRefused(await post(server, '/api/auth/reset', { secret: made.secret, password: 'third-password' }), 'RESET_LINK_INVALID', new ResetLinkInvalid('spent').message, 'second use');
  });

  it('lasts 24 hours, a newer link replaces the older, and a credential change since withdraws it', async () => {
    const user = await createUser(server, root.token);
    const first = await resetLink(user.username);
    const second = await resetLink(user.username);
    const withdrawn = new ResetLinkInvalid('withdrawn').message;
    assertLinkRefused(await post(server, '/api/auth/reset/check', { secret: first.secret }), 'RESET_LINK_INVALID', new ResetLinkInvalid('replaced').message, 'older link');
    const changed = await post(server, '/api/auth/account/password', { password: user.password, newPassword: 'changed-by-owner' }, user.token);
    assert.equal(changed.status, 200, changed.text);
    assertLinkRefused(await post(server, '/api/auth/reset', { secret: second.secret, password: 'pw-1234567890' }), 'RESET_LINK_INVALID', withdrawn, 'after a change');
    const third = await resetLink(user.username);
    server.clock.advanceSeconds(DAY);
    assertLinkRefused(await post(server, '/api/auth/reset', { secret: third.secret, password: 'pw-1234567890' }), 'RESET_LINK_INVALID', new ResetLinkInvalid('expired').message, 'expired');
    assert.equal((await login(server, user.username, 'changed-by-owner')).status, 200);
  });

  it('tells a link a newer one replaced apart from a withdrawn one, to its holder only', async () => {
    const user = await createUser(server, root.token);
    const first = await resetLink(user.username);
    await resetLink(user.username);
    const replaced = new ResetLinkInvalid('replaced').message;
    assert.notEqual(replaced, new ResetLinkInvalid('withdrawn').message);
    assertLinkRefused(await post(server, '/api/auth/reset/check', { secret: first.secret }), 'RESET_LINK_INVALID', replaced, 'older link (check)');
    assertLinkRefused(await post(server, '/api/auth/reset', { secret: first.secret, password: 'pw-1234567890' }), 'RESET_LINK_INVALID', replaced, 'older link (reset)');
    // A credential change withdraws the newest one: no newer link replaced it.
    const other = await createUser(server, root.token);
    const changed = await resetLink(other.username);
    assert.equal((await post(server, '/api/auth/account/password', { password: other.password, newPassword: 'changed-by-owner' }, other.token)).status, 200);
    assertLinkRefused(await post(server, '/api/auth/reset/check', { secret: changed.secret }), 'RESET_LINK_INVALID', new ResetLinkInvalid('withdrawn').message, 'after a change');
    // A stranger's guess learns nothing of either.
    assertLinkRefused(await post(server, '/api/auth/reset/check', { secret: randomBytes(32).toString('base64url') }), 'RESET_LINK_INVALID', new ResetLinkInvalid('unknown').message, 'a guess');
  });

  it('after a reset, an account whose only second factor is a passkey signs in with the password alone, one factor; a gate asking for two then wants the passkey', async () => {
    // What docs/account-page.md says a reset leaves of an account whose only second factor is a passkey.
    const user = await createUser(server, root.token);
    const authenticator = newAuthenticator();
    assert.equal((await addPasskey(server, user.token, user.password, authenticator)).status, 200);
    const made = await resetLink(user.username);
    assert.equal((await post(server, '/api/auth/reset', { secret: made.secret, password: 'after-the-reset' })).status, 200);
    const signedIn = await login(server, user.username, 'after-the-reset');
    assert.equal(signedIn.status, 200, 'the password alone signs in: no code is asked for');
    assert.deepEqual(claimsOf(signedIn.cookieToken ?? '')['amr'], ['pwd']);
    assert.equal((await server.request({ path: '/api/auth/forward', token: signedIn.cookieToken ?? '' })).status, 200, 'an app that asks for one factor opens');
    assert.equal((await server.request({ path: '/api/auth/forward?mfa=1', token: signedIn.cookieToken ?? '' })).status, 401, 'an app that asks for two does not');
    const withPasskey = await passkeySignIn(server, authenticator, { headers: HEADERS });
    assert.equal(withPasskey.status, 200, withPasskey.text);
    assert.equal((await server.request({ path: '/api/auth/forward?mfa=1', token: withPasskey.cookieToken ?? '' })).status, 200, 'the passkey (it verified the user) opens it');
  });

  it('is made by administrators only; an unknown account is USER_NOT_FOUND', async () => {
    const user = await createUser(server, root.token);
    assert.equal((await post(server, `/api/auth/users/${encodeURIComponent(root.username)}/reset-link`, {}, user.token)).status, 403);
    assert.equal((await post(server, `/api/auth/users/${encodeURIComponent(root.username)}/reset-link`, {})).status, 401);
    const unknown = await post(server, '/api/auth/users/nobody-here/reset-link', {}, root.token);
    assert.equal(unknown.status, 500);
    assert.equal(codeOf(unknown), 'USER_NOT_FOUND');
  });

  it('needs a two-factor session of an administrator whose own account has a second factor', async () => {
    const admin = await createUser(server, root.token, { level: 10 });
    const begun = await post(server, '/api/auth/account/totp', { password: admin.password }, admin.token);
    const seed = decodeBase32((begun.json as { secret: string }).secret);
    assert.ok(seed !== undefined);
    const confirmed = await post(server, '/api/auth/account/totp/confirm', { code: totpCode(seed, server.clock.now()) }, admin.token);
    assert.equal(confirmed.status, 200, confirmed.text);
    // A password-only session of that administrator (a token of the current session key, one factor).
    const sessionKey = server.running.store.find(admin.username)?.sessionKey;
    assert.ok(sessionKey !== undefined);
    const iat = Math.floor(server.clock.now() / 1000);
    const passwordOnly = createTokenCodec(Buffer.from(TEST_SECRET)).sign({ username: admin.username, iat, exp: iat + 3600, sid: sessionKey, amr: ['pwd'] });
    const user = await createUser(server, root.token);
    const path = `/api/auth/users/${encodeURIComponent(user.username)}/reset-link`;
    const refused = await post(server, path, {}, passwordOnly);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(codeOf(refused), 'SECOND_FACTOR_SESSION_REQUIRED');
    assert.equal((await post(server, path, {}, confirmed.cookieToken)).status, 200);
    assert.equal((await post(server, path, {}, root.token)).status, 200, 'an administrator without a second factor keeps the Flood contract');
  });
});
