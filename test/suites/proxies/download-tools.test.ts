// Flood's download links (`?token=` in the URL, no cookie) fetched by the real wget and curl
// through the Flood recipe, run by a real nginx and a real Caddy: a token in a URL still works
// for download tools, while a browser's page load ignores it (test/api/forward-url-token.test.ts).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs } from '../../helpers/process.js';
import { PROXY_KINDS, startStack, stopAllProxies, type Stack } from '../../helpers/proxies.js';
import { registerVia, type ProxyUser } from './through-proxy.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

/** Runs a download tool, bounded in time; resolves with what it wrote to standard output. */
function run(command: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 15_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

const TOOLS: ReadonlyArray<{ name: string; args: (url: string) => string[] }> = [
  { name: '/usr/bin/wget', args: (url) => ['-q', '-O', '-', url] },
  { name: '/usr/bin/curl', args: (url) => ['-s', '-f', url] },
];

for (const kind of PROXY_KINDS) {
  describe(`Flood's download links fetched by download tools through ${kind}`, () => {
    let stack: Stack;
    let user: ProxyUser;
    before(async () => {
      assertBuilt();
      stack = await startStack({ proxy: kind, recipe: 'flood' });
      const admin = await registerVia(stack.home, { level: 'ADMINISTRATOR' });
      user = await registerVia(stack.home, { level: 'USER', adminToken: admin.token });
    });
    after(() => stack?.stop());

    for (const tool of TOOLS) {
      it(`lets ${tool.name.split('/').at(-1)} through on the link's ?token= alone, and refuses a wrong token`, async () => {
        const path = `/api/torrents/ABCDEF/contents/0/data?token=${encodeURIComponent(user.token)}`;
        const fetched = await run(tool.name, tool.args(`${stack.proxy.origin}${path}`));
        assert.equal(fetched.code, 0, `${fetched.stderr}\n${stack.describe().slice(-1_500)}`);
        const echo = JSON.parse(fetched.stdout) as { url: string; headers: Record<string, string> };
        assert.equal(echo.url, path);
        assert.equal(echo.headers['remote-user'], user.username);
        assert.equal(echo.headers['cookie'], `jwt=${stack.floodToken}`);
        const refused = await run(tool.name, tool.args(`${stack.proxy.origin}/api/torrents/ABCDEF/contents/0/data?token=not-a-token`));
        assert.notEqual(refused.code, 0, 'a wrong token is refused');
      });
    }
  });
}
