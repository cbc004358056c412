// The lines docs/deploy.md ("Signing out") shows for an app whose pages must not outlive the
// session: through a real nginx and Caddy, on the shared snippets, the app's answers reach the
// browser with exactly one `Cache-Control: private, no-store`, its own header replaced; the gate
// still stands in front of them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, REPO_ROOT, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { API_ACCEPT, registerVia, viaProxy, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

// The locations docs/deploy.md shows (the test below checks it holds them verbatim).
const LOCATIONS = {
  nginx: `    location / {
        include gatehouse/protect.conf;
        proxy_pass http://127.0.0.1:8080;
        # The browser keeps none of the app's answers, so none shows after signing out.
        proxy_hide_header Cache-Control;
        add_header Cache-Control "private, no-store" always;
    }
`,
  caddy: `	handle {
		# The browser keeps none of the app's answers, so none shows after signing out.
		header Cache-Control "private, no-store" {
			defer
		}
		import gatehouse_protect 127.0.0.1:8080
	}
`,
};

const SITES = {
  nginx: `server {
    listen 80;
    server_name app.example.com;
    include gatehouse/site.conf;

${LOCATIONS.nginx}}
`,
  caddy: `import /etc/caddy/gatehouse.caddy

auth.example.com {
	import gatehouse_home
}

app.example.com {
	import gatehouse_site

${LOCATIONS.caddy}}
`,
};

describe('docs/deploy.md', () => {
  const docs = readFileSync(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
  for (const kind of PROXY_KINDS) {
    it(`shows the ${kind} lines for Cache-Control as the tests run them`, () => {
      assert.ok(docs.includes(LOCATIONS[kind]), `docs/deploy.md holds the ${kind} lines verbatim:\n${LOCATIONS[kind]}`);
    });
  }
});

for (const kind of PROXY_KINDS) {
  describe(`an app's answers not kept by the browser, on ${kind}`, () => {
    let stack: Stack;
    let user: ProxyUser;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'app', siteText: SITES });
      user = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
    });
    after(() => stack?.stop());

    for (const path of ['/notes', '/cacheable']) {
      it(`answers ${path} with exactly one Cache-Control: private, no-store${path === '/cacheable' ? ', in place of the app\'s own' : ''}`, async () => {
        const answer = await viaProxy(stack.proxy.port, { path, token: user.token, headers: { accept: API_ACCEPT } });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['cache-control'], 'private, no-store', JSON.stringify(answer.headers));
        assert.equal(stack.upstream.seen.filter((seen) => seen.url === path).length, 1);
      });
    }

    it('still sends a request without a session to the gate, not the app', async () => {
      const refused = await viaProxy(stack.proxy.port, { path: '/private', headers: { accept: API_ACCEPT } });
      assert.equal(refused.status, 401, refused.text);
      assert.deepEqual(stack.upstream.seen.filter((seen) => seen.url === '/private'), []);
    });
  });
}
