// The container engines the containers suite runs on: rootful podman with podman-compose, and
// Debian's Docker (dockerd started by the test, docker-data-root in a temp dir) with
// docker-compose. Each needs root and its Debian packages; a missing one fails, never skips.
import { execFile, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, tempDir } from '../../helpers/process.js';
import { DOCKER_CLI, startDockerDaemon } from './docker-daemon.js';

const run = promisify(execFile);

export type EngineName = 'podman' | 'docker';

export interface Engine {
  readonly name: EngineName;
  /** The engine's own program. */
  readonly cli: string;
  /** The compose program, and the Debian package it comes from. */
  readonly compose: string;
  /** Arguments every image build of the Dockerfile takes on this engine, and why. */
  readonly buildArgs: readonly string[];
  /** The environment for the engine and its compose (the daemon's socket, podman's limits). */
  readonly env: NodeJS.ProcessEnv;
  /** Versions, as they answered: the test prints it, and the docs name what was run. */
  readonly description: string;
  /** Runs the engine's program; rejects with its output on failure. */
  cliRun(args: readonly string[], timeoutMs?: number): Promise<string>;
  /** Builds the stand-in images (stand-in-images.sh) under `prefix` and checks a container runs. */
  buildStandIns(prefix: string): Promise<void>;
  /** Removes these images (ignoring missing ones) and the dangling layers of the builds. */
  removeImages(images: readonly string[]): void;
  /**
   * Fixes the MAC address of these networks' bridges, as docs/compose.md tells users of podman
   * with netavark before 1.9 to do after `up` (Docker fixes its bridges' addresses itself).
   */
  fixBridgeAddresses(networks: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/** What `program args` prints; throws when it is missing or fails. */
const versionOf = (program: string, args: readonly string[]): string => {
  const answer = spawnSync(program, args, { encoding: 'utf8', timeout: 30_000 });
  if (answer.status !== 0) throw new Error(`${program} is not installed or does not run (${args.join(' ')}): .ci/run installs it\n${answer.stderr ?? ''}`);
  return answer.stdout.trim();
};

export async function startEngine(name: EngineName): Promise<Engine> {
  if (process.getuid?.() !== 0) throw new Error('the containers suite needs root (rootful podman, dockerd): run it as root, as CI does');
  if (name === 'podman') {
    const podmanVersion = versionOf('podman', ['--version']);
    const composeVersion = /podman-composer? version\s+(\S+)/.exec(versionOf('podman-compose', ['version']))?.[1] ?? 'of unknown version';
    // This sandbox has no CAP_SYS_RESOURCE, so podman's default RLIMIT_NOFILE (above the hard
    // limit here) cannot be set in a container: ask for the limits this process already has.
    const limits = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
    const containersConf = join(await tempDir('gatehouse-containers-'), 'containers.conf');
    await writeFile(containersConf, `[containers]\ndefault_ulimits = ["nofile=${limits}:${limits}", "nproc=4096:4096"]\n`);
    // Docker's image format for every build, compose's too: podman caches layers per format, and
    // so the compose build reuses the image cases' layers instead of running npm ci and tsc again.
    const env = { ...process.env, CONTAINERS_CONF: containersConf, BUILDAH_FORMAT: 'docker' };
    return engine({
      name, cli: 'podman', compose: 'podman-compose', env,
      // Docker's image format, as docs/docker.md writes it: the OCI format drops HEALTHCHECK.
      buildArgs: ['--format', 'docker'],
      description: `${podmanVersion}, podman-compose ${composeVersion}`,
      fixBridgeAddresses: async (networks) => {
        for (const network of networks) {
          const bridge = (await run('podman', ['network', 'inspect', network, '--format', '{{.NetworkInterface}}'], { env })).stdout.trim();
          const address = (await readFile(`/sys/class/net/${bridge}/address`, 'utf8')).trim();
          await run('ip', ['link', 'set', 'dev', bridge, 'address', address]);
        }
      },
      stop: async () => undefined,
    });
  }
  const composeVersion = versionOf('docker-compose', ['version', '--short']);
  const daemon = await startDockerDaemon();
  return engine({
    name, cli: DOCKER_CLI, compose: 'docker-compose', env: daemon.env,
    // The daemon started here gives containers no way out (docker-daemon.ts): npm ci in the
    // build stage downloads through the host's network.
    buildArgs: ['--network', 'host'],
    description: `${daemon.description}; docker-compose ${composeVersion}`,
    fixBridgeAddresses: async () => undefined,
    stop: () => daemon.stop(),
  });
}

function engine(parts: Pick<Engine, 'name' | 'cli' | 'compose' | 'env' | 'buildArgs' | 'description' | 'fixBridgeAddresses' | 'stop'>): Engine {
  const { cli, env } = parts;
  return {
    ...parts,
    async cliRun(args, timeoutMs = 60_000) {
      try {
        return (await run(cli, args, { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 })).stdout;
      } catch (error) {
        const failed = error as { stdout?: string; stderr?: string; message: string };
        throw new Error(`${parts.name} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
      }
    },
    async buildStandIns(prefix) {
      const built = spawnSync('sh', [join(REPO_ROOT, 'test/suites/containers/stand-in-images.sh'), prefix], { env: { ...env, ENGINE: cli }, encoding: 'utf8', timeout: 180_000 });
      if (built.status !== 0) throw new Error(`building the stand-in images with ${parts.name} failed:\n${built.stdout}\n${built.stderr}`);
      const probe = spawnSync(cli, ['run', '--rm', `${prefix}-node`, 'node', '-e', 'console.log("ok")'], { env, encoding: 'utf8', timeout: 60_000 });
      if (probe.stdout.trim() !== 'ok') {
        throw new Error(`${parts.name} cannot run a container here: ${probe.stderr.trim()}\n(podman's "cgroups in hybrid mode not supported": run test/suites/containers/prepare-host.sh as root first, as .ci/run does)`);
      }
    },
    removeImages(images) {
      for (const image of images) spawnSync(cli, ['rmi', '-f', image], { env });
      spawnSync(cli, ['image', 'prune', '-f'], { env });
    },
  };
}
