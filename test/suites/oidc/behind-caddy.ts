// What the oidc suite's browser tests of Gatehouse's own pages share: Gatehouse behind Caddy as it is
// deployed (its own host name, here localhost, as the issuer), a first administrator, Chromium, and
// a small app of the test's own on 127.0.0.1 (another site) that serves whatever pages a test gives
// it. Every API call goes through Caddy to the issuer's origin, as a browser's would.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Chromium, type Page } from '../../helpers/chromium.js';
import {
  assertBuilt, CLIENT_SETTINGS, freePort, httpCall, killAllChildren, removeTempDirs, startServe, tempDir, type CallResult, type ServeProcess,
} from '../../helpers/process.js';
import { startCaddy, stopAllProxies, type RunningProxy } from '../../helpers/proxies.js';

export const ADMIN = 'root';
export const ADMIN_PASSWORD = 'root-password-7k';

/** The test's own app: answers each path with what `route` returns for it (404 for undefined). */
export type AppRoute = (path: string, query: URLSearchParams, req: IncomingMessage) => { readonly status?: number; readonly type?: string; readonly body: string } | undefined;

export interface Stand {
  readonly browser: Chromium;
  readonly gatehouse: ServeProcess;
  readonly caddy: RunningProxy;
  /** Gatehouse's public URL through Caddy: the issuer and Gatehouse's own origin. */
  readonly issuer: string;
  /** The app's origin, another site than the issuer's. */
  readonly appOrigin: string;
  /** Another origin serving the same pages (another port): one no app registered. */
  readonly strangerOrigin: string;
  adminToken: string;
  /** What the app serves; tests replace it. */
  appRoute: AppRoute;
  /** A request to Gatehouse through Caddy, with the issuer's Host, as `token` (the administrator's by default). */
  api(method: string, path: string, body?: unknown, options?: { readonly token?: string | null; readonly headers?: Record<string, string> }): Promise<CallResult>;
  /** A new page, closed with the stand. */
  newPage(): Promise<Page>;
  /** A new page signed in on Gatehouse's sign-in page as `username`, then at `to` (a path on the issuer). */
  signedIn(to: string, username?: string, password?: string): Promise<Page>;
  close(): Promise<void>;
}

export async function startStand(): Promise<Stand> {
  assertBuilt();
  const gatehousePort = await freePort();
  const caddy = await startCaddy((port) => `http://:${port} {\n\tbind 127.0.0.1\n\treverse_proxy 127.0.0.1:${gatehousePort}\n}\n`);
  const issuer = `http://localhost:${caddy.port}`;
  const gatehouse = await startServe([
    '--host', '127.0.0.1', '--port', String(gatehousePort), '--data-dir', await tempDir(), '--public-url', issuer, '--trust-proxy', '127.0.0.1',
  ]);
  const pages: Page[] = [];
  let app: Server | undefined;
  let stranger: Server | undefined;
  let browser: Chromium | undefined;
  try {
    const serve = (req: IncomingMessage, res: ServerResponse): void => {
      const url = new URL(req.url ?? '/', 'http://app.invalid');
      const answer = stand.appRoute(url.pathname, url.searchParams, req);
      res.writeHead(answer?.status ?? (answer === undefined ? 404 : 200), { 'content-type': answer?.type ?? 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(answer?.body ?? 'not found');
    };
    const listen = async (server: Server): Promise<string> => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    const appServer = createServer(serve);
    app = appServer;
    const appOrigin = await listen(appServer);
    const strangerServer = createServer(serve);
    stranger = strangerServer;
    const strangerOrigin = await listen(strangerServer);
    browser = await Chromium.launch();
    const launched = browser;
    const stand: Stand = {
      browser: launched, gatehouse, caddy, issuer, appOrigin, strangerOrigin, adminToken: '',
      appRoute: () => undefined,
      api(method, path, body, options = {}) {
        const token = options.token === undefined ? stand.adminToken : options.token;
        return httpCall(caddy.port, {
          method, path, headers: { host: `localhost:${caddy.port}`, ...options.headers },
          ...(token === null ? {} : { token }), ...(body === undefined ? {} : { body }),
        });
      },
      async newPage() {
        const page = await launched.newPage();
        pages.push(page);
        return page;
      },
      async signedIn(to, username = ADMIN, password = ADMIN_PASSWORD) {
        const page = await stand.newPage();
        await page.navigate(`${issuer}/login?rd=${encodeURIComponent(`${issuer}${to}`)}`);
        await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
        await page.evaluate(`(() => {
          document.getElementById('username').value = ${JSON.stringify(username)};
          document.getElementById('password').value = ${JSON.stringify(password)};
          document.getElementById('login').requestSubmit();
          return true;
        })()`);
        await page.waitForUrl((url) => url.origin === issuer && `${url.pathname}${url.search}` === to);
        return page;
      },
      async close() {
        for (const page of pages) await page.close().catch(() => undefined);
        await launched.close();
        await new Promise<void>((resolve) => appServer.close(() => resolve()));
        await new Promise<void>((resolve) => strangerServer.close(() => resolve()));
        await gatehouse.stop();
        await stopAllProxies();
        await killAllChildren();
        await removeTempDirs();
      },
    };
    const first = await stand.api('POST', '/api/auth/register', { username: ADMIN, password: ADMIN_PASSWORD, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' }, { token: null });
    assert.equal(first.status, 200, first.text);
    stand.adminToken = first.cookieToken ?? '';
    return stand;
  } catch (error) {
    await browser?.close();
    app?.close();
    stranger?.close();
    await gatehouse.stop();
    await stopAllProxies();
    throw error;
  }
}
