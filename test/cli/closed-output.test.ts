// A service whose stdout reader goes away (`gatehouse serve | head -1`, a log shipper that
// restarts) keeps answering: losing the log stream must not take the gate down.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { assertBuilt, childEnv, CLI_PATH, CLI_SECRET, freePort, httpCall, removeTempDirs, tempDir } from '../helpers/process.js';

after(removeTempDirs);

describe('gatehouse serve with a closed stdout', () => {
  it('keeps serving after the reader of its stdout has gone', async () => {
    assertBuilt();
    const port = await freePort();
    const dataDir = await tempDir();
    const child = spawn(process.execPath, [CLI_PATH, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], {
      env: childEnv({ GATEHOUSE_SECRET: CLI_SECRET }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    try {
      // Read the first line, then close the pipe as `head -1` does.
      const [first] = (await once(child.stdout, 'data')) as [Buffer];
      assert.match(first.toString(), /listening/);
      child.stdout.destroy();
      // Every request writes a log line into the closed pipe; the service must go on answering.
      for (let i = 0; i < 20; i += 1) {
        const answer = await httpCall(port, { path: '/api/auth/verify' });
        assert.equal(answer.status, 200, `request ${i}; stderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(child.exitCode, null, `the service exited; stderr: ${stderr}`);
    } finally {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
  });
});
