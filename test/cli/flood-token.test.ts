// gatehouse flood-token: a token a Flood started with --auth none accepts, minted from Flood's
// secret file. Checked against an independent HMAC-SHA256 here, not against our own codec.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmod, copyFile, cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, childEnv, REPO_ROOT, removeTempDirs, runCli, tempDir } from '../helpers/process.js';

// What Flood writes on first start: 36 random bytes as 72 hex characters, mode 0600.
const FLOOD_SECRET = randomBytes(36).toString('hex');

interface Decoded {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
}

/** Checks the HS256 signature with `secret` as UTF-8 bytes (as Flood's jsonwebtoken does) and decodes the token. */
function verifyIndependently(token: string, secret: string): Decoded {
  const parts = token.split('.');
  assert.equal(parts.length, 3, token);
  const [header = '', payload = '', signature = ''] = parts;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${header}.${payload}`).digest('base64url');
  assert.equal(signature, expected, 'the signature must be HMAC-SHA256 over header.payload with the secret file bytes');
  const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload) };
}

describe('gatehouse flood-token', { concurrency: 4 }, () => {
  let dir: string;
  let secretFile: string;
  before(async () => {
    assertBuilt();
    dir = await tempDir('gatehouse-flood-token-');
    secretFile = join(dir, 'flood.secret');
    await writeFile(secretFile, FLOOD_SECRET, { mode: 0o600 });
  });
  after(() => removeTempDirs());

  it('prints one line: an HS256 token with exactly username, iat and exp, valid for 3650 days, for gatehouse', async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = await runCli(['flood-token', '--secret-file', secretFile]);
    const after = Math.floor(Date.now() / 1000);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/);
    const { header, payload } = verifyIndependently(result.stdout.trim(), FLOOD_SECRET);
    assert.deepEqual(header, { alg: 'HS256', typ: 'JWT' });
    // Flood checks its cookie token against a strict {username, iat, exp} schema: nothing else may be in it.
    assert.deepEqual(Object.keys(payload).sort(), ['exp', 'iat', 'username']);
    assert.equal(payload['username'], 'gatehouse');
    const iat = payload['iat'] as number;
    assert.ok(Number.isInteger(iat) && iat >= before && iat <= after, `iat ${iat}`);
    assert.equal(payload['exp'], iat + 3650 * 86400);
  });

  it('takes --username and --days', async () => {
    const result = await runCli(['flood-token', '--secret-file', secretFile, '--username', 'proxy nginx', '--days', '30']);
    assert.equal(result.code, 0, result.stderr);
    const { payload } = verifyIndependently(result.stdout.trim(), FLOOD_SECRET);
    assert.equal(payload['username'], 'proxy nginx');
    assert.equal((payload['exp'] as number) - (payload['iat'] as number), 30 * 86400);
  });

  it('uses the file exactly as Flood does, a trailing newline included', async () => {
    const file = join(dir, 'with-newline.secret');
    await writeFile(file, `${FLOOD_SECRET}\n`, { mode: 0o600 });
    const result = await runCli(['flood-token', '--secret-file', file]);
    assert.equal(result.code, 0, result.stderr);
    verifyIndependently(result.stdout.trim(), `${FLOOD_SECRET}\n`);
    assert.throws(() => verifyIndependently(result.stdout.trim(), FLOOD_SECRET));
  });

  it('warns on stderr, and still mints, when the secret file is readable by group or others', async () => {
    const file = join(dir, 'loose.secret');
    await writeFile(file, FLOOD_SECRET);
    await chmod(file, 0o644);
    const result = await runCli(['flood-token', '--secret-file', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /warning.*readable by group or others/i);
    verifyIndependently(result.stdout.trim(), FLOOD_SECRET);
  });

  const refusals: ReadonlyArray<{ name: string; setup?: (file: string) => Promise<void>; args?: (file: string) => string[] }> = [
    { name: 'no --secret-file', args: () => ['flood-token'] },
    { name: 'a secret file that does not exist', args: (file) => ['flood-token', '--secret-file', `${file}.missing`] },
    { name: 'a directory', setup: (file) => mkdir(file) },
    { name: 'a path through a regular file (ENOTDIR)', setup: (file) => writeFile(file, FLOOD_SECRET, { mode: 0o600 }), args: (file) => ['flood-token', '--secret-file', `${file}/secret`] },
    { name: 'an empty secret file', setup: (file) => writeFile(file, '', { mode: 0o600 }) },
    { name: 'a secret of 31 bytes (Flood itself takes 30 characters; the HMAC key must be 32 bytes)', setup: (file) => writeFile(file, 'a'.repeat(31), { mode: 0o600 }) },
    { name: 'a file far larger than any secret', setup: (file) => writeFile(file, 'a'.repeat(100_000), { mode: 0o600 }) },
    { name: 'an unreadable secret file', setup: async (file) => { await writeFile(file, FLOOD_SECRET, { mode: 0o600 }); await chmod(file, 0o000); } },
    { name: '--days 0', args: (file) => ['flood-token', '--secret-file', file, '--days', '0'] },
    { name: '--days that is not a number', args: (file) => ['flood-token', '--secret-file', file, '--days', '10y'] },
    { name: '--days beyond 100 years', args: (file) => ['flood-token', '--secret-file', file, '--days', '36501'] },
    { name: 'an empty --username', args: (file) => ['flood-token', '--secret-file', file, '--username', ''] },
    { name: 'a --username with a control character', args: (file) => ['flood-token', '--secret-file', file, '--username', 'a\tb'] },
    { name: 'an unknown flag', args: (file) => ['flood-token', '--secret-file', file, '--secret', 'x'] },
    { name: 'a stray argument', args: (file) => ['flood-token', '--secret-file', file, 'extra'] },
  ];
  let counter = 0;
  for (const { name, setup, args } of refusals) {
    it(`refuses ${name} with exit 2, a message and no token`, async () => {
      counter += 1;
      const file = join(dir, `refused-${counter}.secret`);
      if (setup !== undefined) await setup(file);
      const argv = args?.(file) ?? ['flood-token', '--secret-file', file];
      // Root reads any file: as root, the unreadable case runs the command without that power.
      const result = name.startsWith('an unreadable') && process.getuid?.() === 0 ? await runCliAsRootWithoutDacOverride(argv, dir) : await runCli(argv);
      assert.equal(result.code, 2, `stdout: ${result.stdout} stderr: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^gatehouse: /);
      assert.ok(!result.stderr.includes(FLOOD_SECRET));
      if (name.startsWith('an unreadable')) assert.match(result.stderr, /cannot be read \(EACCES\)/, 'refused for the file\'s mode, not for anything else');
    });
  }

  it('--help explains the command, and the main help lists it', async () => {
    const help = await runCli(['flood-token', '--help']);
    assert.equal(help.code, 0, help.stderr);
    for (const word of ['--secret-file', '--username', '--days', 'flood.secret', '--auth none']) assert.ok(help.stdout.includes(word), word);
    const main = await runCli(['--help']);
    assert.match(main.stdout, /flood-token/);
  });
});

/**
 * Runs the built CLI as root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv drops them
 * from the bounding set before exec), so file modes bind it as they bind any user: a 0000 file is
 * unreadable. It stays uid 0 and runs a copy of dist/ made in `dir`, so everything it must read is
 * root's own, wherever the checkout is (another user, nobody, could not read one in a 0700 directory).
 */
async function runCliAsRootWithoutDacOverride(args: readonly string[], dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const copy = join(dir, 'cli-copy');
  // package.json too: its "type": "module" makes node load dist/ as ES modules.
  await cp(join(REPO_ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
  await copyFile(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
  const result = spawnSync('setpriv', ['--bounding-set=-dac_override,-dac_read_search', process.execPath, join(copy, 'dist', 'cli.js'), ...args], { env: childEnv(), encoding: 'utf8', timeout: 15_000 });
  if (result.error !== undefined) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
