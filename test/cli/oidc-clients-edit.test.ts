// `gatehouse clients edit`, built, as an operator runs it while the service is stopped: the app keeps
// its id and secret (checked at the service's token endpoint), lists replace, --no-… flags clear,
// refresh tokens of accounts the new groups leave out end; and `clients add` / `edit` print the
// ready sign-out URL when the app has sign-out URIs.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  assertBuilt, CLIENT_SETTINGS, httpCall, killAllChildren, removeTempDirs, runCli, startServe, tempDir, type RunResult,
} from '../helpers/process.js';

const ISSUER = 'https://auth.example.org';
const REDIRECT = 'https://grafana.example.org/login/generic_oauth';
const OTHER = 'https://grafana.example.org/other';
const BYE = 'https://grafana.example.org/bye';
// The service's endpoints answer on its own origin, the issuer's: a request there carries its host.
const HOME = Object.freeze({ host: 'auth.example.org' });
const FORM = { ...HOME, 'content-type': 'application/x-www-form-urlencoded' };

function assertOk(result: RunResult, what: string): void {
  assert.equal(result.code, 0, `${what} should exit 0\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

describe('gatehouse clients edit', () => {
  let dataDir = '';
  const cli = (args: string[], env: Record<string, string> = { GATEHOUSE_PUBLIC_URL: ISSUER }) => runCli([...args, '--data-dir', dataDir], { env });
  const serve = () => startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], { env: { GATEHOUSE_PUBLIC_URL: ISSUER } });
  const listed = async (name: string): Promise<Record<string, unknown> | undefined> =>
    (JSON.parse((await cli(['clients', 'list', '--json'])).stdout) as Array<Record<string, unknown>>).find((entry) => entry['name'] === name);

  before(async () => {
    assertBuilt();
    dataDir = await tempDir();
  });
  after(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it('changes what it is told, keeps the id and the secret, and prints the sign-out URL', async () => {
    const added = await cli(['clients', 'add', 'Grafana', '--redirect-uri', REDIRECT, '--json']);
    assertOk(added, 'clients add');
    const { clientId, clientSecret } = JSON.parse(added.stdout) as { clientId: string; clientSecret: string };
    const edited = await cli([
      'clients', 'edit', 'Grafana', '--name', 'Grafana prod', '--redirect-uri', OTHER, '--redirect-uri', REDIRECT,
      '--post-logout-redirect-uri', BYE, '--group', 'ops', '--group', 'admins', '--mfa', '--alg', 'ES256',
    ]);
    assertOk(edited, 'clients edit');
    const logoutUrl = `${ISSUER}/oidc/logout?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: BYE }).toString()}`;
    assert.ok(edited.stdout.includes(`sign-out URL:  ${logoutUrl}\n`), edited.stdout);
    assert.match(edited.stdout, new RegExp(`client id: {5}${clientId}\n`));
    assert.doesNotMatch(edited.stdout, /client secret/);
    const entry = await listed('Grafana prod');
    assert.deepEqual(
      [entry?.['clientId'], entry?.['redirectUris'], entry?.['postLogoutRedirectUris'], entry?.['groups'], entry?.['mfa'], entry?.['alg']],
      [clientId, [OTHER, REDIRECT], [BYE], ['ops', 'admins'], true, 'ES256'],
    );
    // By id too; --no-… flags clear, and untouched fields stay.
    const cleared = await cli(['clients', 'edit', clientId, '--no-groups', '--no-mfa', '--no-post-logout-redirect-uri', '--json']);
    assertOk(cleared, 'clients edit --no-…');
    const summary = JSON.parse(cleared.stdout) as Record<string, unknown>;
    assert.deepEqual([summary['groups'], summary['mfa'], summary['postLogoutRedirectUris'], summary['alg'], summary['name']], [[], false, [], 'ES256', 'Grafana prod']);
    assert.equal(cleared.stdout.includes(clientSecret), false);

    const service = await serve();
    try {
      const verdict = await httpCall(service.port, {
        method: 'POST', path: '/oidc/token',
        headers: { ...FORM, authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
        body: `grant_type=authorization_code&code=${'c'.repeat(43)}&redirect_uri=${encodeURIComponent(REDIRECT)}`,
      });
      // The secret still authenticates: the made-up code is what fails.
      assert.equal((verdict.json as { error?: unknown }).error, 'invalid_grant');
    } finally {
      await service.stop();
    }
  });

  it('clients add prints the ready sign-out URL for each sign-out URI, with the --post-logout-redirect-uri spelling too', async () => {
    const added = await cli(['clients', 'add', 'Portainer', '--redirect-uri', 'https://portainer.example.org', '--post-logout-redirect-uri', 'https://portainer.example.org/']);
    assertOk(added, 'clients add');
    const clientId = /client id: +([0-9a-f]{32})/.exec(added.stdout)?.[1] ?? '';
    const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: 'https://portainer.example.org/' }).toString();
    assert.ok(added.stdout.includes(`sign-out URL:  ${ISSUER}/oidc/logout?${query}\n`), added.stdout);
    const plain = await cli(['clients', 'add', 'NoLogout', '--redirect-uri', REDIRECT]);
    assert.doesNotMatch(plain.stdout, /sign-out URL/);
    // Without --public-url the URL is printed with a placeholder for the issuer the service is given.
    const noIssuer = await cli(['clients', 'add', 'Later', '--redirect-uri', REDIRECT, '--post-logout-uri', BYE], {});
    assertOk(noIssuer, 'clients add without --public-url');
    assert.match(noIssuer.stdout, /sign-out URL: {2}ISSUER\/oidc\/logout\?client_id=[0-9a-f]{32}&post_logout_redirect_uri=/);
  });

  it('ends the refresh tokens of accounts the new groups leave out', async () => {
    const added = await cli(['clients', 'add', 'Grouped', '--redirect-uri', REDIRECT, '--json']);
    const client = JSON.parse(added.stdout) as { clientId: string; clientSecret: string };
    const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
    let refreshToken = '';
    const first = await serve();
    try {
      const made = await httpCall(first.port, { method: 'POST', path: '/api/auth/register', headers: HOME, body: { username: 'root', password: 'root-password-7k', client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
      const session = made.cookieToken ?? '';
      const verifier = randomBytes(32).toString('base64url');
      const query = new URLSearchParams({
        response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT, scope: 'openid offline_access',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
      });
      const authorized = await httpCall(first.port, { path: `/oidc/authorize?${query.toString()}`, headers: HOME, token: session });
      const code = new URL(String(authorized.headers.location)).searchParams.get('code') ?? '';
      const tokens = await httpCall(first.port, {
        method: 'POST', path: '/oidc/token', headers: { ...FORM, authorization: basic },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
      });
      refreshToken = (tokens.json as { refresh_token?: string }).refresh_token ?? '';
      assert.ok(refreshToken !== '', tokens.text);
    } finally {
      await first.stop();
    }
    const edited = await cli(['clients', 'edit', 'Grouped', '--group', 'nobody-is-here']);
    assertOk(edited, 'clients edit --group');
    assert.match(edited.stdout, /ended 1 refresh token of accounts it no longer lets in/);
    const second = await serve();
    try {
      const refreshed = await httpCall(second.port, {
        method: 'POST', path: '/oidc/token', headers: { ...FORM, authorization: basic },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      });
      assert.equal(refreshed.status, 400, refreshed.text);
    } finally {
      await second.stop();
    }
  });

  it('refuses an edit that changes nothing, a bad value or clashing flags (exit 2), an unknown app or a taken name (exit 1)', async () => {
    assertOk(await cli(['clients', 'add', 'Kept', '--redirect-uri', REDIRECT]), 'clients add');
    assertOk(await cli(['clients', 'add', 'Taken', '--redirect-uri', REDIRECT]), 'clients add');
    for (const args of [
      ['Kept'], ['Kept', '--redirect-uri', 'http://evil.example/cb'], ['Kept', '--alg', 'none'], ['Kept', '--mfa', '--no-mfa'],
      ['Kept', '--group', 'ops', '--no-groups'], ['Kept', '--group', 'Not A Group'], ['Kept', '--name', ''],
      ['Kept', '--post-logout-redirect-uri', BYE, '--no-post-logout-redirect-uri'], ['Kept', '--public'], ['Kept', '--secret', 'x'],
    ]) {
      const result = await cli(['clients', 'edit', ...args]);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
    }
    assert.equal((await cli(['clients', 'edit', 'nobody', '--mfa'])).code, 1);
    const taken = await cli(['clients', 'edit', 'Kept', '--name', 'Taken']);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /already has that name/);
    const entry = await listed('Kept');
    assert.deepEqual([entry?.['redirectUris'], entry?.['mfa'], entry?.['groups']], [[REDIRECT], false, []]);
  });
});
