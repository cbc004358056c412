// The command line's surface: version, help, usage errors (exit 2), --print-config and a
// too-short secret (exit 1). Runs the built dist/cli.js as a child process.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_SECRET, killAllChildren, removeTempDirs, REPO_ROOT, runCli, tempDir, assertBuilt } from '../helpers/process.js';

const packageVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('gatehouse command line basics', { concurrency: 4 }, () => {
  before(() => assertBuilt());
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('--version prints the version from package.json and exits 0', async () => {
    const result = await runCli(['--version']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), packageVersion);
  });

  it('--help lists the commands and exits 0', async () => {
    const result = await runCli(['--help']);
    assert.equal(result.code, 0, result.stderr);
    for (const word of ['serve', 'users', 'secret', '--version', '--help']) assert.match(result.stdout, new RegExp(`(^|\\s)${word}\\b`, 'm'), `--help should mention ${word}`);
  });

  it('serve --help lists every serve flag and exits 0', async () => {
    const result = await runCli(['serve', '--help']);
    assert.equal(result.code, 0, result.stderr);
    const flags = ['--host', '--port', '--data-dir', '--auth', '--base-uri', '--trust-proxy', '--secure-cookie', '--log-level', '--log-format', '--scrypt', '--print-config', '--help'];
    for (const flag of flags) assert.ok(result.stdout.includes(flag), `serve --help should list ${flag}`);
    for (const env of ['GATEHOUSE_PORT', 'GATEHOUSE_SECRET', 'GATEHOUSE_DATA_DIR']) assert.ok(result.stdout.includes(env), `serve --help should name ${env}`);
  });

  it('users --help lists every users subcommand and --password-stdin, and exits 0', async () => {
    const result = await runCli(['users', '--help']);
    assert.equal(result.code, 0, result.stderr);
    for (const word of ['list', 'add', 'passwd', 'set-level', 'remove', '--level', '--client', '--password-stdin', '--data-dir']) {
      assert.ok(result.stdout.includes(word), `users --help should list ${word}`);
    }
  });

  it('secret --help lists rotate and --data-dir, and exits 0', async () => {
    const result = await runCli(['secret', '--help']);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stdout.includes('rotate'));
    assert.ok(result.stdout.includes('--data-dir'));
  });

  it('no command at all is a usage error: exit 2 and a message on stderr', async () => {
    const result = await runCli([]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /command/i);
  });

  it('an unknown command exits 2 and names it on stderr', async () => {
    const result = await runCli(['frobnicate']);
    assert.equal(result.code, 2);
    assert.ok(result.stderr.includes('frobnicate'), result.stderr);
  });

  it('an unknown flag (serve --nope) exits 2 and names it on stderr', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', '--nope', '--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assert.equal(result.code, 2);
    assert.ok(result.stderr.includes('--nope'), result.stderr);
    assert.doesNotMatch(result.stdout, /listening on/);
  });

  it('a stray argument (serve extra) exits 2 and names it on stderr', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', 'extra', '--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assert.equal(result.code, 2);
    assert.ok(result.stderr.includes('extra'), result.stderr);
  });

  it('users without a subcommand is a usage error: exit 2 and a message on stderr', async () => {
    const result = await runCli(['users']);
    assert.equal(result.code, 2);
    assert.notEqual(result.stderr.trim(), '', `a message on stderr (stdout was: ${result.stdout.slice(0, 80)}…)`);
  });

  it('secret without a subcommand is a usage error: exit 2 and a message on stderr', async () => {
    const result = await runCli(['secret']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /rotate/);
  });

  it('an unknown users subcommand and a stray argument to users list exit 2', async () => {
    const dataDir = await tempDir();
    const unknown = await runCli(['users', 'frob', '--data-dir', dataDir]);
    assert.equal(unknown.code, 2);
    assert.ok(unknown.stderr.includes('frob'), unknown.stderr);
    const stray = await runCli(['users', 'list', 'extra', '--data-dir', dataDir]);
    assert.equal(stray.code, 2);
    assert.ok(stray.stderr.includes('extra'), stray.stderr);
  });

  const badValues: Array<{ args: string[]; flag: string }> = [
    { args: ['--port', 'abc'], flag: '--port' },
    { args: ['--port', '70000'], flag: '--port' },
    { args: ['--auth', 'maybe'], flag: '--auth' },
    { args: ['--log-format', 'xml'], flag: '--log-format' },
    { args: ['--log-level', 'loud'], flag: '--log-level' },
    { args: ['--trust-proxy', 'not-an-ip'], flag: '--trust-proxy' },
    { args: ['--base-uri', '/../x'], flag: '--base-uri' },
  ];
  for (const { args, flag } of badValues) {
    it(`a bad value (serve ${args.join(' ')}) exits 2 with a message naming ${flag}`, async () => {
      const dataDir = await tempDir();
      const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
      assert.equal(result.code, 2, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
      assert.ok(result.stderr.includes(flag), result.stderr);
      assert.doesNotMatch(result.stdout, /listening on/);
    });
  }

  it('a bad value in an environment variable (GATEHOUSE_PORT=abc) exits 2 naming it', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: CLI_SECRET, GATEHOUSE_PORT: 'abc' } });
    assert.equal(result.code, 2);
    assert.ok(result.stderr.includes('GATEHOUSE_PORT') || result.stderr.includes('--port'), result.stderr);
  });

  it('serve --print-config prints the effective values as JSON, the flag winning over the environment, and exits 0', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', '--print-config', '--port', '2222', '--data-dir', dataDir, '--base-uri', '/flood', '--trust-proxy', '10.0.0.1'], {
      env: { GATEHOUSE_PORT: '1111', GATEHOUSE_HOST: '127.0.0.2', GATEHOUSE_AUTH: 'default', GATEHOUSE_LOG_FORMAT: 'pretty', GATEHOUSE_SECRET: CLI_SECRET },
    });
    assert.equal(result.code, 0, result.stderr);
    const config = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(config['port'], 2222, 'the flag wins over GATEHOUSE_PORT');
    assert.equal(config['host'], '127.0.0.2', 'the environment applies when no flag is given');
    assert.equal(config['dataDir'], dataDir);
    assert.equal(config['baseUri'], '/flood');
    assert.deepEqual(config['trustProxy'], ['10.0.0.1']);
    assert.equal(config['logFormat'], 'pretty');
    assert.equal(config['authMethod'], 'default');
  });

  it('serve --print-config reads --flood-url given twice as one list, and the flag wins over GATEHOUSE_FLOOD_URL', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', '--print-config', '--data-dir', dataDir, '--flood-url', 'https://flood.example.org', '--flood-url', 'http://192.168.1.5:3000/'], {
      env: { GATEHOUSE_SECRET: CLI_SECRET, GATEHOUSE_FLOOD_URL: 'https://other.example.org' },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual((JSON.parse(result.stdout) as Record<string, unknown>)['floodUrls'], ['https://flood.example.org', 'http://192.168.1.5:3000']);
    const refused = await runCli(['serve', '--print-config', '--data-dir', dataDir, '--flood-url', 'https://flood.example.org/flood'], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--flood-url/);
  });

  it('serve --print-config redacts the secret: its value appears nowhere in the output', async () => {
    const dataDir = await tempDir();
    const result = await runCli(['serve', '--print-config', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(CLI_SECRET), 'the secret must not be printed');
    assert.ok(!result.stderr.includes(CLI_SECRET), 'the secret must not be printed');
    assert.ok(!result.stdout.includes(CLI_SECRET.slice(0, 16)), 'no part of the secret should be printed');
    const config = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(typeof config['secret'], 'string');
    assert.match(String(config['secret']), /redacted/i);
  });

  it('serve --print-config does not create or lock the data directory', async () => {
    const parent = await tempDir();
    const dataDir = join(parent, 'not-yet');
    const result = await runCli(['serve', '--print-config', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: CLI_SECRET } });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(dataDir), false);
  });

  it('a GATEHOUSE_SECRET shorter than 32 characters makes serve exit 1 with a clear message that does not echo it', async () => {
    const dataDir = await tempDir();
    const shortSecret = 'tooShortSecretXYZ';
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_SECRET: shortSecret } });
    assert.equal(result.code, 1, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    assert.match(result.stderr, /GATEHOUSE_SECRET/);
    assert.match(result.stderr, /32/);
    assert.ok(!result.stderr.includes(shortSecret) && !result.stdout.includes(shortSecret), 'the rejected secret must not be echoed');
    assert.doesNotMatch(result.stdout, /listening on/);
  });
});
