// The gate's pages in a real browser, through a real nginx and Caddy: the 403 page a signed-in user
// without the right level sees (Caddy passes the gate's body on; nginx shows it when its
// error_page 403 asks Gatehouse again), its "sign in as someone else" link, and {base}/logout.
// With GATEHOUSE_SCREENSHOT_DIR set, the 403 page is saved at desktop and phone width there.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Chromium, type Page } from '../../helpers/chromium.js';
import { assertBuilt, tempDir, CLIENT_SETTINGS, killAllChildren, removeTempDirs, startServe, type ServeProcess } from '../../helpers/process.js';
import { PROXY_KINDS, startCaddy, startNginx, startUpstream, stopAllProxies, type ProxyKind, type RunningProxy, type Upstream } from '../../helpers/proxies.js';
import { sendRequest } from '../../helpers/server.js';

let browser: Chromium | undefined;

before(async () => {
  assertBuilt();
  browser = await Chromium.launch();
});

after(async () => {
  await browser?.close();
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

function nginxSite(port: number, gatehouse: number, appPort: number): string {
  const check = (query: string): string => `
        internal;
        proxy_pass http://127.0.0.1:${gatehouse}/api/auth/forward${query};
        proxy_pass_request_body off;
        proxy_set_header Content-Length "";
        proxy_set_header X-Original-URI $request_uri;
        proxy_set_header X-Forwarded-Uri "";
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;`;
  // Asked again after a refusal, now with login=: a browser gets the redirect (401) or the page (403).
  const again = (query: string): string => `
        rewrite ^ /api/auth/forward?${query}login=/login? break;
        proxy_pass http://127.0.0.1:${gatehouse};
        proxy_method GET;
        proxy_pass_request_body off;
        proxy_set_header Content-Length "";
        proxy_set_header X-Forwarded-Uri $request_uri;
        proxy_set_header X-Original-URI "";
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_buffer_size 32k;
        proxy_buffers 4 32k;
        proxy_busy_buffers_size 32k;`;
  const gatedApp = (check: string, login: string, forbidden: string): string => `
        auth_request ${check};
        auth_request_set $gatehouse_user $upstream_http_remote_user;
        error_page 401 = ${login};
        ${forbidden === '' ? '' : `error_page 403 = ${forbidden};`}
        proxy_pass http://127.0.0.1:${appPort};
        proxy_set_header Remote-User $gatehouse_user;
        proxy_set_header Cookie "";`;
  return `
server {
    listen 127.0.0.1:${port};
    location = /_gatehouse/forward {${check('')}
    }
    location = /_gatehouse/forward-administrator {${check('?level=ADMINISTRATOR')}
    }
    location @gatehouse_login {${again('')}
    }
    location @gatehouse_login_administrator {${again('level=ADMINISTRATOR&')}
    }
    location @gatehouse_forbidden_administrator {${again('level=ADMINISTRATOR&')}
    }
    location /api/auth/ {
        proxy_pass http://127.0.0.1:${gatehouse};
        proxy_set_header Host $http_host;
    }
    location = /login {
        proxy_pass http://127.0.0.1:${gatehouse};
    }
    location = /logout {
        proxy_pass http://127.0.0.1:${gatehouse};
    }
    location /admin/ {${gatedApp('/_gatehouse/forward-administrator', '@gatehouse_login_administrator', '@gatehouse_forbidden_administrator')}
    }
    location / {${gatedApp('/_gatehouse/forward', '@gatehouse_login', '')}
    }
}
`;
}

function caddySite(port: number, gatehouse: number, app: number): string {
  const gated = (query: string): string => `
		route {
			request_header -Remote-User
			forward_auth 127.0.0.1:${gatehouse} {
				uri /api/auth/forward?${query}login=/login
				copy_headers Remote-User
				header_up -X-Original-URI
			}
			reverse_proxy 127.0.0.1:${app} {
				header_up -Cookie
			}
		}`;
  return `
http://127.0.0.1:${port} {
	handle /api/auth/* {
		reverse_proxy 127.0.0.1:${gatehouse}
	}
	handle /login {
		reverse_proxy 127.0.0.1:${gatehouse}
	}
	handle /logout {
		reverse_proxy 127.0.0.1:${gatehouse}
	}
	handle /admin/* {${gated('level=ADMINISTRATOR&')}
	}
	handle {${gated('')}
	}
}
`;
}

async function submitLogin(page: Page, username: string, password: string): Promise<void> {
  await page.waitFor(`document.readyState === 'complete' && document.getElementById('login') !== null`);
  await page.evaluate(`(() => {
    document.getElementById('username').value = ${JSON.stringify(username)};
    document.getElementById('password').value = ${JSON.stringify(password)};
    document.getElementById('login').requestSubmit();
    return true;
  })()`);
}

async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env['GATEHOUSE_SCREENSHOT_DIR'];
  if (dir === undefined || dir === '') return;
  for (const [width, label] of [[1280, 'desktop'], [390, 'phone']] as const) {
    await page.send('Emulation.setDeviceMetricsOverride', { width, height: 800, deviceScaleFactor: 1, mobile: width < 500 });
    const shot = await page.send('Page.captureScreenshot', { format: 'png' });
    await writeFile(join(dir, `${name}-${label}.png`), Buffer.from(String(shot['data']), 'base64'));
  }
  await page.send('Emulation.clearDeviceMetricsOverride');
}

for (const kind of PROXY_KINDS) {
  describe(`the gate's pages in Chromium, through ${kind}`, () => {
    let gatehouse: ServeProcess;
    let upstream: Upstream;
    let proxy: RunningProxy;
    const user = { username: 'Zoë <user>', password: 'user-password-1' };
    const admin = { username: 'admin', password: 'admin-password-1' };
    before(async () => {
      const dataDir = await tempDir('gatehouse-pages-');
      gatehouse = await startServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--trust-proxy', '127.0.0.1']);
      upstream = await startUpstream();
      const render = (port: number): string => (kind === ('nginx' satisfies ProxyKind) ? nginxSite(port, gatehouse.port, upstream.port) : caddySite(port, gatehouse.port, upstream.port));
      proxy = kind === 'nginx' ? await startNginx(render) : await startCaddy(render);
      const first = await sendRequest(gatehouse.port, { method: 'POST', path: '/api/auth/register', body: { ...admin, client: CLIENT_SETTINGS, level: 'ADMINISTRATOR' } });
      assert.equal(first.status, 200, first.text);
      const second = await sendRequest(gatehouse.port, { method: 'POST', path: '/api/auth/register?cookie=false', token: first.cookieToken ?? '', body: { ...user, client: CLIENT_SETTINGS, level: 'USER' } });
      assert.equal(second.status, 200, second.text);
    });
    after(async () => {
      await proxy?.stop();
      await upstream?.close();
      await gatehouse?.stop();
    });

    it('shows a signed-in user without the level a page saying who they are and what is missing, and signs in as someone else from it', async () => {
      assert.ok(browser !== undefined);
      const page = await browser.newPage();
      try {
        await page.navigate(`${proxy.origin}/admin/reports?y=2026`);
        await page.waitForUrl((url) => url.pathname === '/login');
        await submitLogin(page, user.username, user.password);
        await page.waitForUrl((url) => url.pathname === '/admin/reports');
        const shown = await page.waitFor<string>(`document.getElementById('username') ? document.querySelector('main').innerText : ''`);
        assert.match(shown, /signed in as Zoë <user>\./);
        assert.match(shown, /an administrator account/);
        assert.equal(await page.evaluate('document.title'), 'Not allowed');
        assert.deepEqual(page.problems.filter((problem) => !/status of (401|403)/.test(problem.text)), []);
        await screenshot(page, `forbidden-${kind}`);

        await page.evaluate(`document.getElementById('switch').click()`);
        await page.waitForUrl((url) => url.pathname === '/login' && url.searchParams.get('rd') === `${proxy.origin}/admin/reports?y=2026`);
        assert.deepEqual((await page.cookies(proxy.origin)).filter((cookie) => cookie.name === 'jwt'), [], 'signed out');
        await submitLogin(page, admin.username, admin.password);
        await page.waitForUrl((url) => url.pathname === '/admin/reports');
        const echo = await page.waitFor<string>(`document.body && document.body.innerText.startsWith('{') ? document.body.innerText : ''`);
        assert.equal((JSON.parse(echo) as { headers: Record<string, string> }).headers['remote-user'], 'admin');
      } finally {
        await page.close();
      }
    });

    it('signs out at /logout and shows the sign-in page, never JSON', async () => {
      assert.ok(browser !== undefined);
      const page = await browser.newPage();
      try {
        await page.navigate(`${proxy.origin}/login`);
        await submitLogin(page, admin.username, admin.password);
        await page.waitForUrl((url) => url.pathname === '/');
        assert.equal((await page.cookies(proxy.origin)).filter((cookie) => cookie.name === 'jwt').length, 1);
        await page.navigate(`${proxy.origin}/logout`);
        await page.waitForUrl((url) => url.pathname === '/login');
        await page.waitFor(`document.getElementById('login') !== null`);
        assert.deepEqual((await page.cookies(proxy.origin)).filter((cookie) => cookie.name === 'jwt'), []);
        await page.navigate(`${proxy.origin}/`);
        await page.waitForUrl((url) => url.pathname === '/login');
      } finally {
        await page.close();
      }
    });
  });
}
