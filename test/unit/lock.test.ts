// The data directory lock in one process, with a short lease so nothing sleeps for
// the real 10 s: identity and staleness across hosts and PID namespaces, renewal, the holder
// that finds its lease taken over, release by nonce, and a blocked holder that stops writing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fsPromises, readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { guardWrites } from '../../src/store/data-dir.js';
import { realFileSystem } from '../../src/store/file-system.js';
import { DataDirLocked, lockDataDir, LOCK_FILE, type HolderIdentity, type LeaseTiming } from '../../src/store/lock.js';

const TIMING: LeaseTiming = { renewEveryMs: 40, expiryMs: 600, pollMs: 10 };
const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-lease-'));
  dirs.push(dir);
  return dir;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const HERE: HolderIdentity = { host: 'here', pid: 4242, bootId: 'boot-a', pidNamespace: 'pid:[1]' };
/** Another container on this machine: same kernel, its own pid 1. */
const CONTAINER_1: HolderIdentity = { host: 'c1', pid: 1, bootId: 'boot-a', pidNamespace: 'pid:[2]' };
const CONTAINER_2: HolderIdentity = { host: 'c2', pid: 1, bootId: 'boot-a', pidNamespace: 'pid:[3]' };
/** Another host sharing the volume. */
const OTHER_HOST: HolderIdentity = { host: 'far', pid: 1, bootId: 'boot-b', pidNamespace: 'pid:[2]' };

async function lockRecord(dir: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as Record<string, unknown>;
}

/** A lock file as a holder that stopped renewing left it. */
async function writeAbandonedLock(dir: string, identity: HolderIdentity, renewedAt: number, nonce = 'f'.repeat(32), renewedBootMs: number | null = bootClockMs() - (Date.now() - renewedAt)): Promise<void> {
  const record = { format: 2, nonce, purpose: 'serve', host: identity.host, pid: identity.pid, bootId: identity.bootId, pidNamespace: identity.pidNamespace, startedAt: new Date(renewedAt).toISOString(), renewedAt: new Date(renewedAt).toISOString(), renewedBootMs };
  // A name of its own per write: under load a renewing interval's writes may overlap.
  const temp = join(dir, `planted-${nonce}-${process.hrtime.bigint()}.tmp`);
  await writeFile(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(temp, join(dir, LOCK_FILE)); // whole, as a holder writes it: a watcher never reads it torn
}

/** This kernel's boot clock (CLOCK_BOOTTIME, as /proc/uptime shows it) in milliseconds. */
function bootClockMs(): number {
  return Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000);
}

describe('the data directory lock: identity and lease', () => {
  it('names its holder by nonce, host, pid, boot id, pid namespace and lease time, and renews the lease', async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE });
    const first = await lockRecord(dir);
    assert.match(String(first['nonce']), /^[0-9a-f]{32}$/);
    assert.deepEqual([first['host'], first['pid'], first['bootId'], first['pidNamespace'], first['purpose']], ['here', 4242, 'boot-a', 'pid:[1]', 'serve']);
    await sleep(TIMING.renewEveryMs * 4);
    const later = await lockRecord(dir);
    assert.equal(later['nonce'], first['nonce']);
    assert.ok(Date.parse(String(later['renewedAt'])) > Date.parse(String(first['renewedAt'])), 'the lease was renewed');
    assert.equal(lock.isHeld(), true);
    await lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  });

  it('refuses a second holder in another container (also pid 1) while the first renews, saying where it runs', async () => {
    const dir = await dataDir();
    const first = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_1 });
    const started = Date.now();
    await assert.rejects(lockDataDir(dir, { purpose: 'users passwd', timing: TIMING, identity: CONTAINER_2 }), (error: unknown) => {
      assert.ok(error instanceof DataDirLocked);
      assert.match(error.message, /host "c1", pid 1 in another PID namespace/);
      assert.match(error.message, /lease last renewed/);
      return true;
    });
    assert.ok(Date.now() - started < TIMING.expiryMs, 'a renewal proves the holder alive before its lease could expire');
    assert.equal(first.isHeld(), true);
    await first.release();
  });

  it('refuses a holder on another host sharing the volume while it renews', async () => {
    const dir = await dataDir();
    const first = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: OTHER_HOST });
    await assert.rejects(lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE }), /host "far", pid 1/);
    await first.release();
  });

  it('refuses a second lock taken in this very process', async () => {
    const dir = await dataDir();
    const first = await lockDataDir(dir, { purpose: 'serve', timing: TIMING });
    await assert.rejects(lockDataDir(dir, { purpose: 'serve', timing: TIMING }), DataDirLocked);
    await first.release();
  });

  it('takes over a lease another container stopped renewing, once it is stale, saying that it waits', async () => {
    const dir = await dataDir();
    await writeAbandonedLock(dir, CONTAINER_1, Date.now());
    const waits: string[] = [];
    const started = Date.now();
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_2, onWait: (message) => waits.push(message) });
    assert.ok(Date.now() - started >= TIMING.expiryMs * 0.9, `taken after ${Date.now() - started} ms, before the lease expired`);
    assert.equal(waits.length, 1);
    assert.match(waits[0] ?? '', /waiting up to 1 s .*host "c1", pid 1/);
    assert.equal((await lockRecord(dir))['host'], 'c2');
    await lock.release();
  });

  it('takes over a lease from another host once it has not changed for the expiry (no clock comparison)', async () => {
    const dir = await dataDir();
    // Its clock may be far ahead: a lease "renewed" in the future must still expire by watching.
    await writeAbandonedLock(dir, OTHER_HOST, Date.now() + 3_600_000);
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE });
    assert.equal((await lockRecord(dir))['host'], 'here');
    await lock.release();
  });

  it('takes over at once a lock whose holder ran in our pid namespace and is gone', async () => {
    const dir = await dataDir();
    const dead = { ...HERE, pid: 2 ** 22 - 7 }; // above any pid this machine hands out
    await writeAbandonedLock(dir, dead, Date.now());
    const waits: string[] = [];
    await (await lockDataDir(dir, { purpose: 'serve', timing: { ...TIMING, expiryMs: 60_000 }, identity: HERE, onWait: (message) => waits.push(message) })).release();
    assert.deepEqual(waits, []);
  });

  it('takes over at once a lease from this kernel older than the expiry', async () => {
    const dir = await dataDir();
    await writeAbandonedLock(dir, CONTAINER_1, Date.now() - 2 * TIMING.expiryMs);
    const waits: string[] = [];
    await (await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_2, onWait: (message) => waits.push(message) })).release();
    assert.deepEqual(waits, []);
  });

  it('a starter whose wall clock is 15 s ahead does not take over a live holder in its own pid namespace', async () => {
    const dir = await dataDir();
    // The holder: a live process (this one) in our namespace that renews; the starter poses as another pid.
    const holder = { ...HERE, pid: process.pid };
    await writeAbandonedLock(dir, holder, Date.now(), 'a'.repeat(32));
    const renewing = setInterval(() => void writeAbandonedLock(dir, holder, Date.now(), 'a'.repeat(32)), TIMING.renewEveryMs);
    try {
      const waits: string[] = [];
      await assert.rejects(lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE, now: () => Date.now() + 15_000, onWait: (message) => waits.push(message) }), DataDirLocked);
      assert.equal((await lockRecord(dir))['nonce'], 'a'.repeat(32));
    } finally {
      clearInterval(renewing);
    }
  });

  it('a starter whose wall clock is 15 s ahead does not take over a live lease of another container on this kernel (the boot clock decides)', async () => {
    const dir = await dataDir();
    await writeAbandonedLock(dir, CONTAINER_1, Date.now(), 'b'.repeat(32));
    const renewing = setInterval(() => void writeAbandonedLock(dir, CONTAINER_1, Date.now(), 'b'.repeat(32)), TIMING.renewEveryMs);
    try {
      await assert.rejects(lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_2, now: () => Date.now() + 15_000 }), DataDirLocked);
      assert.equal((await lockRecord(dir))['nonce'], 'b'.repeat(32));
    } finally {
      clearInterval(renewing);
    }
  });

  it('records the boot clock with each renewal', async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE });
    const recorded = (await lockRecord(dir))['renewedBootMs'];
    assert.equal(typeof recorded, 'number');
    assert.ok(Math.abs(Number(recorded) - bootClockMs()) < 5_000);
    await lock.release();
  });

  it('a starter that stalls after judging a lock stale never removes the lock another starter took meanwhile', async () => {
    const dir = await dataDir();
    const lockPath = join(dir, LOCK_FILE);
    await writeAbandonedLock(dir, { ...HERE, pid: 2 ** 22 - 7 }, Date.now());
    // The first starter's removal of the stale lock (whichever call does it) stalls until released.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let announceStall: () => void = () => undefined;
    const stalled = new Promise<void>((resolve) => (announceStall = resolve));
    const { unlink, rename: renameFile } = fsPromises;
    let isFirst = true;
    const stallFirst = async (path: unknown): Promise<void> => {
      if (!isFirst || String(path) !== lockPath) return;
      isFirst = false;
      announceStall();
      await released;
    };
    fsPromises.unlink = async (path) => {
      await stallFirst(path);
      return unlink(path);
    };
    fsPromises.rename = async (from, to) => {
      await stallFirst(from);
      return renameFile(from, to);
    };
    try {
      const first = lockDataDir(dir, { purpose: 'users passwd', timing: TIMING, identity: HERE });
      await stalled;
      // It stalls past STALE_TAKEOVER_MS: its takeover file is old, and another starter takes over.
      const old = new Date(Date.now() - 60_000);
      await utimes(`${lockPath}.takeover`, old, old);
      const second = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: { ...HERE, pid: process.pid } });
      const secondNonce = (await lockRecord(dir))['nonce'];
      release();
      await assert.rejects(first, DataDirLocked);
      assert.equal((await lockRecord(dir))['nonce'], secondNonce, 'the late starter removed or replaced the new holder\'s lock');
      assert.equal(second.isHeld(), true);
      await second.release();
    } finally {
      release();
      fsPromises.unlink = unlink;
      fsPromises.rename = renameFile;
    }
  });

  it('an aborted wait rejects at once with the signal\'s reason and leaves the lock it watched alone', async () => {
    const dir = await dataDir();
    await writeAbandonedLock(dir, OTHER_HOST, Date.now(), 'c'.repeat(32));
    const before = await readFile(join(dir, LOCK_FILE), 'utf8');
    const stop = new AbortController();
    const started = Date.now();
    const waiting = lockDataDir(dir, { purpose: 'serve', timing: { ...TIMING, expiryMs: 60_000 }, identity: HERE, signal: stop.signal, onWait: () => stop.abort(new Error('stop requested')) });
    await assert.rejects(waiting, /stop requested/);
    assert.ok(Date.now() - started < 30_000, 'it waited for the lease to expire');
    assert.equal(await readFile(join(dir, LOCK_FILE), 'utf8'), before);
  });

  it('a format 1 lock naming pid 1 (a killed container\'s) is judged by its age, not by init being alive', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, LOCK_FILE), '{"pid":1}\n', { mode: 0o600 });
    const old = new Date(Date.now() - 2 * TIMING.expiryMs);
    await utimes(join(dir, LOCK_FILE), old, old);
    const waits: string[] = [];
    await (await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE, onWait: (message) => waits.push(message) })).release();
    assert.deepEqual(waits, [], 'an old format 1 lock naming pid 1 is stale at once');

    await writeFile(join(dir, LOCK_FILE), '{"pid":1}\n', { mode: 0o600 });
    const started = Date.now();
    const freshWaits: string[] = [];
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE, onWait: (message) => freshWaits.push(message) });
    assert.ok(Date.now() - started >= TIMING.expiryMs * 0.9, 'a fresh one is watched for the expiry first');
    assert.match(freshWaits[0] ?? '', /pid 1\b.*taken over if it does not change/);
    await lock.release();
  });

  it('a format 1 lock naming a live pid other than 1 and ours still refuses, saying it is not taken over by itself', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, LOCK_FILE), `{"pid":${process.pid}}\n`, { mode: 0o600 });
    await assert.rejects(lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE }), (error: unknown) => {
      assert.ok(error instanceof DataDirLocked);
      assert.match(error.message, new RegExp(`format 1, naming only pid ${process.pid}\\b.*remove`));
      assert.doesNotMatch(error.message, /renewing its lease/);
      return true;
    });
  });

  it('takes over an unreadable lock file once it is older than the expiry', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, LOCK_FILE), 'not json', { mode: 0o600 });
    const old = new Date(Date.now() - 2 * TIMING.expiryMs);
    await utimes(join(dir, LOCK_FILE), old, old);
    await (await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE })).release();
  });

  it('a holder whose lease was taken over stops: lost resolves, isHeld is false, writes are refused', async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_1 });
    await writeAbandonedLock(dir, CONTAINER_2, Date.now(), 'e'.repeat(32));
    const lost = await Promise.race([lock.lost, sleep(TIMING.expiryMs * 3).then(() => undefined)]);
    assert.ok(lost !== undefined, 'the holder did not notice the takeover');
    assert.match(lost.message, /another process took the lock over: Gatehouse \(serve\) on host "c2"/);
    assert.equal(lock.isHeld(), false);
    const guarded = guardWrites(realFileSystem, lock, dir);
    await assert.rejects(async () => guarded.open(join(dir, 'users.json.tmp'), 'wx', 0o600), /lost the lock/);
    // Release compares the nonce: the other holder's file stays.
    await lock.release();
    assert.equal((await lockRecord(dir))['nonce'], 'e'.repeat(32));
  });

  it('release never removes a lock that another holder with the same pid wrote', async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir, { purpose: 'users passwd', timing: { ...TIMING, renewEveryMs: 1_000, expiryMs: 10_000 }, identity: CONTAINER_1 });
    // Another container's pid 1 replaced it between two renewals.
    await writeAbandonedLock(dir, { ...CONTAINER_2, pid: 1 }, Date.now(), 'd'.repeat(32));
    await lock.release();
    assert.equal((await lockRecord(dir))['nonce'], 'd'.repeat(32));
  });

  it('a holder blocked past its lease counts it lost before anyone may take it over, and writes nothing', async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE });
    const guarded = guardWrites(realFileSystem, lock, dir);
    const blockedUntil = Date.now() + TIMING.expiryMs - TIMING.renewEveryMs;
    while (Date.now() < blockedUntil) {
      // the event loop is stuck (a paused container, an overloaded host): no renewal runs
    }
    assert.equal(lock.isHeld(), false, 'the holder still believes a lease it has not renewed for most of the expiry');
    await assert.rejects(async () => guarded.rename(join(dir, 'a'), join(dir, 'b')), /lost the lock/);
    const lost = await Promise.race([lock.lost, sleep(TIMING.expiryMs).then(() => undefined)]);
    assert.match(lost?.message ?? '', /was not renewed for/);
    await lock.release();
    // It was no longer sure the file was its own, so it left it to go stale.
    assert.equal(existsSync(join(dir, LOCK_FILE)), true);
  });

  it('a holder whose wall clock jumped past its lease (a suspend the monotonic clock did not count) writes nothing', async () => {
    const dir = await dataDir();
    let suspendedMs = 0;
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE, now: () => Date.now() + suspendedMs });
    assert.equal(lock.isHeld(), true);
    // The system slept for an expiry: CLOCK_MONOTONIC (performance.now) did not advance, the wall clock did.
    suspendedMs = TIMING.expiryMs;
    assert.equal(lock.isHeld(), false, 'the holder trusted the monotonic clock alone after a suspend');
    await assert.rejects(async () => guardWrites(realFileSystem, lock, dir).unlink(join(dir, 'x')), /lost the lock/);
    const lost = await Promise.race([lock.lost, sleep(TIMING.expiryMs * 3).then(() => undefined)]);
    assert.match(lost?.message ?? '', /was not renewed for/);
    await lock.release();
  });

  it('a renewal that lands late over the new holder\'s lock does not stop the new holder', async () => {
    const dir = await dataDir();
    const lockPath = join(dir, LOCK_FILE);
    // The new holder is another process: its own copy of the module, with its own held locks.
    const secondProcess = (await import(new URL('../../src/store/lock.ts?second-process', import.meta.url).href)) as typeof import('../../src/store/lock.js');
    const first = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_1 });
    const firstNonce = (await lockRecord(dir))['nonce'];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { rename: renameFile } = fsPromises;
    let isArmed = true;
    // The first holder's next renewal has read its own nonce; its rename stalls (a freeze, a hung NFS server).
    fsPromises.rename = async (from, to) => {
      if (isArmed && String(to) === lockPath) {
        isArmed = false;
        await released;
      }
      return renameFile(from, to);
    };
    try {
      const second = await secondProcess.lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: CONTAINER_2 });
      const secondNonce = (await lockRecord(dir))['nonce'];
      assert.notEqual(secondNonce, firstNonce);
      release();
      await sleep(TIMING.renewEveryMs * 2);
      await Promise.race([first.lost, sleep(TIMING.expiryMs)]);
      assert.equal(first.isHeld(), false);
      await sleep(TIMING.renewEveryMs * 4);
      assert.equal(second.isHeld(), true, 'the new holder gave up when the old holder\'s late renewal overwrote its lock');
      assert.equal((await lockRecord(dir))['nonce'], secondNonce);
      await second.release();
      await first.release();
    } finally {
      release();
      fsPromises.rename = renameFile;
    }
  });

  it('the renewal timer does not keep the process alive', () => {
    const lockModule = pathToFileURL(fileURLToPath(new URL('../../src/store/lock.ts', import.meta.url))).href;
    const script = `import { lockDataDir } from ${JSON.stringify(lockModule)};
      await lockDataDir(process.argv.at(-1), { purpose: 'serve', timing: { renewEveryMs: 20, expiryMs: 600, pollMs: 10 } });
      process.stdout.write('took');`;
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-lease-'));
    dirs.push(dir);
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, '--', dir], { timeout: 20_000 });
    assert.equal(child.stdout.toString(), 'took', child.stderr.toString());
    assert.equal(child.status, 0, 'the process was kept alive by the lease timer and killed by the timeout');
  });

  it('leaves no temp file behind and creates its temp files with unpredictable names', async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir, { purpose: 'serve', timing: TIMING, identity: HERE });
    await sleep(TIMING.renewEveryMs * 3);
    await lock.release();
    assert.deepEqual(await readdir(dir), []);
  });
});

describe('the lock\'s files', () => {
  it('import one way, lock.ts -> lock-holder.ts -> lock-file.ts, with no cycle among them', () => {
    const storeDir = fileURLToPath(new URL('../../src/store/', import.meta.url));
    const files = ['lock.ts', 'lock-holder.ts', 'lock-file.ts'];
    const importsOf = (file: string): string[] =>
      [...readFileSync(join(storeDir, file), 'utf8').matchAll(/^import [^;]*? from '\.\/(lock[a-z-]*)\.js';$/gms)]
        .map((match) => `${match[1] ?? ''}.ts`);
    assert.deepEqual(Object.fromEntries(files.map((file) => [file, importsOf(file).sort()])), {
      'lock.ts': ['lock-file.ts', 'lock-holder.ts'],
      'lock-holder.ts': ['lock-file.ts'],
      'lock-file.ts': [],
    });
  });
});
