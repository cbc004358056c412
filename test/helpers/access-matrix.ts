// The access matrix: the rows of the access table (src/auth/access.ts) x the credential kinds x the
// account states, one cell of each class the policy tells apart (test/helpers/access-plan.ts says
// which and why), over real HTTP against the real server. The answer each cell expects is what the
// written policy promises (test/helpers/access-model.ts, from test/policy/access-policy.ts, never from
// the table); where the judge lets the request through, it is the handler's own answer to the row's
// fixture (test/helpers/access-fixtures.ts), made so that it can succeed. The cells of one world run
// in one test, which names every cell that failed; their number is reported apart from the tests'
// (test/helpers/tally.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { ACTIONS } from '../../src/auth/access.js';
import type { Settings } from './access-model.js';
import type { AccountRun, Prepared } from './access-fixtures.js';
import { FIXTURES } from './access-fixtures.js';
import { matrixPlan, missingFixtureMessage, type PlannedCell, type WorldName } from './access-plan.js';
import { openBareServer, openWorld, type CredentialMaterial, type TrackedAccount, type World } from './access-world.js';
import type { RequestOptions } from './server.js';
import { tallyCells } from './tally.js';

/** Adds the credential the cell names to the fixture's request. */
function withCredential(options: RequestOptions, material: CredentialMaterial): RequestOptions {
  const { cookie, urlToken, authorization } = material;
  let path = options.path;
  if (urlToken !== undefined) path += `${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(urlToken)}`;
  const headers = { ...options.headers, ...material.headers, ...(authorization === undefined ? {} : { authorization }) };
  return { ...options, path, headers, ...(cookie === undefined ? {} : { token: cookie }) };
}

/** The accounts a world's cells ask from. */
interface Cast {
  readonly world: () => World;
  readonly owner: () => TrackedAccount;
  changee(): Promise<TrackedAccount>;
  /** The caller of a cell: the user or administrator of its level and second factors, or the last administrator. */
  callerOf(planned: PlannedCell): Promise<TrackedAccount>;
}

/** Runs one cell on a world with accounts; throws when the answer is not the expected one. */
async function runAccountCell(cast: Cast, planned: PlannedCell): Promise<void> {
  const { variant, credential, factors, isSelf, expected } = planned;
  if (variant.world !== 'with accounts') throw new TypeError(`${planned.name}: not a cell of a world with accounts`);
  const world = cast.world();
  const account = await cast.callerOf(planned);
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
    await (expected.check as (res: unknown, run: AccountRun) => Promise<void> | void)(res, run);
  } catch (error) {
    // Whatever the server did instead, the next cell learns the account's session key anew.
    account.sid = undefined;
    throw error;
  }
}

/** Runs one cell on a server of its own without accounts. */
async function runBareCell(planned: PlannedCell): Promise<void> {
  const { variant, expected } = planned;
  if (variant.world === 'with accounts') throw new TypeError(`${planned.name}: not a cell of a world without accounts`);
  const server = await openBareServer(variant.world === '--auth none' ? { GATEHOUSE_AUTH: 'none' } : {});
  try {
    const run = { server, material: {} };
    const res = await server.send(variant.request(run).options);
    await (expected.check as (res: unknown, run: unknown) => Promise<void> | void)(res, run);
  } finally {
    await server.close();
  }
}

/** `value`, once the world's `before` has set it. */
function started<T>(value: T | undefined): T {
  if (value === undefined) throw new TypeError('the world starts before its cells run');
  return value;
}

/** A world's accounts: each made at the first cell that asks from it, then kept by the world's tracking. */
function castOf(getWorld: () => World, getOwner: () => TrackedAccount): Cast {
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
    async callerOf(planned: PlannedCell): Promise<TrackedAccount> {
      const world = getWorld();
      if (planned.world === 'the last administrator') return world.root;
      const name = `${planned.level === 10 ? 'administrator' : 'user'} ${planned.factors}`;
      let account = accounts.get(name);
      if (account === undefined) {
        account = await world.register(world.root, planned.level, name.replaceAll(' ', '-'));
        accounts.set(name, account);
      }
      return account;
    },
  };
}

/** Set by the mutation check (scripts/mutants.mjs): stop at the first cell that fails. */
const isFailFast = process.env['GATEHOUSE_MATRIX_FAIL_FAST'] === '1';

const eachOf = (cells: readonly PlannedCell[]): string => (cells.length === 1 ? 'its one cell' : `each of ${cells.length} cells`);

/** Runs `cells` in order and fails naming every cell whose answer was not the expected one. */
async function runCells(t: TestContext, label: string, cells: readonly PlannedCell[], run: (cell: PlannedCell) => Promise<void>): Promise<void> {
  const failures: string[] = [];
  for (const cell of cells) {
    try {
      await run(cell);
    } catch (error) {
      failures.push(`${cell.name}\n    ${String(error instanceof Error ? error.message : error).split('\n').join('\n    ')}`);
      if (isFailFast) break;
    }
  }
  tallyCells(t, label, cells.length);
  if (failures.length > 0) assert.fail(`${failures.length} of ${cells.length} cells failed:\n${failures.join('\n')}`);
}

function settingsEnv(settings: Settings): Record<string, string> {
  return settings.isTwoFactorRequiredOfAdministrators ? { GATEHOUSE_REQUIRE_MFA_FOR_ADMINS: 'true' } : {};
}

function settingsName(settings: Settings): string {
  return settings.isTwoFactorRequiredOfAdministrators ? ' under --require-mfa-for-admins' : '';
}

const cellsOf = (settings: Settings, world: WorldName): PlannedCell[] => matrixPlan().cells.filter((cell) =>
  cell.world === world && cell.settings.isTwoFactorRequiredOfAdministrators === settings.isTwoFactorRequiredOfAdministrators);

/** Users and administrators in each state of second factors (never the last administrator: root is another). */
function describeUsersAndAdministrators(settings: Settings): void {
  const cells = cellsOf(settings, 'users and administrators');
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
    it(`answers ${eachOf(cells)} as the policy says`, (t) => runCells(t, 'users and administrators', cells, (cell) => runAccountCell(cast, cell)));
  });
}

/** The only administrator, asking about its own account, in each state of second factors in turn. */
function describeLastAdministrator(settings: Settings): void {
  const cells = cellsOf(settings, 'the last administrator');
  describe(`access matrix${settingsName(settings)}: the last administrator`, () => {
    let world: World | undefined;
    const cast = castOf(() => started(world), () => {
      throw new TypeError('the last administrator asks only about its own account');
    });
    before(async () => {
      world = await openWorld(settingsEnv(settings));
    });
    after(() => world?.close());
    it(`answers ${eachOf(cells)} as the policy says`, (t) => runCells(t, 'the last administrator', cells, (cell) => runAccountCell(cast, cell)));
  });
}

/** Rows served where no account exists: before the first registration, and with `--auth none`, from loopback. */
function describeWithoutAccounts(settings: Settings): void {
  for (const world of ['no account yet', '--auth none'] as const) {
    const cells = cellsOf(settings, world);
    if (cells.length === 0) continue;
    describe(`access matrix: ${world}`, () => {
      it(`answers ${eachOf(cells)} as the policy says, on a server of its own each`, (t) => runCells(t, world, cells, runBareCell));
    });
  }
}

/** Defines the matrix under `settings`; the rows without a fixture fail first. */
export function defineAccessMatrix(settings: Settings): void {
  describe(`access matrix${settingsName(settings)}`, () => {
    it('has a fixture for every row of the table', () => {
      const missing = ACTIONS.filter((action) => FIXTURES[action] === undefined);
      assert.deepEqual(missing.map(missingFixtureMessage), []);
    });
  });
  describeUsersAndAdministrators(settings);
  describeLastAdministrator(settings);
  describeWithoutAccounts(settings);
}
