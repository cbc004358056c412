// The commands the docs show run as printed: the first registration's curl of README and of
// docs/flood.md against a fresh service, README's offline first-administrator command (the first
// thing its First start shows), `npx gatehouse -- --help`, then every line of the command block in
// docs/offline-admin.md, in order, against one data directory (the built dist/cli.js, as an
// operator runs it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs, REPO_ROOT, runCli, tempDir } from '../helpers/process.js';
import { startTestServer } from '../helpers/server.js';

/** The first fenced sh block after `marker` in `file`, as command lines without comments. */
function shownCommands(file: string, marker: string): string[] {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const start = text.indexOf(marker);
  assert.ok(start >= 0, `${file} no longer holds ${JSON.stringify(marker)}`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start));
  assert.ok(block !== null, `no sh block after ${JSON.stringify(marker)} in ${file}`);
  return (block[1] ?? '')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** `gatehouse users add …` or `node dist/cli.js users add …` → the arguments after the program. */
function argsOf(line: string): string[] {
  const words = line.split(/\s+/);
  const program = words.findIndex((word) => word === 'gatehouse' || word.endsWith('dist/cli.js'));
  assert.ok(program >= 0, `not a gatehouse command: ${line}`);
  return words.slice(program + 1);
}

/** The parts of a `curl -i -X POST URL -H 'name: value' -d '…'` command spread over lines with `\`. */
function curlOf(command: string): { method: string; path: string; headers: Record<string, string>; body: string } {
  const line = command.replace(/\\\n\s*/g, ' ');
  const method = /-X (\w+)/.exec(line)?.[1] ?? 'GET';
  const url = /(https?:\/\/\S+)/.exec(line)?.[1] ?? '';
  const headers: Record<string, string> = {};
  for (const header of line.matchAll(/-H '([^:']+):\s*([^']*)'/g)) headers[(header[1] ?? '').toLowerCase()] = header[2] ?? '';
  const body = /-d '([^']*)'/.exec(line)?.[1] ?? '';
  return { method, path: new URL(url).pathname, headers, body };
}

describe('the first registration the docs show', () => {
  for (const [file, marker] of [
    ['README.md', 'register the first user through the API'],
    ['docs/flood.md', '**Create the first administrator**'],
  ] as const) {
    it(`${file}: the curl registers the first administrator on a fresh service`, async () => {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      const block = /```sh\n([\s\S]*?)```/.exec(text.slice(text.indexOf(marker)));
      assert.ok(text.includes(marker) && block !== null, `no sh block after ${marker} in ${file}`);
      const curl = curlOf(block[1] ?? '');
      const server = await startTestServer();
      try {
        const answer = await server.request({ method: curl.method, path: curl.path, headers: { ...curl.headers, host: '127.0.0.1:3000' }, body: curl.body });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { success: true, username: 'admin', level: 'ADMINISTRATOR' });
      } finally {
        await server.close();
      }
    });
  }
});

describe('the commands the docs show', () => {
  before(() => assertBuilt());

  it("README's npx gatehouse -- --help prints the usage and exits 0 (npm passes the -- on)", async () => {
    assert.match(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), /`npx gatehouse -- --help`/);
    const run = spawnSync('npx', ['--no-install', 'gatehouse', '--', '--help'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp' } });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^Usage: gatehouse COMMAND/);
    const direct = await runCli(['--', 'users', '--help']);
    assert.equal(direct.code, 0, direct.stderr);
    assert.match(direct.stdout, /^Usage: gatehouse users COMMAND/);
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it("README's first administrator, then every command of docs/offline-admin.md, run as printed", async () => {
    const cwd = await tempDir();
    // README: "where `client.json` holds e.g. `{…}`": the example it gives, used by --client-file below.
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const example = /`client\.json` holds[^`]*`(\{[^`]*\})`/.exec(readme);
    assert.ok(example !== null, 'README no longer gives an example client.json');
    await writeFile(join(cwd, 'client.json'), example[1] ?? '', { mode: 0o600 });

    // README's First start leads with it: a gate-only install's first administrator, made offline.
    const [first] = shownCommands('README.md', '## First start');
    assert.ok(first !== undefined);
    assert.match(first, /users add admin --level ADMINISTRATOR$/);
    const added = await runCli(argsOf(first), { cwd, stdin: 'a long passphrase\n' });
    assert.equal(added.code, 0, `${first}\n${added.stderr}`);
    assert.equal(added.stdout, 'added admin\n');

    const lines = shownCommands('docs/offline-admin.md', '## Commands');
    assert.ok(lines.length >= 5, 'the command block of docs/offline-admin.md looks empty');
    for (const line of lines) {
      // NAME and NAME2 are placeholders: more users, so that removing one leaves README's administrator.
      const args = argsOf(line).map((word) => (word === 'NAME' ? 'alice' : word === 'NAME2' ? 'bob' : word));
      const result = await runCli(args, { cwd, stdin: 'another passphrase\n' });
      assert.equal(result.code, 0, `${line}\n${result.stderr}`);
    }
    const listed = await runCli(['users', 'list'], { cwd });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /admin/);
  });
});
