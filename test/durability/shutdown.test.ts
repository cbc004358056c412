// Stopping inside a container's 10 s: Docker and podman SIGKILL a container 10 s after
// SIGTERM, so the default shutdown timeout plus the bounded last writes end well before that,
// even when a write hangs; and a request the stop cut off is logged as not answered (status 0),
// never as the 200 node:http presets.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildConfig } from '../../src/config.js';
import { FINAL_WRITES_MS } from '../../src/lifecycle.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';
import { CLIENT_SETTINGS, startTestServer } from '../helpers/server.js';

const CONTAINER_STOP_MS = 10_000;

describe('stopping inside a container stop timeout', () => {
  it('defaults to a 5 s shutdown timeout, which with the last writes ends well inside 10 s', () => {
    const config = buildConfig(() => undefined);
    assert.equal(config.shutdownTimeoutMs, 5_000);
    assert.ok(config.shutdownTimeoutMs + FINAL_WRITES_MS <= CONTAINER_STOP_MS - 2_000, `${config.shutdownTimeoutMs} + ${FINAL_WRITES_MS} ms`);
  });

  it('finishes close() within the shutdown timeout plus FINAL_WRITES_MS when a write hangs, and logs the cut-off request as status 0', { timeout: 30_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-hang-'));
    let isHanging = false;
    // A write that never completes (a stuck network file system).
    const hanging: StoreFileSystem = { ...realFileSystem, open: (path, flags, mode) => (isHanging && flags === 'wx' ? new Promise(() => undefined) : realFileSystem.open(path, flags, mode)) };
    const server = await startTestServer({ GATEHOUSE_SHUTDOWN_TIMEOUT: '200' }, { fileSystem: hanging, dataDir });
    try {
      isHanging = true;
      const registering = server.request({ method: 'POST', path: '/api/auth/register?cookie=false', body: { username: 'stuck', password: 'pw', client: CLIENT_SETTINGS, level: 10 } }).then(
        (res) => res.status,
        () => 'cut off',
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      const isClean = await server.running.close();
      const tookMs = Date.now() - started;
      assert.equal(isClean, false, 'a hanging write is not a clean stop');
      assert.ok(tookMs <= 200 + FINAL_WRITES_MS + 1_500, `close() took ${tookMs} ms`);
      assert.equal(await registering, 'cut off');
      const lines = server.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(lines.some((line) => /writes still in flight/.test(String(line['msg']))), server.logs.join('\n'));
      const logged = lines.find((line) => line['msg'] === 'request' && line['path'] === '/api/auth/register');
      assert.ok(logged !== undefined, server.logs.join('\n'));
      assert.equal(logged['status'], 0, 'a request cut off by the stop was logged as answered');
      // A write may still land: the lock is left to go stale rather than handed on.
      assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), true);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('logs a request whose client went away before the answer as status 0', { timeout: 30_000 }, async () => {
    const server = await startTestServer({ GATEHOUSE_SCRYPT: '65536,8,1', GATEHOUSE_HASH_CONCURRENCY: '1' });
    try {
      const { request } = await import('node:http');
      await new Promise<void>((resolve) => {
        const body = JSON.stringify({ username: 'gone', password: 'pw', client: CLIENT_SETTINGS, level: 10 });
        const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/api/auth/register', headers: { 'content-type': 'application/json', 'content-length': String(body.length) } });
        req.on('error', () => resolve());
        req.end(body);
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 30);
      });
      let logged: Record<string, unknown> | undefined;
      for (let i = 0; i < 100 && logged === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        logged = server.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line['msg'] === 'request' && line['path'] === '/api/auth/register');
      }
      assert.ok(logged !== undefined, server.logs.join('\n'));
      assert.equal(logged['status'], 0);
    } finally {
      await server.close();
    }
  });
});
