// The Dockerfile's image on its own, as docs/docker.md runs it: built (on a stand-in base: this
// machine cannot pull node:20-alpine), run with a named volume and a port published on
// 127.0.0.1, healthy by its own HEALTHCHECK, uid 1000, an offline command on the volume while the
// service is stopped, and `stop` ending it with exit 0 (not the engine's SIGKILL after 10 s).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { freePort, httpCall, REPO_ROOT } from '../../helpers/process.js';
import { waitFor } from './compose-cases.js';
import type { Engine } from './engines.js';

const PASSWORD = 'image-admin-password-1';

/**
 * The image cases on `engine()` (started by the file's before(); `engineName` titles them).
 * Returns the image they build, for the file's after() to remove: kept until then, its layers
 * are the compose build's cache.
 */
export function describeImage(engineName: string, engine: () => Engine, standIn: string, project: string): string {
  const image = `localhost/${project}-image:latest`;
  const container = `${project}-alone`;
  const volume = `${project}-data`;
  // Docker here has no default bridge (docker-daemon.ts): the container joins a network of its own on both engines.
  const network = `${project}-net`;
  let port = 0;
  const cli = (args: readonly string[], timeoutMs?: number): Promise<string> => engine().cliRun(args, timeoutMs);
  const inspect = async (format: string): Promise<string> => (await cli(['inspect', container, '--format', format])).trim();

  describe(`the Dockerfile's image under ${engineName}`, () => {
    before(async () => {
      port = await freePort();
      await cli(['build', ...engine().buildArgs, '--build-arg', `NODE_IMAGE=${standIn}-node`, '-t', image, REPO_ROOT], 600_000);
      await cli(['network', 'create', network]);
      await cli(['volume', 'create', volume]);
    });

    after(() => {
      const { cli: program, env } = engine();
      for (const args of [['rm', '-f', container], ['volume', 'rm', '-f', volume], ['network', 'rm', network]]) spawnSync(program, args, { env });
    });

    it('keeps its health check (GET /healthz) and its user, node', async () => {
      type Check = { Test?: string[] } | undefined;
      const [inspected] = JSON.parse(await cli(['image', 'inspect', image])) as Array<{ Config?: { Healthcheck?: Check; User?: string }; Healthcheck?: Check }>;
      // Docker keeps the check in Config.Healthcheck; podman shows it as Healthcheck beside Config.
      const check = inspected?.Config?.Healthcheck ?? inspected?.Healthcheck;
      assert.match(JSON.stringify(check?.Test), /\/healthz/, JSON.stringify(inspected));
      assert.equal(inspected?.Config?.User, 'node');
    });

    it('runs as written: answers on the published port, as uid 1000, and turns healthy by its own check', async () => {
      await cli(['run', '-d', '--name', container, '--network', network, '-p', `127.0.0.1:${port}:3000`, '-v', `${volume}:/data`, image]);
      await waitFor('Gatehouse did not answer /healthz on the published port', async () => (await httpCall(port, { path: '/healthz' })).status === 200);
      assert.equal((await cli(['exec', container, 'node', '-e', 'process.stdout.write(String(process.getuid()))'])).trim(), '1000');
      if (engine().name === 'docker') {
        // Docker runs the check itself, first after the image's 30 s interval.
        await waitFor('the container did not turn healthy', async () => (await inspect('{{.State.Health.Status}}')) === 'healthy', 90_000);
      } else {
        // podman schedules health checks only through systemd timers, which this machine lacks; run it by hand, as docs/docker.md says.
        const checked = spawnSync('podman', ['healthcheck', 'run', container], { env: engine().env, encoding: 'utf8', timeout: 30_000 });
        assert.equal(checked.status, 0, `${checked.stdout}\n${checked.stderr}`);
      }
    });

    it('stops on `stop` with exit 0, before the engine would kill it; an offline command then works on the volume and the service starts again', async () => {
      await cli(['stop', container], 60_000);
      assert.equal(await inspect('{{.State.Status}} {{.State.ExitCode}}'), 'exited 0');
      const logs = spawnSync(engine().cli, ['logs', container], { env: engine().env, encoding: 'utf8' });
      assert.match(logs.stdout + logs.stderr, /"msg":"stopped"/);

      const added = spawnSync(engine().cli, ['run', '--rm', '-i', '--network', network, '-v', `${volume}:/data`, image, 'node', 'dist/cli.js', 'users', 'add', 'admin', '--level', 'ADMINISTRATOR', '--password-stdin'], { env: engine().env, input: `${PASSWORD}\n`, encoding: 'utf8', timeout: 60_000 });
      assert.equal(added.status, 0, `${added.stdout}\n${added.stderr}`);
      await cli(['start', container]);
      await waitFor('Gatehouse did not come back with the account', async () => (await httpCall(port, { method: 'POST', path: '/api/auth/authenticate', body: { username: 'admin', password: PASSWORD } })).status === 200);
    });
  });
  return image;
}
