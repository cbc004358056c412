// For every row of the access table (src/auth/access.ts): a request that succeeds once the judge lets
// it through, and the handler's answer then. The access matrix (test/helpers/access-matrix.ts) sends it
// with every credential kind from every account and checks the answer against what the table promises
// (test/helpers/access-model.ts); a row without a fixture here fails the matrix.
import assert from 'node:assert/strict';
import type { Action } from '../../src/auth/access.js';
import { totpCode } from '../../src/totp/codes.js';
import { CLEARED_COOKIE, CONFIGS, uniqueName } from './api.js';
import { hasPasskey, hasTotp, isCrossSite, isOnAppOrigin, type Cell, type Counted, type FactorState, type GateAsks } from './access-model.js';
import type { BareServer, CredentialMaterial, TrackedAccount, World } from './access-world.js';
import { OIDC_FIXTURES } from './access-fixtures-oidc.js';
import { newAuthenticator, requestOptions } from './passkeys.js';
import { CLIENT_SETTINGS, type RequestOptions, type TestResponse } from './server.js';
import type { SoftAuthenticator } from './soft-authenticator.js';

/** One cell at run time, on a server with accounts. */
export interface AccountRun {
  readonly world: World;
  /** The account whose credential the request carries, with `factors` as its second factors. */
  readonly caller: TrackedAccount;
  readonly factors: FactorState;
  /** Whether a path that names an account (or its token or passkey) names the caller's own. */
  readonly isSelf: boolean;
  readonly material: CredentialMaterial;
  /** Another account, a user, for an administrator to change or delete (made anew once deleted). */
  changee(): Promise<TrackedAccount>;
  /** Another account, a user with a machine token and a passkey that no cell may touch. */
  owner(): TrackedAccount;
}

/** What a fixture prepares its request from: everything but the credential, made after it. */
export type AccountSetting = Omit<AccountRun, 'material'>;

/** One cell at run time, on a server without accounts. */
export interface BareRun {
  readonly server: BareServer;
  readonly material: CredentialMaterial;
}

/** The handler's answer: named in the test's name, then checked. */
export interface Expected<R> {
  readonly summary: string;
  check(res: TestResponse, run: R): void | Promise<void>;
}

/** The request a cell sends (the credential is added to it), and what it changed, once answered. */
export interface Prepared {
  readonly options: RequestOptions;
  /** Keeps the tracked accounts true to what the server did, whatever it answered. */
  after?(res: TestResponse): void;
}

interface VariantBase {
  /** Added to the row's name: the gate's query, or which password. */
  readonly label: string;
  /** Rows that take the current password: the account's, or a wrong one. */
  readonly password?: 'right' | 'wrong';
  /** The gate: what the forward URL asks. */
  readonly asks?: GateAsks;
}

export interface AccountVariant extends VariantBase {
  readonly world: 'with accounts';
  /** The handler's answer when the judge lets the request through with `caller` (undefined: none counted). */
  answer(cell: Cell, caller: Counted | undefined): Expected<AccountRun>;
  /** Prepares the request, before the cell's credential is made (a preparation may end sessions). */
  request(run: AccountSetting): Promise<Prepared> | Prepared;
}

export interface BareVariant extends VariantBase {
  /** `no account yet`: a new server; `--auth none`: a proxy authenticates (there are no accounts). */
  readonly world: 'no account yet' | '--auth none';
  answer(cell: Cell, caller: Counted | undefined): Expected<BareRun>;
  request(run: BareRun): Prepared;
}

export interface RowFixture {
  /** The path names an account, or an account's token or passkey: also tried on another account's. */
  readonly namesAccount?: boolean;
  readonly variants: ReadonlyArray<AccountVariant | BareVariant>;
}

const WRONG_PASSWORD = 'not-the-current-password';
const passwordOf = (variant: 'right' | 'wrong', account: TrackedAccount): string =>
  variant === 'right' ? account.password : WRONG_PASSWORD;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The status, a JSON object as the body, and a session cookie issued, cleared, or no Set-Cookie at all. */
function assertJson(res: TestResponse, status: number, cookie: 'issued' | 'cleared' | 'none'): Record<string, unknown> {
  assert.equal(res.status, status, `expected ${status}, got ${res.status} ${res.text}`);
  assert.ok(isObject(res.json), `expected a JSON object, got ${res.text}`);
  const lines = res.headers['set-cookie'];
  if (cookie === 'none') assert.equal(lines, undefined, `expected no Set-Cookie, got ${JSON.stringify(lines)}`);
  if (cookie === 'cleared') assert.deepEqual(lines, [CLEARED_COOKIE]);
  if (cookie === 'issued') assert.ok(res.cookieToken !== undefined && res.cookieToken !== '', `expected a session cookie, got ${JSON.stringify(lines)}`);
  return res.json;
}

/** A refusal the handler makes after the judge let the request through: exactly {code, message}. */
function handlerRefusal<R>(status: number, code: string): Expected<R> {
  return {
    summary: `${status} ${code}`,
    check(res) {
      const body = assertJson(res, status, 'none');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);
      assert.equal(body['code'], code);
    },
  };
}

/** The second factors of the cell's account (none where no account exists). */
const factorsOf = (cell: Cell): FactorState => cell.account?.factors ?? 'no second factor';

const signedIn = (res: TestResponse, run: AccountRun): void => {
  const body = assertJson(res, 200, 'issued');
  assert.deepEqual(body, { success: true, username: run.caller.username, level: run.caller.level });
};

const page = (summary: string): Expected<AccountRun> => ({
  summary,
  check(res) {
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/html/);
  },
});

/** Whether the session token still opens the account (GET /api/auth/account, any factor, the cookie). */
async function isSessionLive(run: AccountRun, token: string): Promise<boolean> {
  const res = await run.world.send({ path: '/api/auth/account', token });
  assert.ok(res.status === 200 || res.status === 401, `GET /api/auth/account: ${res.status} ${res.text}`);
  return res.status === 200;
}

/** GET {base}/logout from another site: a page whose button signs out, and nothing signed out. */
const signOutConfirmation: Expected<AccountRun> = {
  summary: '200 a page asking first, nothing signed out',
  async check(res, run) {
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.text, /<button[^>]*id="sign-out"/);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(await isSessionLive(run, run.material.sessionToken ?? ''), true);
  },
};

/** A row with one request, tried on servers with accounts. */
function withAccounts(answer: AccountVariant['answer'], request: AccountVariant['request']): AccountVariant {
  return { world: 'with accounts', label: '', answer, request };
}

/** A row that takes the current password: tried with the account's and with a wrong one. */
function withPassword(
  answer: (cell: Cell) => Expected<AccountRun>,
  request: (run: AccountSetting, password: 'right' | 'wrong') => Promise<Prepared> | Prepared,
): AccountVariant[] {
  return (['right', 'wrong'] as const).map((password) => ({
    world: 'with accounts',
    label: ` (${password} password)`,
    password,
    answer: (cell) => answer(cell),
    request: (run) => request(run, password),
  }));
}

function gateVariant(query: string, asks: GateAsks): AccountVariant {
  return {
    world: 'with accounts',
    label: query,
    asks,
    answer: (_cell, caller) => ({
      summary: `200 Remote-User, Remote-Auth ${caller?.via ?? '?'}`,
      check(res, run) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['remote-user'], run.caller.username);
        assert.equal(res.headers['remote-auth'], caller?.via);
        assert.equal(res.headers['remote-level'], run.caller.level >= 10 ? 'ADMINISTRATOR' : 'USER');
      },
    }),
    request: () => ({ options: { path: `/api/auth/forward${query}` } }),
  };
}

/** The target of a path naming an account: the caller's own, else another user an administrator may change. */
const targetOf = async (run: AccountSetting): Promise<TrackedAccount> => (run.isSelf ? run.caller : run.changee());

/** A session of `account` with a session record (a password sign-in, with a code when it has TOTP): its id. */
async function spareSession(world: World, account: TrackedAccount): Promise<string> {
  const body = { username: account.username, password: account.password, ...(account.seed === undefined ? {} : { code: world.nextCode(account) }) };
  const res = await world.send({ method: 'POST', path: '/api/auth/authenticate', body });
  assert.equal(res.status, 200, `sign in ${account.username}: ${res.status} ${res.text}`);
  const ses = JSON.parse(Buffer.from((res.cookieToken ?? '').split('.')[1] ?? '', 'base64url').toString('utf8')) as { ses?: unknown };
  assert.equal(typeof ses.ses, 'string');
  return ses.ses as string;
}

/** The world's first administrator, signed in again if a cell ended its sessions: it makes the links. */
async function linkMaker(world: World): Promise<string> {
  const { root } = world;
  if (root.sid === undefined) {
    const body = { username: root.username, password: root.password, ...(root.seed === undefined ? {} : { code: world.nextCode(root) }) };
    world.noteSession(root, await world.send({ method: 'POST', path: '/api/auth/authenticate', body }));
  }
  return world.fixtureSession(root);
}

/**
 * An open invitation made by the world's first administrator: its id and secret. The one a cell left
 * open (refused by the judge, so never used or withdrawn) is withdrawn first: at most 256 may be open.
 */
const leftOpen = new WeakMap<World, Set<string>>();
async function openInvitation(world: World): Promise<{ id: string; secret: string }> {
  const open = leftOpen.get(world) ?? new Set<string>();
  leftOpen.set(world, open);
  for (const id of open) {
    await world.send({ method: 'DELETE', path: `/api/auth/invites/${id}`, token: await linkMaker(world) });
    open.delete(id);
  }
  const res = await world.send({ method: 'POST', path: '/api/auth/invites', token: await linkMaker(world), body: { level: 'USER' } });
  assert.equal(res.status, 200, `make an invitation: ${res.status} ${res.text}`);
  const { id, url } = res.json as { id: string; url: string };
  open.add(id);
  return { id, secret: url.slice(url.indexOf('#') + 1) };
}

/** A new account no cell tracks, for a link to be made for: its name. */
async function throwawayAccount(world: World): Promise<string> {
  const username = uniqueName('linked');
  const res = await world.send({ method: 'POST', path: '/api/auth/users', token: await linkMaker(world), body: { username, password: `${username}-pw`, level: 5 } });
  assert.equal(res.status, 200, `make an account: ${res.status} ${res.text}`);
  return username;
}

/** A reset link for `username`, made by the world's first administrator: its secret. */
async function resetLinkFor(world: World, username: string): Promise<string> {
  const res = await world.send({ method: 'POST', path: `/api/auth/users/${username}/reset-link`, token: await linkMaker(world), body: {} });
  assert.equal(res.status, 200, `make a reset link: ${res.status} ${res.text}`);
  const { url } = res.json as { url: string };
  return url.slice(url.indexOf('#') + 1);
}

/** Every row's fixture. Rows added to the table need one here (the matrix fails without it). */
export const FIXTURES: { readonly [A in Action]?: RowFixture } = {
  signIn: {
    variants: [withAccounts(
      () => ({ summary: '200 signed in', check: signedIn }),
      ({ world, caller }) => ({
        options: {
          method: 'POST',
          path: '/api/auth/authenticate',
          body: { username: caller.username, password: caller.password, ...(caller.seed === undefined ? {} : { code: world.nextCode(caller) }) },
        },
      }),
    )],
  },
  register: {
    variants: [
      withAccounts(
        () => ({
          summary: '200 a new user',
          check(res) {
            const body = assertJson(res, 200, 'issued');
            assert.equal(body['success'], true);
            assert.equal(body['level'], 5);
          },
        }),
        () => {
          const username = uniqueName('registered');
          return { options: { method: 'POST', path: '/api/auth/register', body: { username, password: `${username}-pw`, level: 5, client: CLIENT_SETTINGS } } };
        },
      ),
      {
        world: 'no account yet',
        label: '',
        answer: () => ({
          summary: '200 the first administrator',
          check(res) {
            const body = assertJson(res, 200, 'issued');
            assert.deepEqual(body, { success: true, username: 'first', level: 10 });
          },
        }),
        request: () => ({
          options: { method: 'POST', path: '/api/auth/register', body: { username: 'first', password: 'first-secret-pw', level: 10, client: CLIENT_SETTINGS } },
        }),
      },
    ],
  },
  verify: {
    variants: [withAccounts(
      (_cell, caller) => caller === undefined
        ? {
          summary: '401 {configs}',
          check: (res) => assert.deepEqual(assertJson(res, 401, 'none'), { configs: CONFIGS }),
        }
        : {
          summary: '200 the account',
          check(res, run) {
            const body = assertJson(res, 200, 'none');
            assert.deepEqual(body, { initialUser: false, username: run.caller.username, level: run.caller.level, configs: CONFIGS });
          },
        },
      () => ({ options: { path: '/api/auth/verify' } }),
    )],
  },
  logout: {
    variants: [withAccounts(
      () => ({
        summary: '200 signed out, the token revoked',
        async check(res, run) {
          assert.deepEqual(assertJson(res, 200, 'cleared'), {});
          assert.equal(await isSessionLive(run, run.material.sessionToken ?? ''), false, 'the token is revoked');
        },
      }),
      () => ({ options: { path: '/api/auth/logout' } }),
    )],
  },
  listUsers: {
    variants: [withAccounts(
      () => ({
        summary: '200 the list',
        check(res, run) {
          assert.equal(res.status, 200, res.text);
          assert.ok(Array.isArray(res.json), res.text);
          assert.ok(res.json.some((entry: unknown) => isObject(entry) && entry['username'] === run.caller.username));
        },
      }),
      () => ({ options: { path: '/api/auth/users' } }),
    )],
  },
  updateUser: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({ summary: '200 groups changed', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }),
      async (run) => {
        const target = await targetOf(run);
        return { options: { method: 'PATCH', path: `/api/auth/users/${target.username}`, body: { groups: ['matrix'] } } };
      },
    )],
  },
  updateUserWaysIn: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({ summary: '200 password set', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }),
      async (run) => {
        const target = await targetOf(run);
        return {
          // The same password again: still a credential change (new session key, machine tokens end).
          options: { method: 'PATCH', path: `/api/auth/users/${target.username}`, body: { password: target.password } },
          after(res) {
            if (res.status === 200) run.world.notePasswordChanged(target, undefined);
          },
        };
      },
    )],
  },
  deleteUser: {
    namesAccount: true,
    variants: [withAccounts(
      (cell) => cell.account?.persona === 'last administrator'
        ? handlerRefusal(409, 'LAST_ADMINISTRATOR')
        : { summary: '200 deleted', check: (res) => assert.equal(typeof assertJson(res, 200, 'none')['username'], 'string') },
      async (run) => {
        const target = await targetOf(run);
        return {
          options: { method: 'DELETE', path: `/api/auth/users/${target.username}` },
          after(res) {
            if (res.status === 200) target.exists = false;
          },
        };
      },
    )],
  },
  createUser: {
    variants: [withAccounts(
      () => ({ summary: '200 a new account', check: (res) => assert.equal(typeof assertJson(res, 200, 'none')['username'], 'string') }),
      () => {
        const username = uniqueName('created');
        return { options: { method: 'POST', path: '/api/auth/users', body: { username, password: `${username}-pw`, level: 5 } } };
      },
    )],
  },
  showUser: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({
        summary: '200 the summary',
        check(res, run) {
          const body = assertJson(res, 200, 'none');
          // E-mail address and name only once set (updateProfile sets the caller's own).
          const optional = ['email', 'name'];
          assert.deepEqual(Object.keys(body).filter((key) => !optional.includes(key)).sort(), ['groups', 'lastSignInAt', 'level', 'passkeys', 'tokens', 'totp', 'username']);
          for (const key of optional) if (key in body) assert.equal(typeof body[key], 'string');
          if (run.isSelf) assert.deepEqual([body['username'], body['totp']], [run.caller.username, hasTotp(run.factors)]);
        },
      }),
      async (run) => ({ options: { path: `/api/auth/users/${(await targetOf(run)).username}` } }),
    )],
  },
  showAccount: {
    variants: [withAccounts(
      () => ({
        summary: '200 the account',
        check(res, run) {
          const body = assertJson(res, 200, 'none');
          assert.equal(body['username'], run.caller.username);
          assert.equal(body['totp'], hasTotp(run.factors));
          assert.equal((body['passkeys'] as unknown[]).length > 0, hasPasskey(run.factors));
        },
      }),
      () => ({ options: { path: '/api/auth/account' } }),
    )],
  },
  revokeMachineToken: {
    namesAccount: true,
    variants: [withAccounts(
      (cell) => cell.account?.persona === 'self' || cell.account?.persona === 'last administrator'
        ? { summary: '200 revoked', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }
        : handlerRefusal(404, 'TOKEN_NOT_FOUND'),
      async (run) => {
        if (!run.isSelf) {
          return { options: { method: 'DELETE', path: `/api/auth/account/tokens/${run.owner().machineToken?.id ?? ''}` } };
        }
        const { caller, world } = run;
        const id = caller.spareTokenId ?? (await world.makeMachineToken(caller)).id;
        caller.spareTokenId = id;
        return {
          options: { method: 'DELETE', path: `/api/auth/account/tokens/${id}` },
          after(res) {
            if (res.status === 200) caller.spareTokenId = undefined;
          },
        };
      },
    )],
  },
  logoutEverywhere: {
    variants: [withAccounts(
      () => ({ summary: '200 every session ended', check: (res) => assert.deepEqual(assertJson(res, 200, 'cleared'), {}) }),
      ({ caller }) => ({
        options: { method: 'POST', path: '/api/auth/account/logout-everywhere', body: {} },
        after(res) {
          if (res.status === 200) caller.sid = undefined;
        },
      }),
    )],
  },
  changePassword: {
    variants: withPassword(
      () => ({ summary: '200 password changed', check: (res) => assert.deepEqual(assertJson(res, 200, 'issued'), {}) }),
      ({ world, caller }, password) => ({
        // The same password again: a credential change all the same (new session key, machine tokens end).
        options: { method: 'POST', path: '/api/auth/account/password', body: { password: passwordOf(password, caller), newPassword: caller.password } },
        after(res) {
          if (res.status === 200) world.notePasswordChanged(caller, res);
        },
      }),
    ),
  },
  beginTotp: {
    variants: withPassword(
      (cell) => hasTotp(factorsOf(cell))
        ? handlerRefusal(409, 'TOTP_ALREADY_ENABLED')
        : {
          summary: '200 a set-up begun',
          check: (res) => assert.deepEqual(Object.keys(assertJson(res, 200, 'none')).sort(), ['qr', 'secret', 'uri']),
        },
      ({ caller }, password) => ({
        options: { method: 'POST', path: '/api/auth/account/totp', body: { password: passwordOf(password, caller) } },
      }),
    ),
  },
  confirmTotp: {
    variants: [withAccounts(
      (cell) => hasTotp(factorsOf(cell))
        ? handlerRefusal(409, 'TOTP_ALREADY_ENABLED')
        : {
          summary: '200 TOTP on',
          check: (res) => assert.ok(Array.isArray(assertJson(res, 200, 'issued')['recoveryCodes'])),
        },
      async ({ world, caller, factors }) => {
        if (hasTotp(factors)) return { options: { method: 'POST', path: '/api/auth/account/totp/confirm', body: { code: '000000' } } };
        // A set-up begun (with the password) for this cell to confirm.
        const seed = await world.beginTotp(caller);
        return {
          options: { method: 'POST', path: '/api/auth/account/totp/confirm', body: { code: totpCode(seed, world.server.clock.now()) } },
          after(res) {
            if (res.status === 200) world.noteTotpConfirmed(caller, seed, res);
          },
        };
      },
    )],
  },
  disableTotp: {
    variants: withPassword(
      (cell) => hasTotp(factorsOf(cell))
        ? { summary: '200 TOTP off', check: (res) => assert.deepEqual(assertJson(res, 200, 'issued'), {}) }
        : { summary: '200 nothing to turn off', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) },
      ({ world, caller }, password) => ({
        options: { method: 'POST', path: '/api/auth/account/totp/disable', body: { password: passwordOf(password, caller) } },
        after(res) {
          if (res.status === 200 && res.cookieToken !== undefined) {
            caller.seed = undefined;
            world.noteSession(caller, res);
          }
        },
      }),
    ),
  },
  passkeyCreationOptions: {
    variants: [withAccounts(
      () => ({
        summary: '200 creation options',
        check(res, run) {
          const body = assertJson(res, 200, 'none');
          assert.equal(typeof body['challenge'], 'string');
          assert.equal((body['user'] as Record<string, unknown>)['name'], run.caller.username);
        },
      }),
      () => ({ options: { method: 'POST', path: '/api/auth/account/passkeys/options', body: {} } }),
    )],
  },
  addPasskey: {
    variants: withPassword(
      () => ({ summary: '200 passkey added', check: (res) => assert.equal(assertJson(res, 200, 'issued')['name'], 'matrix') }),
      async ({ world, caller }, password) => {
        // A registration answering options the fixture asked for: the cell's credential sends it.
        const { authenticator, credential } = await world.newRegistration(caller);
        return {
          options: { method: 'POST', path: '/api/auth/account/passkeys', body: { name: 'matrix', credential, password: passwordOf(password, caller) } },
          after(res) {
            if (res.status !== 200) return;
            caller.passkeys.push(authenticator);
            world.noteSession(caller, res);
          },
        };
      },
    ),
  },
  removePasskey: {
    namesAccount: true,
    variants: withPassword(
      (cell) => {
        const persona = cell.account?.persona;
        const isOwn = persona === 'self' || persona === 'last administrator';
        return isOwn && hasPasskey(factorsOf(cell))
          ? { summary: '200 passkey removed', check: (res) => assert.deepEqual(assertJson(res, 200, 'issued'), {}) }
          : handlerRefusal(404, 'PASSKEY_NOT_FOUND');
      },
      async ({ world, caller, factors, isSelf, owner }, password) => {
        const body = { password: passwordOf(password, caller) };
        if (!isSelf) return { options: { method: 'DELETE', path: `/api/auth/account/passkeys/${owner().passkeys[0]?.id ?? ''}`, body } };
        // No passkey of its own to name: an id no account has.
        if (!hasPasskey(factors)) return { options: { method: 'DELETE', path: `/api/auth/account/passkeys/${newAuthenticator().id}`, body } };
        // A second passkey to remove, so the account keeps its state.
        if (caller.passkeys.length < 2) await world.addPasskey(caller);
        const spare = caller.passkeys.at(-1) as SoftAuthenticator;
        return {
          options: { method: 'DELETE', path: `/api/auth/account/passkeys/${spare.id}`, body },
          after(res) {
            if (res.status !== 200) return;
            caller.passkeys.splice(caller.passkeys.indexOf(spare), 1);
            world.noteSession(caller, res);
          },
        };
      },
    ),
  },
  makeMachineToken: {
    variants: withPassword(
      () => ({
        summary: '200 a machine token',
        check(res) {
          const body = assertJson(res, 200, 'none');
          assert.match(String(body['token']), /^gh_[A-Za-z0-9_-]{43}$/);
        },
      }),
      ({ caller }, password) => ({
        options: { method: 'POST', path: '/api/auth/account/tokens', body: { name: 'matrix', password: passwordOf(password, caller) } },
        after(res) {
          const id = isObject(res.json) ? res.json['id'] : undefined;
          if (res.status === 200 && typeof id === 'string') caller.madeTokenIds.push(id);
        },
      }),
    ),
  },
  listOwnSessions: {
    variants: [withAccounts(
      () => ({ summary: '200 the list', check: (res) => assert.ok(res.status === 200 && Array.isArray(res.json), `${res.status} ${res.text}`) }),
      () => ({ options: { path: '/api/auth/account/sessions' } }),
    )],
  },
  endOwnSession: {
    namesAccount: true,
    variants: [withAccounts(
      (cell) => cell.account?.persona === 'self' || cell.account?.persona === 'last administrator'
        ? { summary: '200 ended', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }
        : handlerRefusal(404, 'SESSION_NOT_FOUND'),
      async (run) => {
        // Another account's session, or a spare one of the caller's own (never the cell's).
        const id = await spareSession(run.world, run.isSelf ? run.caller : run.owner());
        return { options: { method: 'DELETE', path: `/api/auth/account/sessions/${id}` } };
      },
    )],
  },
  listUserSessions: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({ summary: '200 the list', check: (res) => assert.ok(res.status === 200 && Array.isArray(res.json), `${res.status} ${res.text}`) }),
      async (run) => ({ options: { path: `/api/auth/users/${(await targetOf(run)).username}/sessions` } }),
    )],
  },
  endUserSession: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({ summary: '200 ended', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }),
      async (run) => {
        const target = await targetOf(run);
        const id = await spareSession(run.world, target);
        return { options: { method: 'DELETE', path: `/api/auth/users/${target.username}/sessions/${id}` } };
      },
    )],
  },
  endUserSessions: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({ summary: '200 every session ended', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }),
      async (run) => {
        const target = await targetOf(run);
        return {
          options: { method: 'DELETE', path: `/api/auth/users/${target.username}/sessions` },
          after(res) {
            if (res.status === 200) target.sid = undefined;
          },
        };
      },
    )],
  },
  makeInvitation: {
    variants: [withAccounts(
      () => ({
        summary: '200 a link',
        check: (res) => assert.deepEqual(Object.keys(assertJson(res, 200, 'none')).sort(), ['expiresAt', 'id', 'url']),
      }),
      async (run) => {
        // Made and withdrawn again, so that the cells never fill the 256 open invitations.
        const { id } = await openInvitation(run.world);
        await run.world.send({ method: 'DELETE', path: `/api/auth/invites/${id}`, token: await linkMaker(run.world) });
        return {
          options: { method: 'POST', path: '/api/auth/invites', body: { level: 'USER', days: 1 } },
          after(res) {
            const made = res.json as { id?: unknown } | undefined;
            if (res.status === 200 && typeof made?.id === 'string') leftOpen.get(run.world)?.add(made.id);
          },
        };
      },
    )],
  },
  listInvitations: {
    variants: [withAccounts(
      () => ({ summary: '200 the list', check: (res) => assert.ok(res.status === 200 && Array.isArray(res.json), `${res.status} ${res.text}`) }),
      () => ({ options: { path: '/api/auth/invites' } }),
    )],
  },
  withdrawInvitation: {
    variants: [withAccounts(
      () => ({ summary: '200 withdrawn', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), {}) }),
      async (run) => {
        const { id } = await openInvitation(run.world);
        return {
          options: { method: 'DELETE', path: `/api/auth/invites/${id}` },
          after(res) {
            if (res.status === 200) leftOpen.get(run.world)?.delete(id);
          },
        };
      },
    )],
  },
  checkInvitation: {
    variants: [withAccounts(
      () => ({
        summary: '200 what the link is',
        check: (res) => assert.deepEqual(Object.keys(assertJson(res, 200, 'none')).sort(), ['expiresAt', 'level', 'username']),
      }),
      async (run) => ({ options: { method: 'POST', path: '/api/auth/join/check', body: { secret: (await openInvitation(run.world)).secret } } }),
    )],
  },
  join: {
    variants: [withAccounts(
      () => ({
        summary: '200 a new account, signed in',
        check(res) {
          const body = assertJson(res, 200, 'issued');
          assert.deepEqual([body['success'], body['level']], [true, 'USER']);
        },
      }),
      async (run) => {
        const { id, secret } = await openInvitation(run.world);
        const username = uniqueName('joined');
        return {
          options: { method: 'POST', path: '/api/auth/join', body: { secret, username, password: `${username}-pw` } },
          after(res) {
            if (res.status === 200) leftOpen.get(run.world)?.delete(id);
          },
        };
      },
    )],
  },
  makeResetLink: {
    namesAccount: true,
    variants: [withAccounts(
      () => ({ summary: '200 a link', check: (res) => assert.deepEqual(Object.keys(assertJson(res, 200, 'none')).sort(), ['expiresAt', 'id', 'url']) }),
      async (run) => ({ options: { method: 'POST', path: `/api/auth/users/${(await targetOf(run)).username}/reset-link`, body: {} } }),
    )],
  },
  checkResetLink: {
    variants: [withAccounts(
      () => ({ summary: '200 what the link is', check: (res) => assert.deepEqual(Object.keys(assertJson(res, 200, 'none')).sort(), ['expiresAt', 'username']) }),
      async (run) => ({ options: { method: 'POST', path: '/api/auth/reset/check', body: { secret: await resetLinkFor(run.world, await throwawayAccount(run.world)) } } }),
    )],
  },
  reset: {
    variants: [withAccounts(
      () => ({ summary: '200 the password set', check: (res) => assert.equal(typeof assertJson(res, 200, 'none')['username'], 'string') }),
      async (run) => {
        // An account of its own: a reset is a credential change no tracked account may undergo unseen.
        const username = await throwawayAccount(run.world);
        const secret = await resetLinkFor(run.world, username);
        return { options: { method: 'POST', path: '/api/auth/reset', body: { secret, password: `${username}-new-pw` } } };
      },
    )],
  },
  passkeySignInOptions: {
    variants: [withAccounts(
      () => ({ summary: '200 request options', check: (res) => assert.equal(typeof assertJson(res, 200, 'none')['challenge'], 'string') }),
      ({ caller }) => ({ options: { method: 'POST', path: '/api/auth/passkey/options', body: { username: caller.username } } }),
    )],
  },
  passkeySignIn: {
    variants: [withAccounts(
      // On an app's origin the relying party is that host's, not the one the passkey was made for.
      (cell) => hasPasskey(factorsOf(cell)) && !isOnAppOrigin(cell.credential)
        ? { summary: '200 signed in', check: signedIn }
        : handlerRefusal(401, 'PASSKEY_REFUSED'),
      async ({ world, caller }) => {
        // The account's own passkey; an account without one signs with a key no account has.
        const authenticator = caller.passkeys[0] ?? newAuthenticator();
        const options = await requestOptions(world.server, caller.username);
        return { options: { method: 'POST', path: '/api/auth/passkey', body: { credential: authenticator.get(options) } } };
      },
    )],
  },
  forward: {
    variants: [
      gateVariant('', { isTwoFactorAsked: false, areTokensAllowed: false, isAdministratorAsked: false }),
      gateVariant('?mfa=1', { isTwoFactorAsked: true, areTokensAllowed: false, isAdministratorAsked: false }),
      gateVariant('?mfa=1&tokens=1', { isTwoFactorAsked: true, areTokensAllowed: true, isAdministratorAsked: false }),
      gateVariant('?level=ADMINISTRATOR', { isTwoFactorAsked: false, areTokensAllowed: false, isAdministratorAsked: true }),
    ],
  },
  probe: {
    variants: [withAccounts(
      () => ({ summary: '200 the probe', check: (res) => assert.equal(assertJson(res, 200, 'none')['probe'], 'gatehouse') }),
      () => ({ options: { path: '/api/auth/probe' } }),
    )],
  },
  health: {
    variants: [withAccounts(
      () => ({ summary: '200 ok', check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), { status: 'ok' }) }),
      () => ({ options: { path: '/healthz' } }),
    )],
  },
  signInPage: { variants: [withAccounts(() => page('200 the page'), () => ({ options: { path: '/login' } }))] },
  accountPage: { variants: [withAccounts(() => page('200 the page'), () => ({ options: { path: '/gatehouse/account' } }))] },
  usersPage: { variants: [withAccounts(() => page('200 the page'), () => ({ options: { path: '/gatehouse/users' } }))] },
  joinPage: { variants: [withAccounts(() => page('200 the page'), () => ({ options: { path: '/gatehouse/join' } }))] },
  resetPage: { variants: [withAccounts(() => page('200 the page'), () => ({ options: { path: '/gatehouse/reset' } }))] },
  signOutPage: {
    variants: [withAccounts(
      (cell, caller) => isCrossSite(cell.credential) ? signOutConfirmation : ({
        summary: caller === undefined ? '303 to the sign-in page, no token revoked' : '303 to the sign-in page, the token revoked',
        async check(res, run) {
          assert.equal(res.status, 303, res.text);
          assert.equal(res.headers.location, 'login?signed_out=1', 'the sign-in page, saying the browser is signed out');
          assert.deepEqual(res.headers['set-cookie'], [CLEARED_COOKIE]);
          const token = run.material.sessionToken;
          // A live token the row does not count (`?token=` on a page) is left alone.
          if (token !== undefined) assert.equal(await isSessionLive(run, token), caller === undefined);
        },
      }),
      () => ({ options: { path: '/logout' } }),
    )],
  },
  proxySignIn: {
    variants: [{
      world: '--auth none',
      label: '',
      answer: () => ({
        summary: '200 the built-in administrator',
        check: (res) => assert.deepEqual(assertJson(res, 200, 'none'), { success: true, username: '_config', level: 10 }),
      }),
      request: () => ({ options: { method: 'POST', path: '/api/auth/authenticate', body: { username: 'anyone', password: 'anything' } } }),
    }],
  },
  proxyVerify: {
    variants: [{
      world: '--auth none',
      label: '',
      answer: () => ({
        summary: '200 the built-in administrator',
        check(res) {
          const configs = { ...CONFIGS, authMethod: 'none' };
          assert.deepEqual(assertJson(res, 200, 'none'), { initialUser: false, username: '_config', level: 10, configs });
        },
      }),
      request: () => ({ options: { path: '/api/auth/verify' } }),
    }],
  },
  proxyLogout: {
    variants: [{
      world: '--auth none',
      label: '',
      answer: () => ({ summary: '200 cookie cleared', check: (res) => assert.deepEqual(assertJson(res, 200, 'cleared'), {}) }),
      request: () => ({ options: { path: '/api/auth/logout' } }),
    }],
  },
  // OpenID Connect (test/helpers/access-fixtures-oidc.ts).
  ...OIDC_FIXTURES,
};
