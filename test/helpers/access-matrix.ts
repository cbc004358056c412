// The access matrix: every row of the access table (src/auth/access.ts) x every credential kind x every
// account state, each a test of its own, over real HTTP against the real server. The answer each cell
// expects is what the table promises (test/helpers/access-model.ts, from the row's fields); where the
// judge lets the request through, it is the handler's own answer to the row's fixture
// (test/helpers/access-fixtures.ts), made so that it can succeed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACCESS, ACTIONS, type Action } from '../../src/auth/access.js';
import { assertError } from './api.js';
import {
  CREDENTIALS, FACTOR_STATES, promised, type Cell, type Counted, type Credential, type FactorState, type Persona, type Settings,
} from './access-model.js';
import {
  FIXTURES, type AccountRun, type AccountVariant, type BareVariant, type Expected, type Prepared,
} from './access-fixtures.js';
import { openBareServer, openWorld, type CredentialMaterial, type TrackedAccount, type World } from './access-world.js';
import type { RequestOptions } from './server.js';

const FIXTURES_FILE = 'test/helpers/access-fixtures.ts';

/** Every action with a fixture, in the table's order. */
function actionsWithFixtures(): Action[] {
  return ACTIONS.filter((action) => FIXTURES[action] !== undefined);
}

/** What to write where, for a row the matrix cannot try yet. */
export function missingFixtureMessage(action: Action): string {
  const row = ACCESS[action];
  return `the access row ${action} (${row.method} ${row.path}) has no fixture, so the access matrix cannot try it: ` +
    `add \`${action}: { variants: [...] }\` to FIXTURES in ${FIXTURES_FILE}: a request that succeeds for the account ` +
    `when the judge lets it through (prepare there what the handler needs, as confirmTotp begins a set-up and ` +
    `addPasskey registers a software authenticator), the handler's answer then, \`after\` to keep the tracked ` +
    `accounts true to what it changed, and \`namesAccount: true\` if its path names an account or an account's ` +
    `token or passkey. A row served only under a setting needs its world in test/helpers/access-matrix.ts.`;
}

/** Adds the credential the cell names to the fixture's request. */
function withCredential(options: RequestOptions, material: CredentialMaterial): RequestOptions {
  const { cookie, urlToken, authorization } = material;
  let path = options.path;
  if (urlToken !== undefined) path += `${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(urlToken)}`;
  const headers = { ...options.headers, ...material.headers, ...(authorization === undefined ? {} : { authorization }) };
  return { ...options, path, headers, ...(cookie === undefined ? {} : { token: cookie }) };
}

/** The answer the table promises in `cell`: the judge's refusal, or the fixture's answer. */
function expectedIn<R>(action: Action, cell: Cell, answer: (caller: Counted | undefined) => Expected<R>): Expected<R> {
  const verdict = promised(ACCESS[action], cell);
  if (verdict.kind === 'admitted') return answer(verdict.caller);
  return { summary: `${verdict.status} ${verdict.code}`, check: (res) => assertError(res, verdict.status, verdict.code) };
}

/** The accounts a world's cells ask from. */
interface Cast {
  readonly world: () => World;
  readonly owner: () => TrackedAccount;
  changee(): Promise<TrackedAccount>;
}

function defineAccountCell(
  cast: Cast,
  settings: Settings,
  caller: () => Promise<TrackedAccount>,
  target: { readonly action: Action; readonly variant: AccountVariant; readonly isSelf: boolean },
  credential: Credential,
  factors: FactorState,
  persona: Persona,
): void {
  const { action, variant, isSelf } = target;
  const cell: Cell = { settings, credential, account: { factors, persona }, password: variant.password, asks: variant.asks };
  const expected = expectedIn(action, cell, (counted) => variant.answer(cell, counted));
  it(`${action}${variant.label} x ${credential.name} x ${factors}, ${persona}: ${expected.summary}`, async () => {
    const world = cast.world();
    const account = await caller();
    await world.ensure(account, factors);
    // The credential's machine tokens are made first (an expired one moves the clock on), the fixture's
    // preparation next (adding a passkey ends the account's other sessions), the session tokens last:
    // so each credential is what the cell says when the request goes out.
    await world.materialOf(account, credential);
    const setting = { world, caller: account, factors, isSelf, owner: cast.owner, changee: cast.changee };
    const prepared: Prepared = await variant.request(setting);
    const material = await world.materialOf(account, credential);
    const run: AccountRun = { ...setting, material };
    const res = await world.send(withCredential(prepared.options, material));
    prepared.after?.(res);
    try {
      await expected.check(res, run);
    } catch (error) {
      // Whatever the server did instead, the next cell learns the account's session key anew.
      account.sid = undefined;
      throw error;
    }
  });
}

const accountVariantsOf = (action: Action): AccountVariant[] =>
  (FIXTURES[action]?.variants ?? []).filter((variant): variant is AccountVariant => variant.world === 'with accounts');

/** `value`, once the world's `before` has set it. */
function started<T>(value: T | undefined): T {
  if (value === undefined) throw new TypeError('the world starts before its cells run');
  return value;
}

/** A world's accounts: each made at the first cell that asks from it, then kept by the world's tracking. */
function castOf(getWorld: () => World, getOwner: () => TrackedAccount) {
  const accounts = new Map<string, TrackedAccount>();
  let changee: TrackedAccount | undefined;
  return {
    world: getWorld,
    owner: getOwner,
    async changee(): Promise<TrackedAccount> {
      const world = getWorld();
      if (changee === undefined || !changee.exists) changee = await world.register(world.root, 5, 'changee');
      return changee;
    },
    account: (name: string, level: number) => async (): Promise<TrackedAccount> => {
      let account = accounts.get(name);
      if (account === undefined) {
        const world = getWorld();
        account = await world.register(world.root, level, name.replaceAll(' ', '-'));
        accounts.set(name, account);
      }
      return account;
    },
  };
}

function settingsEnv(settings: Settings): Record<string, string> {
  return settings.isTwoFactorRequiredOfAdministrators ? { GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true' } : {};
}

function settingsName(settings: Settings): string {
  return settings.isTwoFactorRequiredOfAdministrators ? ' under --require-mfa-for-admins' : '';
}

/**
 * Users and administrators (never the last one: root is another) in each factor state. A user asks
 * about its own account, and where a path names an account about another's; an administrator about another's.
 */
function describeUsersAndAdministrators(settings: Settings): void {
  describe(`access matrix${settingsName(settings)}: users and administrators`, () => {
    let world: World | undefined;
    let owner: TrackedAccount | undefined;
    const cast = castOf(() => started(world), () => started(owner));
    before(async () => {
      world = await openWorld(settingsEnv(settings));
      owner = await world.register(world.root, 5, 'owner');
      await world.ensure(owner, 'passkey only');
      await world.machineTokenOf(owner);
    });
    after(() => world?.close());
    for (const factors of FACTOR_STATES) {
      for (const level of [5, 10]) {
        const caller = cast.account(`${level === 10 ? 'administrator' : 'user'} ${factors}`, level);
        for (const action of actionsWithFixtures()) {
          const namesAccount = FIXTURES[action]?.namesAccount === true;
          for (const variant of accountVariantsOf(action)) {
            const personas: Array<{ persona: Persona; isSelf: boolean }> = level === 10
              ? [{ persona: 'administrator', isSelf: !namesAccount }]
              : [{ persona: 'self', isSelf: true }, ...(namesAccount ? [{ persona: 'another user' as const, isSelf: false }] : [])];
            for (const { persona, isSelf } of personas) {
              for (const credential of CREDENTIALS) {
                defineAccountCell(cast, settings, caller, { action, variant, isSelf }, credential, factors, persona);
              }
            }
          }
        }
      }
    }
  });
}

/** The only administrator, asking about its own account, in each factor state in turn. */
function describeLastAdministrator(settings: Settings): void {
  describe(`access matrix${settingsName(settings)}: the last administrator`, () => {
    let world: World | undefined;
    const cast: Cast = {
      world: () => started(world),
      owner: () => {
        throw new TypeError('the last administrator asks only about its own account');
      },
      changee: () => Promise.reject(new TypeError('the last administrator asks only about its own account')),
    };
    before(async () => {
      world = await openWorld(settingsEnv(settings));
    });
    after(() => world?.close());
    const caller = async (): Promise<TrackedAccount> => started(world).root;
    for (const factors of FACTOR_STATES) {
      for (const action of actionsWithFixtures()) {
        for (const variant of accountVariantsOf(action)) {
          for (const credential of CREDENTIALS) {
            defineAccountCell(cast, settings, caller, { action, variant, isSelf: true }, credential, factors, 'last administrator');
          }
        }
      }
    }
  });
}

/** Rows served where no account exists: before the first registration, and with `--auth none`. */
function describeWithoutAccounts(settings: Settings): void {
  const none = CREDENTIALS[0];
  if (none?.carrier !== 'none') throw new TypeError('the first credential kind is none');
  for (const kind of ['no account yet', '--auth none'] as const) {
    describe(`access matrix: ${kind}`, () => {
      const env = kind === '--auth none' ? { GATEHOUSE_AUTH: 'none' } : {};
      for (const action of actionsWithFixtures()) {
        const variants = (FIXTURES[action]?.variants ?? []).filter((variant): variant is BareVariant => variant.world === kind);
        for (const variant of variants) {
          const cell: Cell = { settings, credential: none, account: undefined, password: variant.password, asks: variant.asks };
          const expected = expectedIn(action, cell, (counted) => variant.answer(cell, counted));
          it(`${action}${variant.label} x none x ${kind}${kind === '--auth none' ? ', from loopback' : ''}: ${expected.summary}`, async () => {
            const server = await openBareServer(env);
            try {
              const run = { server, material: {} };
              const res = await server.send(variant.request(run).options);
              await expected.check(res, run);
            } finally {
              await server.close();
            }
          });
        }
      }
    });
  }
}

/** Defines the whole matrix under `settings`; the rows without a fixture fail first. */
export function defineAccessMatrix(settings: Settings): void {
  describe(`access matrix${settingsName(settings)}: every row has a fixture`, () => {
    for (const action of ACTIONS) {
      it(action, () => assert.ok(FIXTURES[action] !== undefined, missingFixtureMessage(action)));
    }
  });
  describeUsersAndAdministrators(settings);
  describeLastAdministrator(settings);
  if (!settings.isTwoFactorRequiredOfAdministrators) describeWithoutAccounts(settings);
}
