import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { newSessionKey } from '../../src/auth/session-key.js';
import { InvitationInvalid, ResetLinkInvalid, StoreWriteFailed, TooManyInvitations, TooManyResetLinks } from '../../src/errors.js';
import { checkLinksDocument, CLOSED_LINK_RETENTION_SECONDS, LINKS_FILE, MAX_OPEN_LINKS, type Link, type LinkProblem } from '../../src/invitations/link-file.js';
import { openLinkStore, RESET_LINK_SECONDS, type LinkStore, type MakingAdministrator } from '../../src/invitations/links.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';
import { faultyFileSystem, injected } from '../helpers/faulty-file-system.js';

const START = 1_800_000_000;
const DAY = 86_400;

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** An administrator making links: its name, its account's sub and session key. */
const ADMIN: MakingAdministrator = { username: 'admin', sub: 'a'.repeat(22), sessionKey: newSessionKey() };

async function setUp(fs: StoreFileSystem = realFileSystem) {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-links-'));
  dirs.push(dir);
  const clock = { seconds: START };
  // The ids of links that no longer stand (their maker is gone): link-standing.ts judges that from the users.
  const fallen = new Set<string>();
  const open = (other: StoreFileSystem = realFileSystem): Promise<LinkStore> =>
    openLinkStore({ fs: other, dataDir: dir, nowSeconds: () => clock.seconds, stands: (link: Link) => !fallen.has(link.id) });
  return { dir, clock, open, fallen, links: await open(fs) };
}

const openInvitations = (links: LinkStore): Link[] => links.openLinks().filter((link) => link.kind === 'invitation');

const invite = (links: LinkStore, overrides: { username?: string; days?: number } = {}) =>
  links.makeInvitation({
    username: overrides.username,
    level: 'USER',
    groups: ['media'],
    expiresAt: START + (overrides.days ?? 7) * DAY,
    createdBy: ADMIN,
  });

/** Asserts `action` throws `errorClass` with the message for `problem`. */
function assertRefused(action: () => unknown, errorClass: typeof InvitationInvalid | typeof ResetLinkInvalid, problem: LinkProblem): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof errorClass, String(error));
    assert.equal(error.message, new errorClass(problem).message);
    return true;
  });
}

describe('invitation and reset links', () => {
  it('stores only the digest of a 256-bit secret, in a 0600 file, and finds the link by its secret', async () => {
    const { dir, links, open } = await setUp();
    const made = await invite(links, { username: 'newcomer' });
    assert.match(made.secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(made.secret, 'base64url').length, 32);
    const text = await readFile(join(dir, LINKS_FILE), 'utf8');
    assert.doesNotMatch(text, new RegExp(made.secret));
    assert.equal((await stat(join(dir, LINKS_FILE))).mode & 0o777, 0o600);
    const found = links.find('invitation', made.secret);
    assert.deepEqual(
      { id: found.id, username: found.username, level: found.level, groups: found.groups, expiresAt: found.expiresAt, createdBy: found.createdBy, maker: found.maker },
      { id: made.id, username: 'newcomer', level: 'USER', groups: ['media'], expiresAt: START + 7 * DAY, createdBy: 'admin', maker: { sub: ADMIN.sub, sessionKey: ADMIN.sessionKey } },
    );
    assert.equal((await open()).find('invitation', made.secret).id, made.id);
  });

  it('says "unknown" for a secret it never made, a malformed one, and a reset link\'s secret used to join', async () => {
    const { links } = await setUp();
    const reset = await links.makeResetLink({ username: 'alice', sessionKey: newSessionKey(), createdBy: ADMIN });
    for (const secret of [randomBytes(32).toString('base64url'), '', 'short', `${reset.secret}x`, 'a'.repeat(10_000)]) {
      assertRefused(() => links.find('invitation', secret), InvitationInvalid, 'unknown');
    }
    assertRefused(() => links.find('invitation', reset.secret), InvitationInvalid, 'unknown');
    const invitation = await invite(links);
    assertRefused(() => links.find('reset', invitation.secret), ResetLinkInvalid, 'unknown');
  });

  it('says "expired" once an invitation\'s days have passed', async () => {
    const { links, clock } = await setUp();
    const made = await invite(links, { days: 1 });
    clock.seconds = START + DAY - 1;
    assert.equal(links.find('invitation', made.secret).id, made.id);
    clock.seconds = START + DAY;
    assertRefused(() => links.find('invitation', made.secret), InvitationInvalid, 'expired');
    assert.deepEqual(openInvitations(links), []);
  });

  it('says "withdrawn" after a withdrawal, durably, and withdraws only once', async () => {
    const { links, open } = await setUp();
    const made = await invite(links);
    assert.equal(await links.withdraw(made.id), true);
    assertRefused(() => links.find('invitation', made.secret), InvitationInvalid, 'withdrawn');
    assert.equal(await links.withdraw(made.id), false);
    const reopened = await open();
    assertRefused(() => reopened.find('invitation', made.secret), InvitationInvalid, 'withdrawn');
  });

  it('lets exactly one of many parallel claims spend a link; the others are told it was used', async () => {
    const { links, open } = await setUp();
    const made = await invite(links);
    const link = links.find('invitation', made.secret);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => links.claim(link)));
    assert.equal(results.filter((result) => result.status === 'fulfilled').length, 1);
    for (const result of results) {
      if (result.status === 'rejected') {
        assert.ok(result.reason instanceof InvitationInvalid);
        assert.equal(result.reason.message, new InvitationInvalid('spent').message);
      }
    }
    assertRefused(() => links.find('invitation', made.secret), InvitationInvalid, 'spent');
    const reopened = await open();
    assertRefused(() => reopened.find('invitation', made.secret), InvitationInvalid, 'spent');
  });

  it('keeps a link open when the claim is refused inside the change, or released after it', async () => {
    const { links } = await setUp();
    const made = await invite(links);
    const link = links.find('invitation', made.secret);
    class Taken extends Error {}
    await assert.rejects(links.claim(link, () => {
      throw new Taken();
    }), Taken);
    assert.equal(links.find('invitation', made.secret).id, made.id);
    await links.claim(link);
    await links.release(link);
    assert.equal(links.find('invitation', made.secret).id, made.id);
  });

  it('does not spend a link when the write fails', async () => {
    const faults = faultyFileSystem();
    const { links } = await setUp(faults.fs);
    const made = await invite(links);
    const link = links.find('invitation', made.secret);
    faults.hooks = { rename: () => { throw injected('ENOSPC'); } };
    await assert.rejects(links.claim(link), StoreWriteFailed);
    faults.hooks = {};
    assert.equal(links.find('invitation', made.secret).id, made.id);
  });

  it(`holds at most ${MAX_OPEN_LINKS} open invitations; withdrawing or expiry makes room`, async () => {
    const { links, clock } = await setUp();
    const made = [];
    for (let index = 0; index < MAX_OPEN_LINKS; index++) made.push(await invite(links, { days: index === 0 ? 1 : 7 }));
    await assert.rejects(invite(links), TooManyInvitations);
    assert.equal(openInvitations(links).length, MAX_OPEN_LINKS);
    await links.withdraw(made[1]?.id ?? '');
    await invite(links);
    await assert.rejects(invite(links), TooManyInvitations);
    clock.seconds = START + DAY;
    await invite(links);
    // Reset links are counted apart.
    await links.makeResetLink({ username: 'alice', sessionKey: newSessionKey(), createdBy: ADMIN });
  });

  it('gives a reset link 24 hours, and a new one for the same account replaces the earlier', async () => {
    const { links, clock } = await setUp();
    const sessionKey = newSessionKey();
    const first = await links.makeResetLink({ username: 'alice', sessionKey, createdBy: ADMIN });
    const other = await links.makeResetLink({ username: 'bob', sessionKey: newSessionKey(), createdBy: ADMIN });
    assert.equal(first.expiresAt, START + RESET_LINK_SECONDS);
    const second = await links.makeResetLink({ username: 'alice', sessionKey, createdBy: ADMIN });
    assertRefused(() => links.find('reset', first.secret), ResetLinkInvalid, 'replaced');
    assert.equal(links.find('reset', second.secret).username, 'alice');
    assert.equal(links.find('reset', other.secret).username, 'bob');
    clock.seconds = START + RESET_LINK_SECONDS;
    assertRefused(() => links.find('reset', second.secret), ResetLinkInvalid, 'expired');
  });

  it(`holds at most ${MAX_OPEN_LINKS} open reset links`, async () => {
    const { links } = await setUp();
    for (let index = 0; index < MAX_OPEN_LINKS; index++) {
      await links.makeResetLink({ username: `user${index}`, sessionKey: newSessionKey(), createdBy: ADMIN });
    }
    await assert.rejects(links.makeResetLink({ username: 'one-more', sessionKey: newSessionKey(), createdBy: ADMIN }), TooManyResetLinks);
  });

  it('lists reset links beside invitations, oldest first, and withdraws either by its id', async () => {
    const { links } = await setUp();
    const invitation = await invite(links);
    const reset = await links.makeResetLink({ username: 'alice', sessionKey: newSessionKey(), createdBy: ADMIN });
    assert.deepEqual(links.openLinks().map((link) => [link.id, link.kind]), [[invitation.id, 'invitation'], [reset.id, 'reset']]);
    assert.equal(await links.withdraw(reset.id), true);
    assertRefused(() => links.find('reset', reset.secret), ResetLinkInvalid, 'withdrawn');
    assert.deepEqual(links.openLinks().map((link) => link.id), [invitation.id]);
  });

  it('withdraws, for good, a link that no longer stands: refused, not listed, not withdrawn again, marked at the next link made', async () => {
    const { links, fallen, open } = await setUp();
    const invitation = await invite(links);
    const reset = await links.makeResetLink({ username: 'alice', sessionKey: newSessionKey(), createdBy: ADMIN });
    const link = links.find('invitation', invitation.secret);
    fallen.add(invitation.id);
    fallen.add(reset.id);
    assertRefused(() => links.find('invitation', invitation.secret), InvitationInvalid, 'withdrawn');
    assertRefused(() => links.find('reset', reset.secret), ResetLinkInvalid, 'withdrawn');
    await assert.rejects(links.claim(link), (error: unknown) => error instanceof InvitationInvalid && error.message === new InvitationInvalid('withdrawn').message);
    assert.deepEqual(links.openLinks(), []);
    assert.equal(await links.withdraw(invitation.id), false);
    await invite(links);
    fallen.clear();
    const reopened = await open();
    assertRefused(() => reopened.find('invitation', invitation.secret), InvitationInvalid, 'withdrawn');
    assertRefused(() => reopened.find('reset', reset.secret), ResetLinkInvalid, 'withdrawn');
  });

  it('refuses a stored link that names a maker\'s account without its name', () => {
    const link = {
      kind: 'invitation', id: 'a'.repeat(16), digest: 'b'.repeat(43), createdAt: START, expiresAt: START + DAY, level: 'USER',
      maker: { sub: ADMIN.sub, sessionKey: ADMIN.sessionKey },
    };
    assert.equal(checkLinksDocument({ format: 1, links: [link] }, '').ok, false);
    assert.equal(checkLinksDocument({ format: 1, links: [{ ...link, createdBy: 'admin' }] }, '').ok, true);
  });

  it('forgets a link no longer open once its retention after expiry has passed: then it is "unknown"', async () => {
    const { links, clock, open } = await setUp();
    const spent = await invite(links, { days: 1 });
    await links.claim(links.find('invitation', spent.secret));
    clock.seconds = START + DAY + CLOSED_LINK_RETENTION_SECONDS - 1;
    await invite(links);
    assertRefused(() => links.find('invitation', spent.secret), InvitationInvalid, 'spent');
    clock.seconds = START + DAY + CLOSED_LINK_RETENTION_SECONDS;
    await invite(links);
    assertRefused(() => links.find('invitation', spent.secret), InvitationInvalid, 'unknown');
    const reopened = await open();
    assertRefused(() => reopened.find('invitation', spent.secret), InvitationInvalid, 'unknown');
  });
});
