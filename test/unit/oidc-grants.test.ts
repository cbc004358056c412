// Refresh token families: rotation, reuse detection ending the family, idle expiry, the caps, and the
// file surviving a restart.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { newSessionKey } from '../../src/auth/session-key.js';
import { GRANTS_FILE, openGrantStore, type NewGrant } from '../../src/oidc/grant-store.js';
import { MAX_GRANTS_PER_ACCOUNT_AND_CLIENT, REFRESH_TOKEN_IDLE_SECONDS } from '../../src/oidc/limits.js';
import { realFileSystem } from '../../src/store/file-system.js';

const NOW = 1_800_000_000;
const CLIENT = 'a'.repeat(32);
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function openStore() {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-grants-'));
  dirs.push(dir);
  return { dir, grants: await openGrantStore(realFileSystem, dir) };
}

const fields = (overrides: Partial<NewGrant> = {}): NewGrant => ({
  clientId: CLIENT, username: 'ada', sessionKey: newSessionKey(), scopes: ['openid', 'offline_access'],
  amr: ['pwd'], authTime: NOW, ...overrides,
});
const always = (): boolean => true;

describe('refresh token families', () => {
  it('rotates: each use returns a new token and the old one stops working', async () => {
    const { grants } = await openStore();
    const { token } = await grants.issue(fields(), NOW);
    assert.match(token, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    const first = await grants.refresh(token, NOW + 1, always);
    assert.ok(first.ok);
    assert.notEqual(first.token, token);
    const second = await grants.refresh(first.token, NOW + 2, always);
    assert.ok(second.ok);
  });

  it('ends the whole family when a used token comes back, so the thief and the app both lose it', async () => {
    const { grants } = await openStore();
    const { token } = await grants.issue(fields(), NOW);
    const rotated = await grants.refresh(token, NOW + 1, always);
    assert.ok(rotated.ok);
    const replay = await grants.refresh(token, NOW + 2, always);
    assert.deepEqual([replay.ok, replay.ok ? '' : replay.reason], [false, 'reused']);
    const afterwards = await grants.refresh(rotated.token, NOW + 3, always);
    assert.deepEqual([afterwards.ok, afterwards.ok ? '' : afterwards.reason], [false, 'unknown']);
  });

  it('of two refreshes racing with one token, lets one through and ends the family', async () => {
    const { grants } = await openStore();
    const { token } = await grants.issue(fields(), NOW);
    const [a, b] = await Promise.all([grants.refresh(token, NOW + 1, always), grants.refresh(token, NOW + 1, always)]);
    assert.deepEqual([a.ok, b.ok ? '' : b.reason], [true, 'reused']);
  });

  it('refuses a token the store never issued, and one with a known family id but another secret, ending that family', async () => {
    const { grants } = await openStore();
    const { token } = await grants.issue(fields(), NOW);
    const unknown = await grants.refresh(`${'Z'.repeat(22)}.${'Z'.repeat(43)}`, NOW, always);
    assert.deepEqual(unknown, { ok: false, reason: 'unknown' });
    const forged = await grants.refresh(`${token.split('.')[0]}.${'Z'.repeat(43)}`, NOW, always);
    assert.equal(forged.ok ? '' : forged.reason, 'reused');
  });

  it('ends a family idle for 30 days, and one whose account or client no longer holds', async () => {
    const { grants } = await openStore();
    const idle = await grants.issue(fields(), NOW);
    const outcome = await grants.refresh(idle.token, NOW + REFRESH_TOKEN_IDLE_SECONDS, always);
    assert.equal(outcome.ok ? '' : outcome.reason, 'expired');
    const ended = await grants.issue(fields(), NOW);
    const refused = await grants.refresh(ended.token, NOW + 1, () => false);
    assert.equal(refused.ok ? '' : refused.reason, 'ended');
    assert.equal((await grants.refresh(ended.token, NOW + 2, always)).ok, false);
  });

  it('revokes a family by its live token for its own client only', async () => {
    const { grants } = await openStore();
    const { token } = await grants.issue(fields(), NOW);
    assert.deepEqual(await grants.revoke(token, 'b'.repeat(32), NOW), { outcome: 'another client' });
    assert.deepEqual(await grants.revoke(token, CLIENT, NOW + REFRESH_TOKEN_IDLE_SECONDS), { outcome: 'unknown' }, 'idle too long');
    assert.equal((await grants.revoke(token, CLIENT, NOW)).grant?.clientId, CLIENT);
    assert.deepEqual(await grants.revoke(token, CLIENT, NOW), { outcome: 'unknown' }, 'already revoked');
    assert.equal((await grants.refresh(token, NOW, always)).ok, false);
  });

  it('ends every family of a removed client', async () => {
    const { grants } = await openStore();
    const mine = await grants.issue(fields(), NOW);
    const other = await grants.issue(fields({ clientId: 'b'.repeat(32) }), NOW);
    await grants.endClient(CLIENT);
    assert.equal((await grants.refresh(mine.token, NOW, always)).ok, false);
    assert.equal((await grants.refresh(other.token, NOW, always)).ok, true);
  });

  it(`keeps at most ${MAX_GRANTS_PER_ACCOUNT_AND_CLIENT} families per account and client, ending the oldest`, async () => {
    const { grants } = await openStore();
    const tokens: string[] = [];
    for (let i = 0; i <= MAX_GRANTS_PER_ACCOUNT_AND_CLIENT; i++) tokens.push((await grants.issue(fields(), NOW + i)).token);
    assert.equal((await grants.refresh(tokens[0] ?? '', NOW + 100, always)).ok, false);
    assert.equal((await grants.refresh(tokens[1] ?? '', NOW + 100, always)).ok, true);
  });

  it('keeps families across a restart, and only digests of their tokens on disk', async () => {
    const { dir, grants } = await openStore();
    const { token } = await grants.issue(fields(), NOW);
    await grants.close();
    const text = await readFile(join(dir, GRANTS_FILE), 'utf8');
    assert.equal(text.includes(token.split('.')[1] ?? 'x'), false);
    const reopened = await openGrantStore(realFileSystem, dir);
    assert.equal((await reopened.refresh(token, NOW + 1, always)).ok, true);
  });
});
