// The one-file build: dist/gatehouse.mjs copied ALONE into an empty directory (no node_modules,
// no package.json, no other dist file) runs `serve`, `users`, `--help` and `--version` there with
// nothing but node, as on a minimal host that was sent that one file.
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, CLIENT_JSON, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, REPO_ROOT, runCli, startServe, tempDir, type RunResult } from '../helpers/process.js';

const BUILT = join(REPO_ROOT, 'dist', 'gatehouse.mjs');
const PASSWORD = 'single-file-password-1';
const packageVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function assertOk(result: RunResult, what: string): void {
  assert.equal(result.code, 0, `${what} should exit 0\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

describe('dist/gatehouse.mjs, copied alone into an empty directory', () => {
  let dir = '';
  let script = '';
  /** Run options: the copy, from inside its directory. */
  const here = (): { cwd: string; script: string } => ({ cwd: dir, script });

  before(async () => {
    assertBuilt();
    dir = await tempDir('gatehouse-one-file-');
    script = join(dir, 'gatehouse.mjs');
    copyFileSync(BUILT, script);
    assert.deepEqual(readdirSync(dir), ['gatehouse.mjs'], 'the directory holds the one file and nothing else');
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('is executable and imports nothing but Node built-in modules', () => {
    assert.ok((statSync(BUILT).mode & 0o111) !== 0, 'mode allows execution');
    const text = readFileSync(BUILT, 'utf8');
    assert.ok(text.startsWith('#!/usr/bin/env node\n'), 'starts with a node shebang');
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']/gm)].map((match) => match[1] ?? '');
    assert.ok(specifiers.length > 0, 'the scan found the imports');
    const builtins = new Set(builtinModules);
    for (const specifier of specifiers) assert.ok(specifier.startsWith('node:') && builtins.has(specifier.slice(5)), `imports ${specifier}`);
    assert.doesNotMatch(text, /\bimport\s*\(/, 'no dynamic import');
  });

  it('--help lists the commands and --version prints the version from package.json', async () => {
    const help = await runCli(['--help'], here());
    assertOk(help, '--help');
    for (const word of ['serve', 'users', 'secret', 'flood-token']) assert.match(help.stdout, new RegExp(`^\\s+${word}\\b`, 'm'), `--help mentions ${word}`);
    const usersHelp = await runCli(['users', '--help'], here());
    assertOk(usersHelp, 'users --help');
    assert.match(usersHelp.stdout, /^Usage: gatehouse users/);
    const version = await runCli(['--version'], here());
    assertOk(version, '--version');
    assert.equal(version.stdout, `${packageVersion}\n`);
  });

  it('serve, with the default data directory beside it, registers, logs in and verifies over HTTP', async () => {
    const server = await startServe(['--host', '127.0.0.1', '--port', '0'], here());
    try {
      const register = await httpCall(server.port, { method: 'POST', path: '/api/auth/register', body: { username: 'first', password: PASSWORD, client: CLIENT_SETTINGS, level: 10 } });
      assert.equal(register.status, 200, register.text);
      const login = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'first', password: PASSWORD } });
      assert.equal(login.status, 200, login.text);
      assert.deepEqual(login.json, { success: true, username: 'first', level: 10 });
      assert.ok(login.cookieToken !== undefined && login.cookieToken !== '', 'login sets the jwt cookie');
      const verify = await httpCall(server.port, { path: '/api/auth/verify', token: login.cookieToken });
      assert.equal(verify.status, 200, verify.text);
      assert.equal((verify.json as { username?: unknown }).username, 'first');
      assert.equal((await httpCall(server.port, { path: '/api/auth/verify' })).status, 401);
      const worker = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'first', password: 'wrong' } });
      assert.equal(worker.status, 401, 'a wrong password is refused (the hashing threads run from the one file too)');
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    assert.deepEqual(readdirSync(dir).sort(), ['data', 'gatehouse.mjs']);
  });

  it('users add and users list work offline on that data directory, and serve then logs the new user in', async () => {
    const add = await runCli(['users', 'add', 'second', '--level', 'USER', '--client', CLIENT_JSON, '--password-stdin'], { ...here(), stdin: `${PASSWORD}\n` });
    assertOk(add, 'users add');
    const list = await runCli(['users', 'list'], here());
    assertOk(list, 'users list');
    assert.deepEqual(list.stdout.split('\n').filter((line) => line !== ''), ['first\t10', 'second\tUSER']);
    const server = await startServe(['--host', '127.0.0.1', '--port', '0'], here());
    try {
      const login = await httpCall(server.port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'second', password: PASSWORD } });
      assert.equal(login.status, 200, login.text);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});
