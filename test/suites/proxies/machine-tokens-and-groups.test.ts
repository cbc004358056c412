// Machine tokens and groups through a real nginx and a real Caddy running the shared snippets and
// the two-app files of deploy/ (app.example.com for anyone signed in, photos.example.com for the
// group "family"): a Bearer token and a Basic token pass as their account, with its groups; a
// member of the group passes and a non-member gets 403, with a session or a token alike; a revoked
// token stops at once; a token opens nothing of Gatehouse's own API through the proxy either. The
// app never receives a machine token in Authorization (Bearer by pattern, Basic by the check's
// Remote-Auth answer), while its own Basic or Bearer credentials reach it with a session.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, SECOND_APP_HOST, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { API_ACCEPT, echoOf, registerVia, viaHome, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

interface Account {
  readonly username: string;
  readonly session: string;
  readonly machineToken: string;
  readonly tokenId: string;
}

const basic = (username: string, token: string): string => `Basic ${Buffer.from(`${username}:${token}`, 'utf8').toString('base64')}`;

for (const kind of PROXY_KINDS) {
  describe(`machine tokens and groups through ${kind}`, () => {
    let stack: Stack;
    let admin: ProxyUser;
    let member: Account;
    let outsider: Account;
    const photos = (extra: Record<string, string> = {}): Record<string, string> => ({ host: `${SECOND_APP_HOST}:${stack.proxy.port}`, accept: API_ACCEPT, ...extra });

    /** An account the administrator makes over the proxy, signed in, with a machine token it made itself. */
    async function account(prefix: string, groups: readonly string[]): Promise<Account> {
      const username = `${prefix}-${process.pid}`;
      const password = `${username}-password-9q`;
      const made = await viaHome(stack.home, { method: 'POST', path: '/api/auth/users', token: admin.token, body: { username, password, level: 'USER', groups } });
      assert.equal(made.status, 200, made.text);
      const login = await viaProxy(stack.proxy.port, { method: 'POST', path: '/api/auth/authenticate', body: { username, password } });
      assert.equal(login.status, 200, login.text);
      const session = login.cookieToken ?? '';
      const token = await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/tokens', token: session, body: { name: `${prefix} script`, password } });
      assert.equal(token.status, 200, token.text);
      const { token: machineToken, id } = token.json as { token: string; id: string };
      return { username, session, machineToken, tokenId: id };
    }

    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app' });
      admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      member = await account('member', ['family', 'media']);
      outsider = await account('outsider', ['work']);
    });
    after(() => stack?.stop());

    it('lets a Bearer token and a Basic token through to the group app as their account, with its groups', async () => {
      for (const authorization of [`Bearer ${member.machineToken}`, basic(member.username, member.machineToken)]) {
        const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/album/7', headers: photos({ authorization, 'remote-user': 'root', 'remote-groups': 'family,admins' }) }));
        assert.equal(echo.url, '/album/7');
        assert.equal(echo.headers['remote-user'], member.username, authorization.slice(0, 6));
        assert.equal(echo.headers['remote-level'], 'USER');
        assert.equal(echo.headers['remote-groups'], 'family,media', 'the groups Gatehouse gave, not the forged ones');
        assert.equal(echo.headers['authorization'], undefined, `the app never sees a machine token (${authorization.slice(0, 6)})`);
      }
    });

    it('keeps a Basic machine token from the app even when the client claims Remote-Auth: session, and never passes Remote-Auth on', async () => {
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/album/12', headers: photos({ authorization: basic(member.username, member.machineToken), 'remote-auth': 'session' }) }));
      assert.equal(echo.headers['remote-user'], member.username);
      assert.equal(echo.headers['authorization'], undefined, 'the proxy followed Gatehouse\'s answer, not the client\'s header');
      assert.equal(echo.headers['remote-auth'], undefined);
    });

    it('passes an app\'s own Basic and Bearer credentials with a session, even when the client claims Remote-Auth: token', async () => {
      for (const authorization of [basic(member.username, 'the app\'s own password'), 'Bearer an-apps-own-token']) {
        for (const claimed of [{}, { 'remote-auth': 'token' }]) {
          const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/album/13', token: member.session, headers: photos({ authorization, ...claimed }) }));
          assert.equal(echo.headers['remote-user'], member.username);
          assert.equal(echo.headers['authorization'], authorization, `${authorization.slice(0, 6)} ${JSON.stringify(claimed)}`);
          assert.equal(echo.headers['remote-auth'], undefined);
        }
      }
    });

    it('lets a member of the group in with a session, and gives a non-member 403 with a session or a token', async () => {
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/album/8', token: member.session, headers: photos() }));
      assert.equal(echo.headers['remote-user'], member.username);
      const seen = stack.secondUpstream.seen.length;
      for (const request of [
        { token: outsider.session, headers: photos() },
        { headers: photos({ authorization: `Bearer ${outsider.machineToken}` }) },
        { headers: photos({ authorization: basic(outsider.username, outsider.machineToken) }) },
      ]) {
        const refused = await viaProxy(stack.proxy.port, { path: '/album/9', ...request });
        assert.equal(refused.status, 403, `${refused.status} ${refused.text}\n${stack.describe()}`);
      }
      assert.equal(stack.secondUpstream.seen.length, seen, 'no refused request reached the app');
    });

    it('lets the outsider\'s token into the app open to everyone signed in', async () => {
      const echo = echoOf(await viaProxy(stack.proxy.port, { path: '/notes', headers: { accept: API_ACCEPT, authorization: `Bearer ${outsider.machineToken}` } }));
      assert.equal(echo.headers['remote-user'], outsider.username);
      assert.equal(echo.headers['remote-groups'], 'work');
    });

    it('refuses a wrong, malformed or revoked token with 401, through the proxy', async () => {
      const seen = stack.secondUpstream.seen.length;
      for (const authorization of [`Bearer gh_${'A'.repeat(43)}`, 'Basic !!!not base64!!!', basic(outsider.username, member.machineToken)]) {
        const refused = await viaProxy(stack.proxy.port, { path: '/album/10', headers: photos({ authorization }) });
        assert.equal(refused.status, 401, `${authorization.slice(0, 30)}: ${refused.status} ${refused.text}`);
      }
      // nginx refuses a header line over its 8 KiB buffer itself (400); Caddy passes it to Gatehouse (401).
      const huge = await viaProxy(stack.proxy.port, { path: '/album/10', headers: photos({ authorization: `Bearer gh_${'A'.repeat(10 * 1024)}` }) });
      assert.equal(huge.status, kind === 'nginx' ? 400 : 401, huge.text);
      assert.equal(stack.secondUpstream.seen.length, seen, 'no refused request reached the app');
      const revoked = await account('revoked', ['family']);
      assert.equal((await viaProxy(stack.proxy.port, { path: '/album/11', headers: photos({ authorization: `Bearer ${revoked.machineToken}` }) })).status, 200);
      const removed = await viaHome(stack.home, { method: 'DELETE', path: `/api/auth/account/tokens/${revoked.tokenId}`, token: revoked.session });
      assert.equal(removed.status, 200, removed.text);
      assert.equal((await viaProxy(stack.proxy.port, { path: '/album/11', headers: photos({ authorization: `Bearer ${revoked.machineToken}` }) })).status, 401);
    });

    it('opens none of Gatehouse\'s own API with a token, through the proxy', async () => {
      const headers = { accept: API_ACCEPT, authorization: `Bearer ${member.machineToken}` };
      assert.equal((await viaHome(stack.home, { path: '/api/auth/users', headers })).status, 401);
      assert.equal((await viaHome(stack.home, { method: 'POST', path: '/api/auth/account/tokens', headers, body: { name: 'more' } })).status, 401);
      assert.equal((await viaProxy(stack.proxy.port, { path: '/api/auth/verify', headers })).status, 401);
    });
  });
}
