// Debian's dockerd (package docker.io), started by the test as its own foreground process: data
// root, exec root, pid file and socket in a temp dir, so it shares nothing with a Docker the host
// may run, and stopped at the end. Nothing outside the temp dir is changed, as far as dockerd
// allows (see KEPT_OUTSIDE): no iptables rules (--iptables=false), no FORWARD policy or
// ip_forward (--ip-forward=false), no docker0 bridge (--bridge=none). User-defined networks still
// get a bridge of their own, removed with the network; published ports go through docker-proxy.
// Containers therefore reach each other and the host reaches published ports, but containers
// have no way out: a build that downloads (npm ci) uses the host's network (`--network host`).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../helpers/process.js';

/** Debian's docker.io client, the same version as its dockerd (another `docker` earlier on PATH may not be). */
export const DOCKER_CLI = '/usr/bin/docker';
const DOCKERD = '/usr/sbin/dockerd';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 60_000;

/**
 * What dockerd 20.10 writes outside its roots whatever it is told: its trust key in /etc/docker,
 * and runtime directories (plugins, containerd's shim sockets) under /run. Each one that did not
 * exist before the daemon started is removed after it stopped. Files before their directories.
 */
const KEPT_OUTSIDE = ['/etc/docker/key.json', '/etc/docker', '/run/docker/plugins', '/run/docker', '/run/containerd/s', '/run/containerd'];

export interface DockerDaemon {
  /** The environment for the docker client and docker-compose: DOCKER_HOST names this daemon's socket. */
  readonly env: NodeJS.ProcessEnv;
  /** `docker version` and `docker info` as this daemon answers them, for the test's output. */
  readonly description: string;
  /** SIGTERM, wait for the exit, check nothing is left mounted, remove what it left. */
  stop(): Promise<void>;
}

export async function startDockerDaemon(): Promise<DockerDaemon> {
  for (const program of [DOCKERD, DOCKER_CLI]) {
    if (!existsSync(program)) throw new Error(`${program} is missing: .ci/run installs it (apt-get install docker.io)`);
  }
  const existedBefore = new Set(KEPT_OUTSIDE.filter((path) => existsSync(path)));
  const dir = await tempDir('gatehouse-docker-');
  const socket = join(dir, 'docker.sock');
  // An empty configuration file: /etc/docker/daemon.json, if the host has one, is not ours.
  await writeFile(join(dir, 'daemon.json'), '{}\n');
  const child = spawn(DOCKERD, [
    '--config-file', join(dir, 'daemon.json'),
    '--data-root', join(dir, 'data'),
    '--exec-root', join(dir, 'exec'),
    '--pidfile', join(dir, 'dockerd.pid'),
    '--host', `unix://${socket}`,
    '--iptables=false', '--ip-forward=false', '--ip-masq=false', '--bridge=none',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const append = (chunk: Buffer): void => {
    log = (log + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.once('error', (error) => append(Buffer.from(`spawn error: ${error.message}\n`)));
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: `unix://${socket}` };

  const stop = async (): Promise<void> => {
    await stopChild(child, exited, () => log);
    // dockerd 20.10 leaves its default network namespace bind-mounted at exec/netns/default.
    for (const point of mountsUnder(dir).reverse()) spawnSync('umount', [point]);
    const mounted = mountsUnder(dir);
    if (mounted.length > 0) throw new Error(`dockerd left these mounted under ${dir} (not removed): ${mounted.join(', ')}\n${log}`);
    for (const path of KEPT_OUTSIDE) {
      if (!existedBefore.has(path)) await rm(path, { recursive: true, force: true });
    }
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  let version = '';
  while (version === '') {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`dockerd exited (${child.exitCode ?? child.signalCode}) before answering:\n${log}`);
    if (Date.now() > deadline) {
      await stop().catch(() => undefined);
      throw new Error(`dockerd did not answer on ${socket} within ${START_TIMEOUT_MS} ms:\n${log}`);
    }
    const answer = spawnSync(DOCKER_CLI, ['version', '--format', 'docker client {{.Client.Version}}, daemon {{.Server.Version}}'], { env, encoding: 'utf8', timeout: 10_000 });
    if (answer.status === 0) version = answer.stdout.trim();
    else await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const info = spawnSync(DOCKER_CLI, ['info', '--format', 'storage driver {{.Driver}}, cgroup {{.CgroupVersion}} ({{.CgroupDriver}}), kernel {{.KernelVersion}}'], { env, encoding: 'utf8', timeout: 10_000 });
  return { env, description: `${version}; ${info.stdout.trim()}; started by the test with --iptables=false --ip-forward=false --bridge=none`, stop };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, log: () => string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
  });
  const result = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`dockerd did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM (killed):\n${log()}`);
  }
}

/** Mount points at or under `dir` (/proc/self/mountinfo field 5; octal escapes as the kernel writes them). */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}
