// Paths with a backslash through the app recipes: a WHATWG URL parser (browsers, Node's URL, many
// app routers) reads `\` as `/` and resolves dot segments around it, so `/x\..\admin` is `/admin`
// to the app while the proxy, which only knows `/`, sees a path elsewhere. The recipes refuse
// every path holding a backslash (raw or %5C) with 400, before any check or app.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { API_ACCEPT, echoOf, registerVia, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

const BACKSLASH_PATHS = ['/x\\..\\admin', '/x/..\\admin', '/..\\admin', '/x\\..\\admin\\users', '/x%5c..%5cadmin', '/x%5C%2e%2e%5Cadmin', '/x/%2e%2e\\admin', '/admin\\x', '/admin%5cx', '/files\\report.pdf'];

for (const kind of PROXY_KINDS) {
  describe(`backslashes in paths through the app recipe on ${kind}`, () => {
    let stack: Stack;
    let admin: ProxyUser;
    let user: ProxyUser;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app' });
      admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      user = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
    });
    after(() => stack?.stop());

    for (const path of BACKSLASH_PATHS) {
      it(`refuses ${path} with 400 for a user and an administrator alike, and the app never sees it`, async () => {
        for (const token of [user.token, admin.token]) {
          const res = await viaProxy(stack.proxy.port, { path, token, headers: { accept: API_ACCEPT } });
          assert.equal(res.status, 400, `${path}: ${res.status} ${res.text.slice(0, 200)}`);
        }
        assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url === path), []);
      });
    }

    it('still passes paths with dots and slashes that hold no backslash', async () => {
      for (const path of ['/x/../page', '/a.b/c..d', '/x/%2e%2e/page', '/x/y/']) {
        const res = await viaProxy(stack.proxy.port, { path, token: user.token, headers: { accept: API_ACCEPT } });
        assert.notEqual(res.status, 400, `${path}: ${res.text.slice(0, 200)}`);
        if (res.status === 200) assert.equal(echoOf(res).headers['remote-user'], user.username);
      }
    });
  });
}
