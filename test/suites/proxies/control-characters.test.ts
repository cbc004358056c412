// A control character in a header the gate's check reads (Cookie above all): nginx passes it on,
// Node's HTTP parser refuses it with 400 before any of Gatehouse's code runs, and nginx's
// auth_request turned that into a 500. The shared nginx part answers 400 itself; Caddy refuses
// such a request by itself. Either way: 400, never a 500, and the app is never reached.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { rawExchange } from '../../helpers/raw-socket.js';
import { registerVia, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

for (const kind of PROXY_KINDS) {
  describe(`control characters in headers through the app recipe on ${kind}`, () => {
    let stack: Stack;
    let user: ProxyUser;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app' });
      user = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
    });
    after(() => stack?.stop());

    for (const [header, value] of [
      ['Cookie', `a=1\x0bb; jwt=TOKEN`],
      ['Cookie', `a=1\x0cb; jwt=TOKEN`],
      ['Cookie', `jwt=TOKEN; a=\x01`],
      ['Cookie', `jwt=TOKEN; a=\x7f`],
      ['Accept', 'text/html\x0b'],
      ['User-Agent', 'wget\x0c'],
    ] as const) {
      it(`answers 400, not 500, to ${header}: ${JSON.stringify(value)}`, async () => {
        const sent = value.replace('TOKEN', user.token);
        const before = stack.upstream.seen.length;
        const head = `GET /page HTTP/1.1\r\nHost: 127.0.0.1:${stack.proxy.port}\r\nAccept: application/json\r\n${header}: ${sent}\r\nConnection: close\r\n\r\n`;
        const res = await rawExchange(stack.proxy.port, header === 'Accept' ? head.replace('Accept: application/json\r\n', '') : head, 10_000);
        assert.equal(res.status, 400, res.text.slice(0, 300));
        assert.equal(stack.upstream.seen.length, before);
      });
    }

    it('still passes a tab inside a cookie value, which HTTP allows', async () => {
      const head = `GET /page HTTP/1.1\r\nHost: 127.0.0.1:${stack.proxy.port}\r\nAccept: application/json\r\nCookie: a=1\tb; jwt=${user.token}\r\nConnection: close\r\n\r\n`;
      const res = await rawExchange(stack.proxy.port, head, 10_000);
      assert.equal(res.status, 200, res.text.slice(0, 300));
    });
  });
}
