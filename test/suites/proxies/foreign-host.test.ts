// Gatehouse reads where a request was sent from the Host (or X-Forwarded-Host) the proxy passes on,
// and answers accounts and administration only on its own site (docs/contract/own-origin.md). A
// client that is not a browser chooses the Host: through an app's site it must never reach
// Gatehouse as its own site. Raw requests to the app recipe's site, nginx and Caddy:
// - an absolute-form request naming the app whose Host names Gatehouse's own site (nginx chooses
//   the server block by the request line and passed the Host header on);
// - a Host the proxy reads up to its first ":" (`app.example.com:1,localhost:PORT`), which both
//   passed on whole, and whose last element Gatehouse read as a trusted proxy's X-Forwarded-Host;
// - (nginx) Gatehouse's own name, sent where the app's server block would be nginx's default.
// Probe: /gatehouse/users, a page row that answers 200 only on Gatehouse's own site.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, REPO_ROOT, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type ProxyKind, type Stack } from '../../helpers/proxies.js';
import { rawExchange, type RawResponse } from '../../helpers/raw-socket.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

const PROBE = '/gatehouse/users';
const APP_HOST = 'app.example.com';

/** deploy/nginx/apps.conf with its catch-all server first: the test's ports carry no `default_server`, so order makes it the default. */
function appsWithCatchAllFirst(): string {
  const text = readFileSync(join(REPO_ROOT, 'deploy/nginx/apps.conf'), 'utf8');
  const start = text.indexOf('server {\n    listen 80 default_server;');
  assert.ok(start > 0, 'deploy/nginx/apps.conf ends with a catch-all server that is the default');
  const end = text.indexOf('\n}\n', start) + 3;
  return `${text.slice(start, end)}\n${text.slice(0, start)}${text.slice(end)}`;
}

function send(port: number, requestLine: string, host: string): Promise<RawResponse> {
  return rawExchange(port, `${requestLine}\r\nHost: ${host}\r\nAccept: text/html\r\nConnection: close\r\n\r\n`, 10_000);
}

const brief = (res: RawResponse): string => `${res.statusLine}\n${res.body.slice(0, 300)}`;

for (const kind of PROXY_KINDS) {
  describe(`a Host the client chose, through the app recipe's site on ${kind}`, () => {
    let stack: Stack;
    before(async () => {
      assertBuilt();
      stack = await startStack({
        proxy: kind, recipe: 'app', publicUrl: true,
        ...(kind === 'nginx' ? { siteText: { nginx: appsWithCatchAllFirst(), caddy: '' } as Record<ProxyKind, string> } : {}),
      });
    });
    after(() => stack?.stop());

    it('answers the probe page on Gatehouse\'s own site only (the control)', async () => {
      const home = await send(stack.home.port, `GET ${PROBE} HTTP/1.1`, stack.home.host);
      assert.equal(home.status, 200, brief(home));
      // On an app's site Gatehouse sends the browser on to its own (--public-url).
      const app = await send(stack.proxy.port, `GET ${PROBE} HTTP/1.1`, `${APP_HOST}:${stack.proxy.port}`);
      assert.equal(app.status, 303, brief(app));
      assert.equal(app.headers['location'], `${stack.home.origin}${PROBE}`);
    });

    it('never lets an absolute-form request reach Gatehouse as its own site', async () => {
      const res = await send(stack.proxy.port, `GET http://${APP_HOST}:${stack.proxy.port}${PROBE} HTTP/1.1`, stack.home.host);
      // nginx refuses the Host that is not the request line's; Caddy takes the request line's host.
      assert.equal(res.status, kind === 'nginx' ? 400 : 303, brief(res));
    });

    for (const host of [
      (stack: Stack) => `${APP_HOST}:1,${stack.home.host}`,
      (stack: Stack) => `${APP_HOST}:${stack.proxy.port},${stack.home.host}`,
      (stack: Stack) => `${APP_HOST}:${stack.proxy.port}, ${stack.home.host}`,
    ]) {
      it(`refuses a Host that is not one name and port (${host({ home: { host: 'localhost:HOME' }, proxy: { port: 'PORT' } } as unknown as Stack)})`, async () => {
        const before = stack.upstream.seen.length;
        const res = await send(stack.proxy.port, `GET ${PROBE} HTTP/1.1`, host(stack));
        assert.equal(res.status, 400, brief(res));
        assert.equal(stack.upstream.seen.length, before, 'the app saw nothing');
      });
    }

    if (kind === 'nginx') {
      it('answers Gatehouse\'s own name on the apps\' port from the catch-all server, not from an app\'s', async () => {
        const res = await send(stack.proxy.port, `GET ${PROBE} HTTP/1.1`, stack.home.host);
        assert.equal(res.status, 421, brief(res));
      });
    }
  });
}
