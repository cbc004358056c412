// The accounts the access matrix (test/attack/access-matrix*.test.ts) asks with, on one real server:
// each account's second factors, session key, machine tokens and passkeys are tracked as the server
// answers, so thousands of cells share a few accounts and each cell finds its account as it says.
// Sessions are tokens signed with the server's secret for the account's session key (`sid`), as
// routes/session-cookie.ts issues them, with whatever `amr` the cell names.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { hotp, totpCode, totpStep } from '../../src/totp/codes.js';
import { decodeBase32 } from '../../src/totp/base32.js';
import { claimsOf, signToken, uniqueName } from './api.js';
import { APP_HOST, hasPasskey, hasTotp, type Credential, type FactorState } from './access-model.js';
import { HEADERS, newAuthenticator, ORIGIN } from './passkeys.js';
import { CLIENT_SETTINGS, startTestServer, type RequestOptions, type TestResponse, type TestServer } from './server.js';
import type { SoftAuthenticator } from './soft-authenticator.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';

/** An account on the server, as far as the test knows it. */
export interface TrackedAccount {
  readonly username: string;
  readonly password: string;
  readonly level: number;
  /** The session key; undefined when a change ended every session and none was seen since. */
  sid: string | undefined;
  /** The TOTP seed, while the account has TOTP. */
  seed: Buffer | undefined;
  /** The last TOTP step the server took from this account: a step signs in once. */
  lastStep: number;
  /** Its passkeys, oldest first. */
  readonly passkeys: SoftAuthenticator[];
  machineToken: { readonly id: string; readonly token: string } | undefined;
  /** A machine token a cell may revoke. */
  spareTokenId: string | undefined;
  /** Made with `days: 1` and left to expire. */
  expiredMachineToken: string | undefined;
  revokedMachineToken: string | undefined;
  revokedSession: { readonly token: string; readonly sid: string; readonly iat: number } | undefined;
  /** Tokens cells made, revoked again before the account's cap of 32 is near. */
  readonly madeTokenIds: string[];
  /** False once deleted. */
  exists: boolean;
}

/** What a request carries for one credential kind. */
export interface CredentialMaterial {
  readonly cookie?: string;
  readonly urlToken?: string;
  readonly authorization?: string;
  /** Headers of the page that sent the request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The session token sent (cookie or URL), for answers that end it. */
  readonly sessionToken?: string;
}

const TWO_FACTORS = ['pwd', 'otp'];
const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;
const DAY_SECONDS = 24 * 60 * 60;
/** Kept below the token lifetime, so a cached revoked token is never also an expired one. */
const REVOKED_REUSE_SECONDS = 2 * DAY_SECONDS;
const MAX_KEPT_TOKENS = 8;
const MAX_KEPT_PASSKEYS = 3;

/**
 * The real file system without fsync: the matrix judges who may do what, thousands of changes of
 * accounts in a row, and a disk flush each (tens of milliseconds on a busy machine) would be most of
 * its time. What fsync guarantees has tests of its own (test/durability).
 */
const UNSYNCED_FILE_SYSTEM: StoreFileSystem = {
  ...realFileSystem,
  async open(path, flags, mode) {
    const handle = await realFileSystem.open(path, flags, mode);
    return {
      write: (buffer, offset, length, position) => handle.write(buffer, offset, length, position),
      sync: async () => {},
      stat: () => handle.stat(),
      close: () => handle.close(),
    };
  },
};

export type BareServer = Awaited<ReturnType<typeof openBareServer>>;
export type World = Awaited<ReturnType<typeof openWorld>>;

/**
 * Starts a server with `settings` (GATEHOUSE_* values) and no account, its pages at the tests' browser's
 * origin (passkeys.ts ORIGIN) as --public-url, as a deployment with every capability names them. Every
 * session is revoked at logout (a cell's revoked credential is a real revocation); the login throttle,
 * which has tests of its own, is out of reach of the matrix's wrong passwords. Requests go over one
 * kept-alive connection.
 */
export async function openBareServer(settings: Record<string, string>) {
  const server: TestServer = await startTestServer({
    GATEHOUSE_PUBLIC_URL: ORIGIN,
    GATEHOUSE_REVOKE_ON_LOGOUT: 'true',
    GATEHOUSE_THROTTLE_USER: '1000000',
    GATEHOUSE_THROTTLE_ADDRESS: '1000000',
    GATEHOUSE_LOG_LEVEL: 'error',
    ...settings,
  }, { fileSystem: UNSYNCED_FILE_SYSTEM });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    server,
    /** Sends as the tests' browser does (passkey.ts HEADERS), on the kept-alive connection. */
    send: (options: RequestOptions): Promise<TestResponse> =>
      server.request({ ...options, agent, headers: { ...HEADERS, ...options.headers } }),
    async close(): Promise<void> {
      agent.destroy();
      await server.close();
    },
  };
}

/** A server as openBareServer starts it, with its first account, an administrator, as `root`. */
export async function openWorld(settings: Record<string, string>) {
  const bare = await openBareServer(settings);
  const { server, send } = bare;
  const nowSeconds = (): number => Math.floor(server.clock.now() / 1000);

  const sign = (account: TrackedAccount, amr: readonly string[], iat = nowSeconds()): string => {
    if (account.sid === undefined) throw new TypeError(`the session key of ${account.username} is not known`);
    return signToken({
      username: account.username, iat, exp: iat + TOKEN_TTL_SECONDS, sid: account.sid, jti: uniqueName('jti'), amr: [...amr],
    });
  };

  /** A two-factor session the fixtures change accounts with (the cells' own sessions are what is judged). */
  const fixtureSession = (account: TrackedAccount): string => sign(account, TWO_FACTORS);

  const expectOk = (res: TestResponse, what: string): TestResponse => {
    assert.equal(res.status, 200, `${what}: ${res.status} ${res.text}`);
    return res;
  };

  /** Takes the session key from a Set-Cookie that issued a session. */
  const noteSession = (account: TrackedAccount, res: TestResponse): void => {
    const sid = res.cookieToken === undefined || res.cookieToken === '' ? undefined : claimsOf(res.cookieToken)['sid'];
    if (typeof sid === 'string') account.sid = sid;
  };

  /** The next TOTP code the server takes from `account`: a later step than its last, the clock moved on if needed. */
  const nextCode = (account: TrackedAccount): string => {
    if (account.seed === undefined) throw new TypeError(`${account.username} has no TOTP`);
    let current = totpStep(server.clock.now());
    const step = Math.max(current - 1, account.lastStep + 1);
    if (step > current + 1) {
      server.clock.advanceSeconds((step - current - 1) * 30);
      current = step - 1;
    }
    account.lastStep = step;
    return hotp(account.seed, step);
  };

  const newTracked = (username: string, password: string, level: number, cookieToken: string | undefined): TrackedAccount => {
    const account: TrackedAccount = {
      username, password, level, sid: undefined, seed: undefined, lastStep: -1, passkeys: [],
      machineToken: undefined, spareTokenId: undefined, expiredMachineToken: undefined, revokedMachineToken: undefined,
      revokedSession: undefined, madeTokenIds: [], exists: true,
    };
    if (cookieToken !== undefined) account.sid = claimsOf(cookieToken)['sid'] as string;
    return account;
  };

  const register = async (asAdministrator: TrackedAccount | undefined, level: number, prefix: string): Promise<TrackedAccount> => {
    const username = uniqueName(prefix);
    const password = `${username}-secret-pw`;
    const res = expectOk(await send({
      method: 'POST',
      path: '/api/auth/register',
      body: { username, password, level, client: CLIENT_SETTINGS },
      ...(asAdministrator === undefined ? {} : { token: fixtureSession(asAdministrator) }),
    }), `register ${username}`);
    return newTracked(username, password, level, res.cookieToken);
  };

  let root: TrackedAccount;
  try {
    root = await register(undefined, 10, 'root');
  } catch (error) {
    await bare.close();
    throw error;
  }

  /** Signs in with the password (and a code), to learn the session key after a change ended every session. */
  const signInAgain = async (account: TrackedAccount): Promise<void> => {
    const code = account.seed === undefined ? {} : { code: nextCode(account) };
    const res = expectOk(await send({
      method: 'POST', path: '/api/auth/authenticate', body: { username: account.username, password: account.password, ...code },
    }), `sign in ${account.username} again`);
    noteSession(account, res);
  };

  const post = (account: TrackedAccount, path: string, body: unknown): Promise<TestResponse> =>
    send({ method: 'POST', path, token: fixtureSession(account), body });

  /** Starts a TOTP set-up; the seed it shows. */
  const beginTotp = async (account: TrackedAccount): Promise<Buffer> => {
    const begun = expectOk(await post(account, '/api/auth/account/totp', { password: account.password }), `begin TOTP for ${account.username}`);
    return decodeBase32((begun.json as { secret: string }).secret) ?? Buffer.alloc(0);
  };

  /** What a confirmed set-up leaves: the seed in force, its step spent, the new session key. */
  const noteTotpConfirmed = (account: TrackedAccount, seed: Buffer, res: TestResponse): void => {
    account.seed = seed;
    account.lastStep = totpStep(server.clock.now());
    noteSession(account, res);
  };

  const enrolTotp = async (account: TrackedAccount): Promise<void> => {
    const seed = await beginTotp(account);
    const code = totpCode(seed, server.clock.now());
    const res = expectOk(await post(account, '/api/auth/account/totp/confirm', { code }), `confirm TOTP for ${account.username}`);
    noteTotpConfirmed(account, seed, res);
  };

  const disableTotp = async (account: TrackedAccount): Promise<void> => {
    const res = expectOk(await post(account, '/api/auth/account/totp/disable', { password: account.password }), `disable TOTP of ${account.username}`);
    account.seed = undefined;
    noteSession(account, res);
  };

  /** A registration of a new software authenticator for `account`, answering options the fixture asked for. */
  const newRegistration = async (account: TrackedAccount) => {
    const options = expectOk(await post(account, '/api/auth/account/passkeys/options', {}), `passkey options for ${account.username}`);
    const authenticator = newAuthenticator();
    return { authenticator, credential: authenticator.create(options.json as never) };
  };

  const addPasskey = async (account: TrackedAccount): Promise<void> => {
    const { authenticator, credential } = await newRegistration(account);
    const res = expectOk(await post(account, '/api/auth/account/passkeys', { name: 'matrix', credential, password: account.password }), `add a passkey to ${account.username}`);
    account.passkeys.push(authenticator);
    noteSession(account, res);
  };

  const removePasskey = async (account: TrackedAccount, authenticator: SoftAuthenticator): Promise<void> => {
    const res = expectOk(await send({
      method: 'DELETE', path: `/api/auth/account/passkeys/${authenticator.id}`, token: fixtureSession(account), body: { password: account.password },
    }), `remove a passkey of ${account.username}`);
    account.passkeys.splice(account.passkeys.indexOf(authenticator), 1);
    noteSession(account, res);
  };

  const makeMachineToken = async (account: TrackedAccount, days?: number): Promise<{ id: string; token: string }> => {
    const res = expectOk(await post(account, '/api/auth/account/tokens', {
      name: 'matrix', password: account.password, ...(days === undefined ? {} : { days }),
    }), `make a machine token for ${account.username}`);
    return res.json as { id: string; token: string };
  };

  const revokeMachineToken = async (account: TrackedAccount, id: string): Promise<void> => {
    expectOk(await send({ method: 'DELETE', path: `/api/auth/account/tokens/${id}`, token: fixtureSession(account) }), `revoke a machine token of ${account.username}`);
  };

  /** What a change of the account's password did: every session and every machine token ended. */
  const notePasswordChanged = (account: TrackedAccount, res: TestResponse | undefined): void => {
    account.sid = undefined;
    if (res !== undefined) noteSession(account, res);
    account.machineToken = undefined;
    account.spareTokenId = undefined;
    account.expiredMachineToken = undefined;
    account.madeTokenIds.length = 0;
  };

  /** Brings `account` to `state` (second factors) with a known session key; does nothing when it is there. */
  const ensure = async (account: TrackedAccount, state: FactorState): Promise<void> => {
    if (account.sid === undefined) await signInAgain(account);
    if (hasTotp(state) && account.seed === undefined) await enrolTotp(account);
    if (!hasTotp(state) && account.seed !== undefined) await disableTotp(account);
    if (hasPasskey(state) && account.passkeys.length === 0) await addPasskey(account);
    const kept = hasPasskey(state) ? MAX_KEPT_PASSKEYS : 0;
    while (account.passkeys.length > kept) await removePasskey(account, account.passkeys.at(-1) as SoftAuthenticator);
    if (account.madeTokenIds.length > MAX_KEPT_TOKENS) {
      for (const id of account.madeTokenIds.splice(0)) await revokeMachineToken(account, id);
    }
  };

  const machineTokenOf = async (account: TrackedAccount): Promise<string> => {
    account.machineToken ??= await makeMachineToken(account);
    return account.machineToken.token;
  };

  const expiredMachineTokenOf = async (account: TrackedAccount): Promise<string> => {
    if (account.expiredMachineToken === undefined) {
      account.expiredMachineToken = (await makeMachineToken(account, 1)).token;
      server.clock.advanceSeconds(DAY_SECONDS + 1);
    }
    return account.expiredMachineToken;
  };

  const revokedMachineTokenOf = async (account: TrackedAccount): Promise<string> => {
    if (account.revokedMachineToken === undefined) {
      const made = await makeMachineToken(account);
      await revokeMachineToken(account, made.id);
      account.revokedMachineToken = made.token;
    }
    return account.revokedMachineToken;
  };

  /** A two-factor session of the account's current session key, signed out (revoked at logout). */
  const revokedSessionOf = async (account: TrackedAccount): Promise<string> => {
    const cached = account.revokedSession;
    if (cached !== undefined && cached.sid === account.sid && nowSeconds() - cached.iat < REVOKED_REUSE_SECONDS) {
      return cached.token;
    }
    const iat = nowSeconds();
    const token = sign(account, TWO_FACTORS, iat);
    expectOk(await send({ path: '/api/auth/logout', token }), `sign out ${account.username}`);
    account.revokedSession = { token, sid: account.sid ?? '', iat };
    return token;
  };

  /** What a request from `account` carries for `credential`. */
  const materialOf = async (account: TrackedAccount, credential: Credential): Promise<CredentialMaterial> => {
    switch (credential.carrier) {
      case 'none':
        return {};
      case 'cookie': {
        const token = sign(account, credential.amr);
        const site = credential.isCrossSite === true
          ? { headers: { 'sec-fetch-site': 'cross-site' } }
          : credential.isOnAppOrigin === true ? { headers: { host: APP_HOST } } : {};
        return { cookie: token, sessionToken: token, ...site };
      }
      case 'url': {
        const token = sign(account, credential.amr);
        return { urlToken: token, sessionToken: token };
      }
      case 'machine': {
        const token = await machineTokenOf(account);
        const basic = Buffer.from(`${account.username}:${token}`).toString('base64');
        return { authorization: credential.scheme === 'Bearer' ? `Bearer ${token}` : `Basic ${basic}` };
      }
      case 'dead session': {
        // Issued eight days ago for a seven-day session: expired a day ago.
        const cookie = credential.why === 'revoked'
          ? await revokedSessionOf(account)
          : sign(account, TWO_FACTORS, nowSeconds() - TOKEN_TTL_SECONDS - DAY_SECONDS);
        if (credential.withLiveUrlToken !== true) return { cookie };
        const urlToken = sign(account, TWO_FACTORS);
        return { cookie, urlToken, sessionToken: urlToken };
      }
      case 'dead machine token': {
        const token = credential.why === 'expired' ? await expiredMachineTokenOf(account) : await revokedMachineTokenOf(account);
        return { authorization: `Bearer ${token}` };
      }
    }
  };

  return {
    server,
    root,
    send,
    sign,
    fixtureSession,
    register,
    ensure,
    nextCode,
    noteSession,
    noteTotpConfirmed,
    notePasswordChanged,
    beginTotp,
    newRegistration,
    machineTokenOf,
    makeMachineToken,
    materialOf,
    addPasskey,
    close: bare.close,
  };
}
