// Graceful stop of the BUILT service: SIGTERM or SIGINT while a slow request (a
// register hashing at a realistic scrypt cost) is in flight lets it finish with 200 and its user
// reach the disk; new connections are refused from the signal on; the process exits 0 and
// removes its lock. Nothing is written once the lock is released.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { sendRequest } from '../helpers/server.js';
import { spawnService, killAllChildren, removeTempDirs, serveArgs, tempDir } from '../helpers/process.js';

const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' };
after(async () => {
  await killAllChildren();
  await removeTempDirs();
});

const dataDir = (): Promise<string> => tempDir('gatehouse-stop-');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One request on `agent` (keep-alive), resolving with status and text. */
function requestOn(agent: Agent, port: number, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function usernamesOnDisk(dir: string): Promise<string[]> {
  const document = JSON.parse(await readFile(join(dir, 'users.json'), 'utf8')) as { users: Array<{ username: string }> };
  return document.users.map((user) => user.username);
}

describe('graceful stop (built service)', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal}, finishes the slow request in flight, refuses new connections, writes the user and exits 0`, { timeout: 60_000 }, async () => {
      const dir = await dataDir();
      // A realistic cost: one hash takes a noticeable time (and 64 MiB).
      const service = await spawnService({ args: serveArgs(dir), env: { GATEHOUSE_SCRYPT: '65536,8,1', GATEHOUSE_HASH_CONCURRENCY: '1' } });

      const health = await sendRequest(service.port, { path: '/healthz' });
      assert.equal(health.status, 200);
      assert.deepEqual(health.json, { status: 'ok' });

      // The slow request goes on the connection that just answered /healthz, so it is surely
      // accepted (not still in the listen backlog) when the signal arrives.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const warm = await requestOn(agent, service.port, 'GET', '/healthz');
      assert.equal(warm.status, 200);
      let respondedAt = 0;
      const slow = requestOn(agent, service.port, 'POST', '/api/auth/register', { username: 'slow', password: 'a realistic password', client: CLIENT, level: 10 }).then((res) => {
        respondedAt = Date.now();
        return res;
      });
      await sleep(40);
      assert.equal(respondedAt, 0, 'the register finished before the signal: the test cannot show anything');
      service.child.kill(signal);
      await service.waitForOutput(/"msg":"stopping"/);
      const stoppingSeenAt = Date.now();

      // New connections are refused from now on (the listening socket is closed).
      await assert.rejects(sendRequest(service.port, { path: '/healthz' }), (error: unknown) => (error as { code?: unknown }).code === 'ECONNREFUSED');

      const res = await slow;
      agent.destroy();
      assert.equal(res.status, 200, res.text);
      assert.ok(respondedAt >= stoppingSeenAt, 'the register should still have been running when the service began to stop');
      assert.deepEqual(await service.waitForExit(), { code: 0, signal: null }, service.output());
      assert.deepEqual(await usernamesOnDisk(dir), ['slow']);
      assert.equal(existsSync(join(dir, 'gatehouse.lock')), false, 'the lock should be released');
    });
  }

  // When the shutdown timeout cuts a request short, its handler still runs on (the hash
  // finishes) and its change must not be written after the lock is released: a new server may
  // already own the directory, and this stale writer would overwrite its changes.
  it('writes nothing after it has released the lock, even when the shutdown timeout cut a request short', { timeout: 60_000 }, async () => {
    const dir = await dataDir();
    const service = await spawnService({ args: serveArgs(dir), env: { GATEHOUSE_SCRYPT: '131072,8,1', GATEHOUSE_HASH_CONCURRENCY: '1', GATEHOUSE_SHUTDOWN_TIMEOUT: '0' } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    assert.equal((await requestOn(agent, service.port, 'GET', '/healthz')).status, 200);
    const slow = requestOn(agent, service.port, 'POST', '/api/auth/register', { username: 'cut-short', password: 'a realistic password', client: CLIENT, level: 10 }).then(
      (res) => res.status,
      (error: unknown) => (error as { code?: string }).code ?? 'error',
    );
    await sleep(40);
    service.child.kill('SIGTERM');
    const stoppedLine = await service.waitForOutput(/"msg":"stopped"/);
    const releasedAt = Date.parse((JSON.parse(stoppedLine) as { time: string }).time);
    const answer = await slow;
    agent.destroy();
    assert.deepEqual(await service.waitForExit(), { code: 0, signal: null });
    const usersPath = join(dir, 'users.json');
    if (existsSync(usersPath)) {
      const { mtimeMs } = await stat(usersPath);
      assert.ok(
        mtimeMs <= releasedAt + 5,
        `users.json was written ${Math.round(mtimeMs - releasedAt)} ms after the lock was released ("stopped"); the request was answered ${String(answer)}`,
      );
    }
  });
});

describe('the built service dying on an uncaught exception', () => {
  it('still writes the log lines it had batched (the request just answered)', async () => {
    const dir = await dataDir();
    // Loaded before the service: SIGUSR2 becomes an uncaught exception, a crash on demand.
    const crash = join(await tempDir('gatehouse-crash-'), 'crash-on-usr2.mjs');
    await writeFile(crash, "process.on('SIGUSR2', () => { throw new Error('crash on demand'); });\n");
    const service = await spawnService({ args: serveArgs(dir), env: { NODE_OPTIONS: `--import=${pathToFileURL(crash).href}` } });
    const res = await sendRequest(service.port, { path: '/api/auth/verify' });
    assert.equal(res.status, 200);
    // Sooner than the logger's 10 ms batch: the request line is still waiting to be written.
    service.child.kill('SIGUSR2');
    const exit = await service.waitForExit();
    assert.equal(exit.code, 1, service.output());
    assert.match(service.stderr(), /crash on demand/);
    const requestLines = service.stdout().split('\n').filter((line) => line.includes('"msg":"request"') && line.includes('/api/auth/verify'));
    assert.equal(requestLines.length, 1, service.output());
  });
});
