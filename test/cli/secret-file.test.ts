// GATEHOUSE_SECRET_FILE: a secret passed with --env-file shows in `docker inspect`; a
// file does not. It is held to GATEHOUSE_SECRET's rules, refused when group or others could
// replace it, and cannot be combined with GATEHOUSE_SECRET.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readSecretFile, SecretInvalid } from '../../src/auth/secret.js';
import { buildConfig, SettingInvalid } from '../../src/config.js';
import { removeTempDirs, runCli, tempDir } from '../helpers/process.js';
import { registerUser, startTestServer } from '../helpers/server.js';

const FILE_SECRET = 'a-secret-kept-in-a-file-0123456789-abcdefgh';
after(removeTempDirs);

async function secretFile(content: string, mode: number): Promise<string> {
  const dir = await tempDir('gatehouse-secretfile-');
  const path = join(dir, 'gatehouse-secret');
  await writeFile(path, content);
  await chmod(path, mode);
  return path;
}

describe('GATEHOUSE_SECRET_FILE', () => {
  it('signs with the file secret, makes no secret file in the data directory, and keeps sessions across restarts', async () => {
    const path = await secretFile(`${FILE_SECRET}\n`, 0o600);
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-test-'));
    try {
      const first = await startTestServer({ GATEHOUSE_SECRET: '', GATEHOUSE_SECRET_FILE: path }, { dataDir });
      const token = await registerUser(first, 'admin', { level: 10 });
      await first.running.close();
      assert.equal(existsSync(join(dataDir, 'secret')), false);
      const second = await startTestServer({ GATEHOUSE_SECRET: '', GATEHOUSE_SECRET_FILE: path }, { dataDir });
      const verified = await second.request({ path: '/api/auth/verify', token });
      assert.equal(verified.status, 200, verified.text);
      await second.running.close();
      // The same text as GATEHOUSE_SECRET signs the same tokens: moving from one to the other keeps sessions.
      const third = await startTestServer({ GATEHOUSE_SECRET: FILE_SECRET }, { dataDir });
      assert.equal((await third.request({ path: '/api/auth/verify', token })).status, 200);
      await third.running.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to be combined with GATEHOUSE_SECRET', () => {
    const values: Record<string, string> = { GATEHOUSE_SECRET: FILE_SECRET, GATEHOUSE_SECRET_FILE: '/run/secrets/gatehouse' };
    assert.throws(() => buildConfig((spec) => values[spec.env]), (error: unknown) => error instanceof SettingInvalid && /both set/.test(error.message));
  });

  for (const { name, content, mode, expect } of [
    { name: 'a file writable by its group', content: FILE_SECRET, mode: 0o660, expect: /writable by group or others \(mode 0660\).*chmod 0600/ },
    { name: 'a file writable by others', content: FILE_SECRET, mode: 0o602, expect: /writable by group or others/ },
    { name: 'a secret shorter than 32 characters', content: 'short\n', mode: 0o600, expect: /at least 32 characters \(it has 5\)/ },
    { name: 'a file far larger than any secret (a wrong path)', content: 'a'.repeat(100_000), mode: 0o600, expect: /larger than 4096 bytes/ },
  ]) {
    it(`refuses ${name}`, async () => {
      const path = await secretFile(content, mode);
      // A server that starts anyway is closed, so the test fails rather than hangs.
      const started = startTestServer({ GATEHOUSE_SECRET: '', GATEHOUSE_SECRET_FILE: path }).then(async (server) => {
        await server.close();
        return server;
      });
      await assert.rejects(started, (error: unknown) => {
        assert.ok(error instanceof SecretInvalid, String(error));
        assert.match(error.message, expect);
        assert.ok(!error.message.includes(FILE_SECRET), 'the message shows the secret');
        return true;
      });
    });
  }

  it('refuses a file owned by another ordinary user (its owner could swap the secret), saying what to change', async () => {
    const path = await secretFile(FILE_SECRET, 0o600);
    const expect = (uid: number, serviceUid: number) => (error: unknown) => {
      assert.ok(error instanceof SecretInvalid, String(error));
      assert.match(error.message, new RegExp(`belongs to uid ${uid}, neither root nor the uid Gatehouse runs as \\(${serviceUid}\\).*chown ${serviceUid} ${path}`));
      return true;
    };
    const ourUid = process.getuid?.();
    assert.ok(ourUid !== undefined, 'this test needs uids (Linux)');
    if (ourUid === 0) {
      // CI runs as root: a real file of nobody's, refused by the running service.
      await chown(path, 65534, 65534);
      // A server that starts anyway is closed, so that the failure is reported rather than hanging.
      const started = startTestServer({ GATEHOUSE_SECRET: '', GATEHOUSE_SECRET_FILE: path }).then(async (server) => {
        await server.close();
        return server;
      });
      await assert.rejects(started, expect(65534, 0));
    } else {
      // Not root, so no chown: the same rule, with Gatehouse posing as another uid than the file's owner (us).
      await assert.rejects(readSecretFile(path, () => undefined, ourUid + 1), expect(ourUid, ourUid + 1));
    }
  });

  it('refuses a missing file, naming it', async () => {
    await assert.rejects(startTestServer({ GATEHOUSE_SECRET: '', GATEHOUSE_SECRET_FILE: '/nonexistent/gatehouse-secret' }), /GATEHOUSE_SECRET_FILE \/nonexistent\/gatehouse-secret cannot be read: it does not exist/);
  });

  it('starts with a file readable by others (a container secret) but warns', async () => {
    const path = await secretFile(FILE_SECRET, 0o644);
    const server = await startTestServer({ GATEHOUSE_SECRET: '', GATEHOUSE_SECRET_FILE: path });
    try {
      assert.ok(server.logs.some((line) => line.includes('"level":"warn"') && line.includes('readable by group or others (mode 0644)')), server.logs.join('\n'));
    } finally {
      await server.close();
    }
  });

  it('makes `secret rotate` refuse, since the data directory secret is not the one in use', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['secret', 'rotate', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET_FILE: '/run/secrets/gatehouse' } });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /GATEHOUSE_SECRET_FILE is set/);
    assert.equal(existsSync(join(dataDir, 'secret')), false);
  });
});
