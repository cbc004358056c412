// Locations the probe cannot see, through real nginx and Caddy sites: beside the app, a WebSocket
// server at /ws and static .png files, each its own location. `gatehouse doctor URL [URL...]` and
// `--paths FILE` check each further URL with a request and a WebSocket upgrade without a session:
// neither may reach the app (no 2xx, no 101). Every report ends with what the probe cannot see.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, killAllChildren, removeTempDirs, tempDir } from '../../helpers/process.js';
import { stopAllProxies } from '../../helpers/proxies.js';
import { sendRequest } from '../../helpers/server.js';
import { assertOnlyFailed, PNG_BYTES, runDoctor, startSite } from './doctor-sites.js';

after(async () => {
  await stopAllProxies();
  await killAllChildren();
  await removeTempDirs();
});

const behindTheGate = (stdout: string): string[] => stdout.split('\n').filter((line) => /^(ok|FAIL|skip) +behind the gate: /.test(line));

for (const kind of ['nginx', 'caddy'] as const) {
  describe(`gatehouse doctor on the app's other locations, through ${kind}`, () => {
    before(() => assertBuilt());

    it('passes when /ws and *.png are behind the gate too, given as further URLs or in a --paths file', async () => {
      const site = await startSite(kind, { otherLocations: true });
      try {
        const given = await runDoctor(site, [`${site.origin}/reports/2026?x=1`, '/ws', `${site.origin}/static/logo.png`]);
        assertOnlyFailed(given, [], site);
        assert.deepEqual(behindTheGate(given.stdout).map((line) => line.replace(/:\d+/, ':PORT')), [
          'ok    behind the gate: http://127.0.0.1:PORT/ws: 401 from Gatehouse without a session; a WebSocket upgrade without a session got 401, not the app',
          'ok    behind the gate: http://127.0.0.1:PORT/static/logo.png: 401 from Gatehouse without a session; a WebSocket upgrade without a session got 401, not the app',
        ]);
        const paths = join(await tempDir('gatehouse-doctor-paths-'), 'paths.txt');
        await writeFile(paths, '# the app\'s other locations\n/ws\n\n/static/logo.png\n');
        const listed = await runDoctor(site, [`${site.origin}/`], ['--paths', paths]);
        assertOnlyFailed(listed, [], site);
        assert.equal(behindTheGate(listed.stdout).length, 2, listed.stdout);
      } finally {
        await site.stop();
      }
    });

    it('names each further URL that reaches the app without a session: the WebSocket upgrade (101) and the static file (200)', async () => {
      const site = await startSite(kind, { otherLocations: true, mistake: 'others-ungated' });
      try {
        // What an attacker gets there, without the doctor: the file, and an open WebSocket.
        const file = await sendRequest(site.proxy.port, { path: '/static/logo.png' });
        assert.equal(file.status, 200);
        assert.equal(file.text, PNG_BYTES.toString());
        const paths = join(await tempDir('gatehouse-doctor-paths-'), 'paths.txt');
        await writeFile(paths, '/ws\n/static/logo.png\n');
        const run = await runDoctor(site, [`${site.origin}/reports/2026?x=1`], ['--paths', paths]);
        // The app's own location is right, so every probe-based check passes: only these two show it.
        assertOnlyFailed(run, ['behind the gate'], site);
        const fix = kind === 'nginx'
          ? 'Fix: nginx: include gatehouse/protect.conf in the location that serves this URL'
          : 'Fix: Caddy: import gatehouse_protect in the handle block that serves this URL';
        const [ws = '', png = ''] = behindTheGate(run.stdout);
        assert.match(ws, new RegExp(`^FAIL +behind the gate: http://127\\.0\\.0\\.1:\\d+/ws: a request without a session got 426 Upgrade Required, .* is not behind forward auth; a WebSocket upgrade without a session reached the app too \\(101\\)\\. ${fix}`));
        assert.match(png, new RegExp(`^FAIL +behind the gate: http://127\\.0\\.0\\.1:\\d+/static/logo\\.png: an API request without a session reached the app \\(200\\): .* is not behind forward auth; .*${fix}`));
        assert.match(run.stdout, /^15 of 17 checks passed; 2 failed\.$/m);
      } finally {
        await site.stop();
      }
    });
  });
}
