// docs/contract/links-and-sessions.md "What ends with a session": what an app got through a session
// ends with it, for good, before its record goes (session-records.ts `whenEnding`). A sign-in past the
// 64-session limit ends the account's oldest session; two sign-ins at 63 both counted on the same
// room, and the second ended the oldest without telling anyone first: its record went, then the
// listeners ran. A crash or a failed write of the grants file between the two left a refresh token
// whose session had ended, and it worked again once that session's cookie would have expired.
//
// In process, on the session records themselves: over HTTP the two sign-ins' password hashes finish
// in an order no test can fix, while here both sign-ins are begun in the same turn, as two hashes
// finishing together begin them.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PASSWORD_ONLY } from '../../src/auth/amr.js';
import { hashPassword } from '../../src/auth/password.js';
import { openSessionRecords, type SessionRecords } from '../../src/auth/session-records.js';
import { createLogger } from '../../src/log/logger.js';
import { addUser, newAccount } from '../../src/store/account-rules.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { MAX_SESSIONS_PER_ACCOUNT } from '../../src/store/session-file.js';
import { openUserStore, type UserStore } from '../../src/store/users.js';
import { FEATURE_FIELDS } from '../../src/features.js';

const START = 1_800_000_000;
const TTL = 7 * 86_400;
const sink = { write: () => undefined };
const logger = createLogger({ level: 'silent', format: 'json', stdout: sink, stderr: sink });

describe('two sign-ins at the session limit', () => {
  const dirs: string[] = [];
  let hash = '';
  before(async () => {
    hash = await hashPassword('x', { N: 1024, r: 8, p: 1 });
  });
  after(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** Alice with one session short of the limit, the oldest first in `ids`. */
  async function fullAccount(): Promise<{ users: UserStore; records: SessionRecords; ids: string[]; signIn(): ReturnType<SessionRecords['begin']> }> {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-limit-race-'));
    dirs.push(dir);
    const users = await openUserStore(dir, realFileSystem, FEATURE_FIELDS);
    await users.change((view) => addUser(view, newAccount({ username: 'alice', level: 5, passwordHash: hash }, START)));
    const clock = { seconds: START };
    const records = await openSessionRecords({ fs: realFileSystem, dataDir: dir, users, logger, nowSeconds: () => clock.seconds });
    const signIn = () => {
      const user = users.find('alice') ?? assert.fail('alice is gone');
      return records.begin({ user, amr: PASSWORD_ONLY, address: '192.0.2.7', browser: 'Firefox on Linux', expiresAt: clock.seconds + TTL });
    };
    const ids: string[] = [];
    for (let index = 0; index < MAX_SESSIONS_PER_ACCOUNT - 1; index++) {
      clock.seconds = START + index;
      ids.push((await signIn()).id);
    }
    clock.seconds = START + 1000;
    return { users, records, ids, signIn };
  }

  it('tells the listeners of the session it ends while its record is still there', async () => {
    const { records, ids, signIn } = await fullAccount();
    const heard: Array<{ id: string; isListed: boolean }> = [];
    records.whenEnding(async (ending) => {
      for (const id of ending) heard.push({ id, isListed: records.liveOf('alice').some((record) => record.id === id) });
    });
    const [first, second] = await Promise.all([signIn(), signIn()]);
    const ended = [...first.ended, ...second.ended].map((record) => record.id);
    assert.deepEqual(ended, [ids[0]], 'the two sign-ins end the oldest session, once');
    assert.ok(heard.some((entry) => entry.id === ids[0]), 'the listeners heard of it');
    assert.deepEqual(heard.filter((entry) => !entry.isListed), [], 'no listener heard of a session whose record had already gone');
    assert.equal(records.liveOf('alice').length, MAX_SESSIONS_PER_ACCOUNT);
  });

  it('keeps the oldest session when what was got through it cannot be ended', async () => {
    const { users, records, ids, signIn } = await fullAccount();
    records.whenEnding(async (ending) => {
      if (ending.has(ids[0] ?? '')) throw new Error('the grants could not be written');
    });
    const outcomes = await Promise.allSettled([signIn(), signIn()]);
    assert.ok(outcomes.some((outcome) => outcome.status === 'rejected'), 'the sign-in that needed the room failed');
    const key = users.find('alice')?.sessionKey ?? '';
    assert.equal(records.isOpen(ids[0] ?? '', 'alice', key), true, 'the oldest session did not end, since its grants did not');
    assert.ok(records.liveOf('alice').length <= MAX_SESSIONS_PER_ACCOUNT);
  });
});
