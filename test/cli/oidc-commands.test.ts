// The OpenID Connect offline commands, built, as an operator runs them: `gatehouse clients` add,
// list, secret and remove (checked against the running service's token endpoint), `gatehouse keys
// rotate` (checked in its JWKS), and `gatehouse users set` for the e-mail address and name.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, httpCall, killAllChildren, removeTempDirs, runCli, startServe, tempDir, type RunResult } from '../helpers/process.js';

const ISSUER = 'https://auth.example.org';
const REDIRECT = 'https://grafana.example.org/login/generic_oauth';
// The service's endpoints answer on its own origin, the issuer's: a request there carries its host.
const HOME = Object.freeze({ host: 'auth.example.org' });

function assertOk(result: RunResult, what: string): void {
  assert.equal(result.code, 0, `${what} should exit 0\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

/** What the token endpoint says of a client's credentials: invalid_client, or invalid_grant once they pass (the code is made up). */
async function clientVerdict(port: number, clientId: string, secret: string): Promise<string> {
  const response = await httpCall(port, {
    method: 'POST', path: '/oidc/token',
    headers: { ...HOME, 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
    body: `grant_type=authorization_code&code=${'c'.repeat(43)}&redirect_uri=${encodeURIComponent(REDIRECT)}`,
  });
  return String((response.json as { error?: unknown }).error);
}

describe('gatehouse clients and keys', () => {
  let dataDir = '';
  const cli = (args: string[], env: Record<string, string> = { GATEHOUSE_PUBLIC_URL: ISSUER }) => runCli([...args, '--data-dir', dataDir], { env });
  const serve = () => startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_PUBLIC_URL: ISSUER } });

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('clients add --json prints the id and secret once; the service accepts them; list never shows a secret', async () => {
    const added = await cli(['clients', 'add', 'Grafana', '--redirect-uri', REDIRECT, '--redirect-uri', 'https://grafana.example.org/other', '--group', 'ops', '--json']);
    assertOk(added, 'clients add');
    const { clientId, clientSecret } = JSON.parse(added.stdout) as { clientId: string; clientSecret: string };
    assert.match(clientId, /^[0-9a-f]{32}$/);
    assert.match(clientSecret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(readFileSync(join(dataDir, 'oidc-clients.json'), 'utf8').includes(clientSecret), false);
    const listed = await cli(['clients', 'list', '--json']);
    assertOk(listed, 'clients list');
    assert.equal(listed.stdout.includes(clientSecret), false);
    const [entry] = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual([entry?.['name'], entry?.['groups'], entry?.['redirectUris']], ['Grafana', ['ops'], [REDIRECT, 'https://grafana.example.org/other']]);
    const human = await cli(['clients', 'list']);
    assert.match(human.stdout, new RegExp(`^${clientId}\tGrafana\tconfidential\tRS256\tgroups=ops\tmfa=no\t`));

    const service = await serve();
    try {
      assert.equal(await clientVerdict(service.port, clientId, clientSecret), 'invalid_grant');
      assert.equal(await clientVerdict(service.port, clientId, 'wrong'), 'invalid_client');
    } finally {
      await service.stop();
    }

    const renewed = await cli(['clients', 'secret', 'Grafana', '--json']);
    assertOk(renewed, 'clients secret');
    const fresh = (JSON.parse(renewed.stdout) as { clientSecret: string }).clientSecret;
    const again = await serve();
    try {
      assert.equal(await clientVerdict(again.port, clientId, clientSecret), 'invalid_client');
      assert.equal(await clientVerdict(again.port, clientId, fresh), 'invalid_grant');
    } finally {
      await again.stop();
    }
    assertOk(await cli(['clients', 'remove', clientId]), 'clients remove');
    assert.equal((await cli(['clients', 'list'])).stdout, '');
  });

  it('clients add without --json prints the id, the secret, the issuer and discovery URL; a public client has no secret', async () => {
    const added = await cli(['clients', 'add', 'Immich app', '--redirect-uri', 'app.immich:///oauth-callback', '--public']);
    assertOk(added, 'clients add --public');
    assert.match(added.stdout, /^client id: {5}[0-9a-f]{32}\n/);
    assert.doesNotMatch(added.stdout, /client secret/);
    assert.match(added.stdout, new RegExp(`discovery: {5}${ISSUER}/\\.well-known/openid-configuration`));
    const secret = await cli(['clients', 'secret', 'Immich app']);
    assert.equal(secret.code, 1);
    assert.match(secret.stderr, /public/);
  });

  it('refuses a bad redirect URI or name (exit 2), and says which setting is missing without --public-url', async () => {
    const bad = await cli(['clients', 'add', 'Evil', '--redirect-uri', 'http://evil.example/cb']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /https/);
    assert.equal((await cli(['clients', 'add', 'NoUri'])).code, 2);
    const noIssuer = await cli(['clients', 'add', 'Later', '--redirect-uri', REDIRECT], {});
    assertOk(noIssuer, 'clients add without --public-url');
    assert.match(noIssuer.stderr, /--public-url \(GATEHOUSE_PUBLIC_URL\) is not set/);
    assert.equal((await cli(['clients', 'remove', 'nobody'])).code, 1);
  });

  it('keys rotate: new keys in force, the old ones still in the JWKS', async () => {
    const first = await serve();
    let before: string[];
    try {
      before = ((await httpCall(first.port, { path: '/oidc/jwks', headers: HOME })).json as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
    } finally {
      await first.stop();
    }
    const rotated = await cli(['keys', 'rotate']);
    assertOk(rotated, 'keys rotate');
    for (const kid of before) assert.ok(rotated.stdout.includes(kid), `${kid} not named as retired`);
    const second = await serve();
    try {
      const after = ((await httpCall(second.port, { path: '/oidc/jwks', headers: HOME })).json as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
      assert.equal(after.length, 4);
      assert.deepEqual(after.slice(2), before);
      assert.equal(before.includes(after[0] ?? ''), false);
    } finally {
      await second.stop();
    }
  });

  it('users set records an e-mail address (verified) and a display name, and removes them with an empty value', async () => {
    assertOk(await runCli(['users', 'add', 'ada', '--level', 'USER', '--password-stdin', '--data-dir', dataDir], { stdin: 'a long password\n' }), 'users add');
    const set = await cli(['users', 'set', 'ada', '--email', 'ada@example.org', '--name', 'Ada Lovelace']);
    assertOk(set, 'users set');
    const stored = () => (JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8')) as { users: Array<Record<string, unknown>> }).users.find((user) => user['username'] === 'ada');
    assert.deepEqual([stored()?.['email'], stored()?.['emailVerified'], stored()?.['name']], ['ada@example.org', true, 'Ada Lovelace']);
    assertOk(await cli(['users', 'set', 'ada', '--email', '']), 'users set --email ""');
    assert.deepEqual([stored()?.['email'], stored()?.['name']], [undefined, 'Ada Lovelace']);
    assert.equal((await cli(['users', 'set', 'ada', '--email', 'not-an-address'])).code, 2);
    assert.equal((await cli(['users', 'set', 'ada'])).code, 2);
  });
});
