import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PASSWORD_AND_CODE, PASSWORD_ONLY } from '../../src/auth/amr.js';
import { hashPassword } from '../../src/auth/password.js';
import { LAST_SEEN_RESOLUTION_SECONDS, openSessionRecords, type SessionRecords } from '../../src/auth/session-records.js';
import { StoreWriteFailed } from '../../src/errors.js';
import { createLogger } from '../../src/log/logger.js';
import { addUser, newAccount, removeUser, withNewSessions } from '../../src/store/account-rules.js';
import { DocumentCorrupt } from '../../src/store/document-store.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';
import { MAX_SESSIONS_PER_ACCOUNT, SESSIONS_FILE } from '../../src/store/session-file.js';
import { openUserStore, type StoredUser, type UserStore } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';
import { faultyFileSystem, injected } from '../helpers/faulty-file-system.js';

const START = 1_800_000_000;
const TTL = 7 * 86_400;
const sink = { write: () => undefined };
const logger = createLogger({ level: 'silent', format: 'json', stdout: sink, stderr: sink });

let HASH = '';
before(async () => {
  HASH = await hashPassword('x', { N: 1024, r: 8, p: 1 });
});

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

interface Setup {
  dir: string;
  users: UserStore;
  records: SessionRecords;
  clock: { seconds: number };
  open(fs?: StoreFileSystem): Promise<SessionRecords>;
  user(name: string): StoredUser;
}

async function setUp(names: readonly string[] = ['alice', 'bob'], fs: StoreFileSystem = realFileSystem): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-sessions-'));
  dirs.push(dir);
  const users = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
  for (const username of names) {
    await users.change((view) => addUser(view, newAccount({ username, level: 5, passwordHash: HASH }, START)));
  }
  const clock = { seconds: START };
  const open = (other: StoreFileSystem = realFileSystem) =>
    openSessionRecords({ fs: other, dataDir: dir, users, logger, nowSeconds: () => clock.seconds });
  const user = (name: string): StoredUser => {
    const found = users.find(name);
    assert.ok(found !== undefined);
    return found;
  };
  return { dir, users, records: await open(fs), clock, open, user };
}

const signIn = (setup: Setup, name: string, overrides: { address?: string; browser?: string } = {}) =>
  setup.records.begin({
    user: setup.user(name),
    amr: PASSWORD_ONLY,
    address: overrides.address ?? '192.0.2.7',
    browser: overrides.browser ?? 'Firefox on Linux',
    expiresAt: setup.clock.seconds + TTL,
  });

const isOpen = (setup: Setup, name: string, id: string): boolean => setup.records.isOpen(id, name, setup.user(name).sessionKey);

describe('session records', () => {
  it('records a sign-in durably (sessions.json, 0600) and opens it by one lookup', async () => {
    const setup = await setUp();
    const { id, ended } = await signIn(setup, 'alice');
    assert.deepEqual(ended, []);
    assert.equal(isOpen(setup, 'alice', id), true);
    const document = JSON.parse(await readFile(join(setup.dir, SESSIONS_FILE), 'utf8')) as { sessions: unknown[] };
    assert.deepEqual(document.sessions, [{
      id,
      username: 'alice',
      sessionKey: setup.user('alice').sessionKey,
      createdAt: START,
      lastSeenAt: START,
      expiresAt: START + TTL,
      address: '192.0.2.7',
      browser: 'Firefox on Linux',
      amr: ['pwd'],
    }]);
    assert.equal((await stat(join(setup.dir, SESSIONS_FILE))).mode & 0o777, 0o600);
    const reopened = await setup.open();
    assert.equal(reopened.isOpen(id, 'alice', setup.user('alice').sessionKey), true);
  });

  it('opens a session only for its own account and session key, never an unknown id', async () => {
    const setup = await setUp();
    const { id } = await signIn(setup, 'alice');
    assert.equal(setup.records.isOpen(id, 'bob', setup.user('alice').sessionKey), false);
    assert.equal(setup.records.isOpen(id, 'alice', setup.user('bob').sessionKey), false);
    assert.equal(setup.records.isOpen('AAAAAAAAAAAAAAAAAAAAAA', 'alice', setup.user('alice').sessionKey), false);
    assert.equal(setup.records.isOpen('__proto__', 'alice', setup.user('alice').sessionKey), false);
  });

  it('ends a session: refused as soon as end() resolves, and after a restart; ending it again finds nothing', async () => {
    const setup = await setUp();
    const first = await signIn(setup, 'alice');
    const second = await signIn(setup, 'alice');
    assert.equal(await setup.records.end('alice', first.id), true);
    assert.equal(isOpen(setup, 'alice', first.id), false);
    assert.equal(isOpen(setup, 'alice', second.id), true);
    const reopened = await setup.open();
    assert.equal(reopened.isOpen(first.id, 'alice', setup.user('alice').sessionKey), false);
    assert.equal(reopened.isOpen(second.id, 'alice', setup.user('alice').sessionKey), true);
    assert.equal(await setup.records.end('alice', first.id), false);
    assert.equal(await setup.records.end('bob', second.id), false, 'another account ended alice\'s session');
    assert.equal(isOpen(setup, 'alice', second.id), true);
  });

  it('lists only the live sessions of an account: a credential change, expiry or deletion ends them', async () => {
    const setup = await setUp(['alice', 'bob', 'carol']);
    const alice = await signIn(setup, 'alice');
    await signIn(setup, 'bob');
    const carol = await signIn(setup, 'carol');
    assert.deepEqual(setup.records.liveOf('alice').map((record) => record.id), [alice.id]);
    await setup.users.change((view) => view.set(withNewSessions(setup.user('alice'), START)));
    assert.deepEqual(setup.records.liveOf('alice'), []);
    setup.clock.seconds = START + TTL;
    assert.deepEqual(setup.records.liveOf('bob'), []);
    setup.clock.seconds = START;
    await setup.users.change((view) => removeUser(view, 'carol'));
    assert.deepEqual(setup.records.liveOf('carol'), []);
    // The next write drops what no longer opens anything.
    setup.clock.seconds = START + TTL;
    await setup.users.change((view) => addUser(view, newAccount({ username: 'dave', level: 5, passwordHash: HASH }, START)));
    const dave = await signIn(setup, 'dave');
    const document = JSON.parse(await readFile(join(setup.dir, SESSIONS_FILE), 'utf8')) as { sessions: Array<{ id: string }>; lastSignIns: Array<{ username: string }> };
    assert.deepEqual(document.sessions.map((record) => record.id), [dave.id]);
    assert.deepEqual(document.lastSignIns.map((entry) => entry.username).sort(), ['alice', 'bob', 'dave']);
    assert.equal(carol.ended.length, 0);
  });

  it(`ends the oldest sessions of an account past ${MAX_SESSIONS_PER_ACCOUNT}, and no other account's`, async () => {
    const setup = await setUp();
    const bob = await signIn(setup, 'bob');
    const ids: string[] = [];
    for (let index = 0; index < MAX_SESSIONS_PER_ACCOUNT; index++) {
      setup.clock.seconds = START + index;
      ids.push((await signIn(setup, 'alice')).id);
    }
    assert.equal(setup.records.liveOf('alice').length, MAX_SESSIONS_PER_ACCOUNT);
    setup.clock.seconds = START + 1000;
    const [newest, next] = await Promise.all([signIn(setup, 'alice'), signIn(setup, 'alice')]);
    assert.deepEqual(newest?.ended.map((record) => record.id), [ids[0]]);
    assert.deepEqual(next?.ended.map((record) => record.id), [ids[1]]);
    assert.equal(setup.records.liveOf('alice').length, MAX_SESSIONS_PER_ACCOUNT);
    assert.equal(isOpen(setup, 'alice', ids[0] ?? ''), false);
    assert.equal(isOpen(setup, 'alice', ids[2] ?? ''), true);
    assert.equal(isOpen(setup, 'bob', bob.id), true);
  });

  it(`writes lastSeenAt at most once per session per ${LAST_SEEN_RESOLUTION_SECONDS} seconds`, async () => {
    const faults = faultyFileSystem();
    const setup = await setUp(['alice'], faults.fs);
    const { id } = await signIn(setup, 'alice');
    const writes = (): number => faults.calls.filter((call) => call.startsWith('rename')).length;
    const before = writes();
    for (let second = 0; second < LAST_SEEN_RESOLUTION_SECONDS; second += 60) {
      setup.clock.seconds = START + second;
      assert.equal(isOpen(setup, 'alice', id), true);
    }
    await setup.records.close();
    assert.equal(writes(), before, 'a session seen within the hour was written');
    const records = await setup.open(faults.fs);
    setup.clock.seconds = START + LAST_SEEN_RESOLUTION_SECONDS;
    for (let repeat = 0; repeat < 100; repeat++) assert.equal(records.isOpen(id, 'alice', setup.user('alice').sessionKey), true);
    await records.close();
    assert.equal(writes(), before + 1);
    const [record] = (await setup.open()).liveOf('alice');
    assert.equal(record?.lastSeenAt, START + LAST_SEEN_RESOLUTION_SECONDS);
  });

  it('carries a session over its account\'s new session key, with its new amr and expiry, keeping its id', async () => {
    const setup = await setUp();
    const { id } = await signIn(setup, 'alice');
    const fromSessionKey = setup.user('alice').sessionKey;
    await setup.users.change((view) => view.set(withNewSessions(setup.user('alice'), START)));
    const { sessionKey } = setup.user('alice');
    const carried = { id, username: 'alice', fromSessionKey, sessionKey, amr: PASSWORD_AND_CODE, expiresAt: START + 2 * TTL };
    assert.equal(await setup.records.carryOver(carried), true);
    assert.equal(isOpen(setup, 'alice', id), true);
    assert.equal(setup.records.isOpen(id, 'alice', fromSessionKey), false);
    assert.deepEqual(setup.records.liveOf('alice').map((record) => [record.id, record.amr, record.expiresAt]), [[id, ['pwd', 'otp'], START + 2 * TTL]]);
    assert.equal(await setup.records.carryOver({ ...carried, id: 'AAAAAAAAAAAAAAAAAAAAAA' }), false);
    await setup.records.end('alice', id);
    assert.equal(await setup.records.carryOver({ ...carried, fromSessionKey: sessionKey }), false);
  });

  it('remembers each account\'s last sign-in', async () => {
    const setup = await setUp();
    assert.equal(setup.records.lastSignInOf('alice'), undefined);
    await signIn(setup, 'alice');
    setup.clock.seconds = START + 50;
    await signIn(setup, 'alice');
    assert.equal(setup.records.lastSignInOf('alice'), START + 50);
    assert.equal((await setup.open()).lastSignInOf('alice'), START + 50);
  });

  it('keeps control characters and long text out of the stored address', async () => {
    const setup = await setUp();
    await signIn(setup, 'alice', { address: `evil\u0000\u001b[2J${'x'.repeat(100)}` });
    await signIn(setup, 'alice', { address: '' });
    const [first, second] = setup.records.liveOf('alice');
    assert.equal(first?.address, `evil??[2J${'x'.repeat(55)}`);
    assert.equal(second?.address, '?');
  });

  it('refuses to end a session when the write fails, and the session stays open', async () => {
    const faults = faultyFileSystem();
    const setup = await setUp(['alice'], faults.fs);
    const { id } = await signIn(setup, 'alice');
    faults.hooks = { rename: () => { throw injected('EIO'); } };
    await assert.rejects(setup.records.end('alice', id), StoreWriteFailed);
    assert.equal(isOpen(setup, 'alice', id), true);
    faults.hooks = {};
    assert.equal(await setup.records.end('alice', id), true);
    assert.equal(isOpen(setup, 'alice', id), false);
  });

  it('ends what was got through a session before its record goes: refused meanwhile, and still open if that fails', async () => {
    const setup = await setUp(['alice']);
    const { id } = await signIn(setup, 'alice');
    const heard: Array<{ ids: string[]; isOpenMeanwhile: boolean; isListed: boolean }> = [];
    let isFailing = true;
    setup.records.whenEnding(async (ending) => {
      heard.push({
        ids: [...ending],
        isOpenMeanwhile: isOpen(setup, 'alice', id),
        isListed: setup.records.liveOf('alice').some((record) => record.id === id),
      });
      if (isFailing) throw new Error('the grants could not be written');
    });
    await assert.rejects(setup.records.end('alice', id), /could not be written/);
    assert.equal(isOpen(setup, 'alice', id), true, 'nothing ended');
    isFailing = false;
    assert.equal(await setup.records.end('alice', id), true);
    assert.deepEqual(heard, [{ ids: [id], isOpenMeanwhile: false, isListed: true }, { ids: [id], isOpenMeanwhile: false, isListed: true }]);
    assert.equal(await setup.records.end('alice', id), false, 'a session no longer live is not heard of again');
    assert.equal(heard.length, 2);
  });

  it(`tells the listeners of the sessions a sign-in past ${MAX_SESSIONS_PER_ACCOUNT} ends, before it ends them`, async () => {
    const setup = await setUp(['alice']);
    const ids: string[] = [];
    for (let index = 0; index < MAX_SESSIONS_PER_ACCOUNT; index++) {
      setup.clock.seconds = START + index;
      ids.push((await signIn(setup, 'alice')).id);
    }
    const heard: Array<{ ids: string[]; isListed: boolean }> = [];
    setup.records.whenEnding(async (ending) => {
      heard.push({ ids: [...ending], isListed: setup.records.liveOf('alice').some((record) => record.id === ids[0]) });
    });
    setup.clock.seconds = START + 1000;
    const { ended } = await signIn(setup, 'alice');
    assert.deepEqual(ended.map((record) => record.id), [ids[0]]);
    assert.deepEqual(heard, [{ ids: [ids[0]], isListed: true }]);
  });

  it('refuses a sessions file it cannot trust', async () => {
    const setup = await setUp();
    const { id } = await signIn(setup, 'alice');
    const path = join(setup.dir, SESSIONS_FILE);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(id, 'not an id'));
    await assert.rejects(setup.open(), DocumentCorrupt);
  });
});
